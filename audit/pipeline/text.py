"""Small text helpers shared by extraction, retrieval, index and methods (tokens, stop words)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves s t don shall may might must upon via
within without per etc e.g i.e one
""".split()
)

WORD_RE = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
NUMBER_TOKEN_RE = re.compile(r"\d")


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "")


# letters that carry no combining mark to strip but that a reader types without their accent
_FOLD_LETTERS = str.maketrans(
    {"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "ł": "l", "þ": "th", "ı": "i", "ħ": "h"}
)


def fold(text: str) -> str:
    """Text for accent- and case-blind search: 'Lømo' and 'lomo' fold alike, as 'Ångström' and 'angstrom'.

    Compatibility decomposition, combining marks dropped, case folded, then the letters that
    do not decompose (ø, æ, œ, đ, ð, ł, þ, ı, ħ) mapped to what a reader types.
    """
    decomposed = unicodedata.normalize("NFKD", text or "")
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return bare.casefold().translate(_FOLD_LETTERS)


def words(text: str) -> list[str]:
    return WORD_RE.findall(normalize(text).lower())


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """A crude suffix stripper: enough to match 'increases'/'increased', 'cells'/'cell'."""
    if len(word) <= 4 or NUMBER_TOKEN_RE.search(word):
        return word
    for suffix in (
        "ations",
        "ation",
        "ingly",
        "ings",
        "ing",
        "edly",
        "ies",
        "ied",
        "ness",
        "ments",
        "ment",
        "ers",
        "er",
        "ed",
        "es",
        "ly",
        "s",
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def content_stems(text: str) -> list[str]:
    return list(_content_stems(text))


@lru_cache(maxsize=50_000)
def _content_stems(text: str) -> tuple[str, ...]:
    """Cached: the same evidence sentences come back for every claim that retrieves them."""
    return tuple(stem(w) for w in content_words(text))


def tokenize_for_bm25(text: str) -> list[str]:
    return content_stems(text)
