"""Numbers in text, normalised (docs/SPEC_NOTES.md#numeric-checks): currency, percentages, counts, T/B/M/K multipliers,
written scales (million, billion), unit conversions of scale ($1,000M == $1B) and years."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

_SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "tn": 1e12,
    "trillion": 1e12,
    "lakh": 1e5,
    "crore": 1e7,
}
_WORD_NUMBERS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
    "half": 0.5,
    "twice": 2,
    "double": 2,
    "triple": 3,
}
NUM_RE = re.compile(
    r"(?P<cur>[$€£¥])?\s?(?P<num>(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.,])\d+(?:\.\d+)?)"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|lakh|crore|bn|mn|tn|[kmbt])\b)?"
    r"(?:\s?(?P<pct>%|percent|per cent|percentage points?))?",
    re.I,
)
WORD_NUM_RE = re.compile(r"\b(" + "|".join(_WORD_NUMBERS) + r")\b", re.I)
# counts spelled out before the word they count ("three failed sign-in attempts", "two pharmacists"):
# "one" is left out (a pronoun as often as a number), and so are the multipliers ("half", "twice")
SPELLED_COUNTS = {
    w: v
    for w, v in _WORD_NUMBERS.items()
    if isinstance(v, int) and 2 <= v <= 90 and w not in ("double", "triple", "twice")
}
SPELLED_RE = re.compile(
    r"(?<![\w-])(?:("
    + "|".join(k for k, v in SPELLED_COUNTS.items() if v >= 20)
    + r")-)?("
    + "|".join(SPELLED_COUNTS)
    + r")(?![\w-])",
    re.I,
)
APPROX_RE = re.compile(
    r"\b(?:about|around|approximately|approx\.?|roughly|nearly|almost|some|"
    r"close to|estimated|an estimated|over|more than|less than|under|up to|~)\s*$",
    re.I,
)


@dataclass(frozen=True)
class Quantity:
    raw: str
    value: float
    kind: str  # "percent" | "currency" | "year" | "count"
    approx: bool = False
    unit: str = ""  # the word after a count ("2 business days" -> "business"), normalised
    label: str = ""  # the word before it ("Level 3" -> "level"), normalised
    written: bool = False  # spelled out ("three failed attempts")


_WORD_RE = re.compile(r"[A-Za-z][A-Za-z-]*")
_NOT_UNITS = {
    "the",
    "a",
    "an",
    "of",
    "and",
    "or",
    "to",
    "in",
    "on",
    "at",
    "for",
    "by",
    "with",
    "is",
    "are",
    "was",
    "were",
    "be",
    "has",
    "have",
    "had",
    "than",
    "as",
    "from",
    "per",
    "that",
    "which",
}


def _norm_word(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _next_word(text: str, end: int) -> str:
    """The word right after ``end`` (one space at most between), read without copying the rest of the text."""
    at = end + 1 if text[end : end + 1].isspace() else end
    m = _WORD_RE.match(text, at) if not text[at : at + 1].isspace() else None
    word = m.group(0) if m else ""
    return "" if word.lower() in _NOT_UNITS else _norm_word(word)


# the word (letters and hyphens) before the last space, read from the start of its run only
_PREV_WORD_RE = re.compile(r"(?<![A-Za-z-])-*+([A-Za-z][A-Za-z-]*)\s$")


def _prev_word(text: str, start: int) -> str:
    m = _PREV_WORD_RE.search(text[max(0, start - 30) : start])
    word = m.group(1) if m else ""
    return "" if word.lower() in _NOT_UNITS else _norm_word(word)


def same_quantity(a: Quantity, b: Quantity) -> bool:
    """Whether two counts can denote the same thing: when both name a unit, the same unit (or label).

    "2 business days" is not "Level 2 reviewers"; "3 trials" may be "3 trials" or a bare "3".
    Percentages, currency and years carry their unit in their kind.
    """
    if a.kind != "count" or b.kind != "count":
        return True
    if not (a.unit and b.unit):
        return True  # one says nothing of what it counts
    return a.unit == b.unit or bool(a.label and a.label == b.label)


def extract_quantities(text: str, *, words: bool = False) -> list[Quantity]:
    """The quantities written in ``text`` (digits; with ``words``, number words too), in order."""
    return list(_extract_quantities(text or "", words))


@lru_cache(maxsize=20_000)
def _extract_quantities(text: str, words: bool) -> tuple[Quantity, ...]:
    """Cached: the judge, the numeric, structural and conflict checks read the same sentences per claim."""
    out: list[Quantity] = []
    for m in NUM_RE.finditer(text or ""):
        try:
            value = float(m.group("num").replace(",", ""))
        except ValueError:
            continue
        scale = (m.group("scale") or "").lower()
        if scale:
            # "5 m" after a number could be metres: only treat single letters as scale when glued
            if len(scale) == 1 and m.group(0).rstrip()[-2:-1].isspace():
                scale = ""
            value *= _SCALE.get(scale, 1.0)
        if m.group("pct"):
            kind = "percent"
        elif m.group("cur"):
            kind = "currency"
        elif (
            not scale
            and "." not in m.group("num")
            and "," not in m.group("num")
            and 1500 <= value <= 2100
            and len(m.group("num")) == 4
        ):
            kind = "year"
        else:
            kind = "count"
        approx = bool(APPROX_RE.search(text[max(0, m.start() - 20) : m.start()]))
        unit = _next_word(text, m.end()) if kind == "count" else ""
        label = _prev_word(text, m.start("num")) if kind == "count" else ""
        out.append(Quantity(m.group(0).strip(), value, kind, approx, unit, label))
    if words:
        for m in WORD_NUM_RE.finditer(text or ""):
            out.append(Quantity(m.group(0), float(_WORD_NUMBERS[m.group(1).lower()]), "count"))
    return tuple(out)


def spelled_counts(text: str) -> list[Quantity]:
    """Counts written as words and followed by the word they count: "three failed sign-in attempts"
    -> 3 (unit "failed"), "twenty-five days" -> 25. A spelled number with no counted word after it
    ("the two of them") is left out."""
    return list(_spelled_counts(text or ""))


@lru_cache(maxsize=20_000)
def _spelled_counts(text: str) -> tuple[Quantity, ...]:
    out = []
    for m in SPELLED_RE.finditer(text or ""):
        value = SPELLED_COUNTS[m.group(2).lower()] + (SPELLED_COUNTS[m.group(1).lower()] if m.group(1) else 0)
        unit = _next_word(text, m.end())
        if unit and not unit[0].isdigit():
            out.append(
                Quantity(
                    m.group(0),
                    float(value),
                    "count",
                    bool(APPROX_RE.search(text[max(0, m.start() - 20) : m.start()])),
                    unit,
                    _prev_word(text, m.start()),
                    written=True,
                )
            )
    return tuple(out)


def values_match(a: Quantity, b: Quantity, rel_tol: float, approx_tol: float) -> bool:
    if a.kind == "year" or b.kind == "year":
        return a.value == b.value
    tol = approx_tol if (a.approx or b.approx) else rel_tol
    if a.value == b.value:
        return True
    denom = max(abs(a.value), abs(b.value), 1e-9)
    if abs(a.value - b.value) / denom <= tol:
        return True
    # rounding: 3.2 vs 3.19, 25% vs 25.4%
    for digits in (0, 1, 2):
        if round(a.value, digits) == round(b.value, digits) and (
            _decimals(a.raw) == digits or _decimals(b.raw) == digits
        ):
            return True
    return False


@lru_cache(maxsize=20_000)
def _passage_quantities(text: str) -> tuple[Quantity, ...]:
    # the same KB passages come back for many claims of a batch (nightly: 1.7 s per 1,000 claims re-parsed)
    return tuple(extract_quantities(text))


def shares_number(quantities: Sequence[Quantity], text: str) -> bool:
    """Whether ``text`` states one of ``quantities`` (``values_match`` within 2 %, 10 % for an
    approximate one): retrieval's numeric boost for a passage that shares a number with a claim."""
    if not quantities:
        return False
    return any(values_match(a, b, 0.02, 0.1) for a in quantities for b in _passage_quantities(text))


def _decimals(raw: str) -> int:
    m = re.search(r"\.(\d+)", raw)
    return len(m.group(1)) if m else 0


# a range starts at the first digit of a number (never inside one) and its spaces are matched once
RANGE_RE = re.compile(
    r"(?:\bbetween\s+)?(?P<cur>[$€£¥])?(?<!\d)(?P<lo>\d+(?:\.\d+)?)\s*+(?P<pct1>%|percent|per cent)?\s*+"
    r"(?:to|and|-|–|—)\s*[$€£¥]?(?P<hi>\d+(?:\.\d+)?)\s?(?P<scale>thousand|million|billion|trillion)?\s*"
    r"(?P<pct>%|percent|per cent)?",
    re.I,
)


@dataclass(frozen=True)
class Range:
    raw: str
    low: float
    high: float
    kind: str  # as Quantity.kind


def extract_ranges(text: str) -> list[Range]:
    """Stated ranges: "60 to 80 percent", "between 10 and 20", "5-7%", "$3–4 million"."""
    out = []
    for m in RANGE_RE.finditer(text or ""):
        lo, hi = float(m.group("lo")), float(m.group("hi"))
        if lo >= hi:
            continue
        scale = _SCALE.get((m.group("scale") or "").lower(), 1.0)
        kind = "percent" if m.group("pct") or m.group("pct1") else "currency" if m.group("cur") else "count"
        if kind == "count" and 1500 <= lo <= 2100 and 1500 <= hi <= 2100 and "." not in m.group(0):
            kind = "year"
        out.append(Range(m.group(0).strip(), lo * scale, hi * scale, kind))
    return out


def within_range(q: Quantity, r: Range, approx_tol: float) -> bool:
    """A value inside a stated range of the same kind (an "about" value within tolerance of it)."""
    if q.kind != r.kind:
        return False
    tol = approx_tol if q.approx else 0.0
    return r.low * (1 - tol) <= q.value <= r.high * (1 + tol)
