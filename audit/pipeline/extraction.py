"""Claim extraction (docs/SPEC_NOTES.md#claims): answer text -> ClaimDraft list.

Deterministic: the same text always gives the same claims, ids c1, c2, … in reading order.
1. ``split_sentences`` — segmentation that survives abbreviations (e.g., Dr., U.S.), decimals
   (3.5), list items, markdown (headings, bullets, emphasis) and citation markers.
2. ``is_assertion`` — leaves out questions, marked hypotheticals, "I think" opinions, bare
   connectors, greetings/acknowledgements and meta statements about the response.
3. ``decompose`` — splits coordinated facts ("X, and Y" / "X; Y") into stand-alone claims when
   each part has its own verb and the sentence has at least ATOMIC_MIN_WORDS words.
4. ``claim_type`` and ``importance`` (docs/SPEC_NOTES.md#claims) and the citation anchors it names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from audit.constants import ATOMIC_MIN_WORDS, IMPORTANCE_CRITICAL, IMPORTANCE_MATERIAL, IMPORTANCE_MINOR
from audit.pipeline.text import content_stems, normalize
from audit.pipeline.types import ClaimDraft

# --- citation anchors -------------------------------------------------------------------------
# [cite:X]  [1]  [1, 2]  [1][2]  [Source: 1]  (Source: 1)  [Arxiv]  [Arxiv-2]
# Linear time on any input: every quantifier is bounded and no part may hold the bracket that opens
# the next marker, so a marker that never closes is given up within a few hundred characters
# (an unbounded "[^\]\s]+" read "[cite:" x 20,000 to its end once per "[cite:").
_CITE_LIST = r"[\w.\-]{1,80}+(?:\s{0,8}+,\s{0,8}+[\w.\-]{1,80}+){0,40}+"
CITATION_RE = re.compile(
    r"\[\s{0,8}+cite\s{0,8}+:\s{0,8}+(?P<cite>[^\[\]\s]{1,120}+)\s{0,8}+\]"
    rf"|\[\s{{0,8}}+(?:source|src|ref)\s{{0,8}}+:?\s{{0,8}}+(?P<src>{_CITE_LIST})\s{{0,8}}+\]"
    rf"|\(\s{{0,8}}+(?:source|src|ref)\s{{0,8}}+:?\s{{0,8}}+(?P<psrc>{_CITE_LIST})\s{{0,8}}+\)"
    r"|\[\s{0,8}+(?P<num>\d{1,3}+(?:\s{0,8}+[,\u2013-]\s{0,8}+\d{1,3}+){0,60}+)\s{0,8}+\]"
    r"|\[(?P<key>[A-Z][A-Za-z0-9]{1,30}+(?:-\d{1,6}+)?)\](?!\()",
    re.IGNORECASE,
)


def citation_anchors(text: str) -> tuple[str, ...]:
    """The anchors a text cites, in order, without duplicates: ("1", "2", "cite:ab12", "Arxiv")."""
    found: dict[str, None] = {}
    for m in CITATION_RE.finditer(text):
        if m.group("cite"):
            values = ["cite:" + m.group("cite")]
        elif m.group("key"):
            values = [m.group("key")]
        else:
            raw = m.group("src") or m.group("psrc") or m.group("num")
            values = []
            for part in (piece.strip() for piece in raw.split(",")):
                rng = _NUMBER_RANGE_RE.fullmatch(part)
                if rng and int(rng.group(2)) - int(rng.group(1)) < 50:
                    values += [str(i) for i in range(int(rng.group(1)), int(rng.group(2)) + 1)]
                elif part:
                    values.append(part)
        found.update(dict.fromkeys(values))
    return tuple(found)


def citations_of(answer_text: str, contexts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the passages an answer cites, in citation order: anchors ``[1]`` (1-based position
    or id), ``[cite:ID]`` and ``[Key]`` matched against the contexts' ids; unknown anchors are
    kept with ``"id": null`` so a front end can show a dangling citation."""
    by_id = {str(c.get("id")): c for c in contexts}
    by_key = {str(a).lower(): c for c in contexts for a in c.get("anchors") or ()}  # drafted keys: [Arxiv]
    found = []
    for anchor in citation_anchors(answer_text):
        key = anchor[5:] if anchor.startswith("cite:") else anchor
        context = by_id.get(key) or by_key.get(key.lower())
        if context is None and key.isdigit() and 1 <= int(key) <= len(contexts):
            context = contexts[int(key) - 1]
        found.append(
            {
                "anchor": anchor,
                "id": None if context is None else str(context.get("id")),
                "title": "" if context is None else context.get("title", ""),
                "uri": "" if context is None else context.get("uri", ""),
            }
        )
    return found


_NUMBER_RANGE_RE = re.compile(r"(?<!\d)(\d+)\s*+[\u2013-]\s*+(\d+)")
# Linear time on any input: a run of spaces is matched from its first character only (the
# lookbehind), never again from each of its characters (docs/ARCHITECTURE.md, "Tenancy and hardening").
SPACE_BEFORE_PUNCT_RE = re.compile(r"(?<!\s)\s+([.,;:!?])")
_SPACES_RE = re.compile(r"\s{2,}")


def strip_citations(text: str) -> str:
    text = CITATION_RE.sub("", text)
    text = SPACE_BEFORE_PUNCT_RE.sub(r"\1", text)
    return _SPACES_RE.sub(" ", text).strip()


# --- sentence segmentation ------------------------------------------------------------------
ABBREVIATIONS = frozenset(
    """
mr mrs ms dr prof sr jr st vs etc al fig figs eq eqs no nos vol vols pp ed eds approx dept est
inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec e.g i.e cf ca resp mt gen gov
sen rep u.s u.k u.n ph.d m.d b.a m.a a.m p.m op art sec ch chap ref refs incl max min avg
""".split()
)

# end punctuation, then citation markers and closing quotes ("…occur?[8]\" Next…"), then a space;
# a run of end punctuation is matched from its first mark only (linear time on "....x")
_BOUNDARY_RE = re.compile(
    r"((?<![.!?])[.!?]++|\u3002|\uff01|\uff1f)((?:\[[^\[\]\s]{1,40}\])*[\"'\u201d\u2019)\]]*)(\s+|$)"
)
_LIST_ITEM_RE = re.compile(r"^[^\S\n]*(?:[-*\u2022\u25cf+]|\d{1,3}[.)]|[a-z][.)]|#{1,6})\s+", re.MULTILINE)
_MD_EMPHASIS_RE = re.compile(r"(\*\*|__|\*|`)(.+?)\1")
# a link's text and target hold no bracket of their own, so a scan never runs past the next one
_MD_LINK_RE = re.compile(r"\[([^\[\]]+)\]\((?:[^)\[\]]+)\)")
# a link that ends the sentence cites its source, as a drafted answer in the classical generation
# mode writes them ("… memory [Memory Review](https://…)."): its title is not claim text
_TRAILING_LINK_RE = re.compile(r"\[[^\[\]]+\]\([^()\[\]\s]+\)(?=\s*+[.!?]?\s*+$)")
_BLOCK_START_RE = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*\u2022\u25cf+]|\d{1,3}[.)]|#{1,6})\s)")
_LIST_NUMBER_RE = re.compile(r"(?:[-*\u2022]\s*+)?(?:\d{1,3}|[a-zA-Z]|[ivxlcIVXLC]{1,6})")
_LIST_NUMBER_MAX = 16  # characters before a full stop that can still be a list number ("- iv.")
_ACRONYM_RE = re.compile(r"(?:[a-z]\.)+[a-z]?")
_LEADING_SPACE_RE = re.compile(r"\s*")


def _leading_space_end(text: str, start: int, end: int) -> int:
    """Where the spaces at ``start`` end (``\\s*`` matches everywhere, even nothing)."""
    match = _LEADING_SPACE_RE.match(text, start, end)
    return match.end() if match is not None else start


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.")
# citation markers right after a full stop ("… rises.[2] (Source: 3)")
_TRAILING_MARKERS_RE = re.compile(
    r"(?<!\s)(?:\s*+(?:\[[^\]]{1,40}\]|\((?:source|src|ref)[^)]{0,40}\)))+", re.I
)


NEVER_SPLIT_AFTER = frozenset(
    "mr mrs ms dr prof sr jr st vs e.g i.e cf al fig figs eq no nos approx ca "
    "gen gov sen rep mt op pp vol".split()
)


def _last_token(text: str, start: int, end: int) -> str:
    """The word (letters and dots) that ends at ``end``, lower-cased, without dots at its ends.

    Walks back from ``end`` over that word only: a sentence cut at many full stops costs the
    length of its words, not the length of the sentence once per full stop.
    """
    i = end
    while i > start and text[i - 1] in _WORD_CHARS:
        i -= 1
    return text[i:end].lstrip(".").lower().rstrip(".")


def _is_abbreviation(token: str) -> bool:
    if not token:
        return False
    if token in ABBREVIATIONS:
        return True
    # single capital initials ("J. Smith") and dotted acronyms ("U.S.")
    return len(token) == 1 or bool(_ACRONYM_RE.fullmatch(token))


def _block_starts(text: str) -> list[int]:
    """Where the units of ``text`` start: blank lines, list items and headings, and a line that
    follows one without end punctuation and opens with a capital or a digit."""
    starts = [0] + [m.end() for m in _BLOCK_START_RE.finditer(text)]
    at = text.find("\n")
    while at != -1:
        before = text[at - 1 : at] if at else ""
        if before and before not in ".!?:;,":
            nxt = text[at + 1 : at + 2]
            if nxt.isupper() or nxt.isdigit():
                starts.append(at + 1)
        at = text.find("\n", at + 1)
    return sorted(set(starts))


def split_sentences_with_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (lines and list items always end one).

    Linear in the length of ``text``: every check at a candidate full stop looks at a bounded
    stretch before it (the last word, the last few characters), never at the whole sentence so far.
    """
    spans: list[tuple[int, int]] = []
    if not text:
        return spans
    block_starts = _block_starts(text)
    bounds = list(zip(block_starts, block_starts[1:] + [len(text)]))
    for b_start, b_end in bounds:
        start = _leading_space_end(text, b_start, b_end)
        for m in _BOUNDARY_RE.finditer(text, b_start, b_end):
            if m.start() < start:
                continue
            end = m.end(2)
            punct = m.group(1)
            cut = m.start()  # the sentence so far is text[start:cut]
            after = text[m.end() : m.end() + 2]
            token = _last_token(text, start, cut) if punct == "." else ""
            if (
                punct == "."
                and cut - start <= _LIST_NUMBER_MAX
                and _LIST_NUMBER_RE.fullmatch(text, start, cut)
            ):
                continue  # a list number: "1. Refunds…", "b. …", "iv. …"
            if punct == "." and token in NEVER_SPLIT_AFTER:
                continue
            if punct == "." and _is_abbreviation(token) and not after[:1].isupper():
                continue
            if (
                punct == "."
                and cut > start
                and "A" <= text[cut - 1] <= "Z"
                and (cut - 1 == start or text[cut - 2].isspace())
            ):
                continue  # initial: "J. Smith"
            if m.group(3) == "" and m.end() < b_end:
                continue
            if punct[-1] in "?!" and ('"' in m.group(2) or "\u201d" in m.group(2)) and after[:1].islower():
                continue  # a quoted question inside a sentence: 'such as "Why?" or "How?"'
            if after[:1].islower() and punct == "." and _is_abbreviation(token):
                continue
            # citation markers right after the full stop belong to this sentence
            tail = _TRAILING_MARKERS_RE.match(text, end, b_end)
            if tail:
                end = tail.end()
            if end > start:
                spans.append(_trim(text, start, end))
            start = _leading_space_end(text, end, b_end)
        if start < b_end:
            spans.append(_trim(text, start, b_end))
    return [s for s in spans if s[1] > s[0]]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_sentences(text: str) -> list[str]:
    return list(_split_sentences(text))


@lru_cache(maxsize=20_000)
def _split_sentences(text: str) -> tuple[str, ...]:
    """Cached: retrieval, the judge and CoVe split the same passages again and again."""
    return tuple(text[a:b] for a, b in split_sentences_with_spans(text))


def clean_sentence(sentence: str) -> str:
    s = _LIST_ITEM_RE.sub("", sentence.strip())
    while (trimmed := _TRAILING_LINK_RE.sub("", s, count=1)) != s:  # one link at a time, from the end
        s = trimmed
    s = _MD_LINK_RE.sub(r"\1", s)
    s = _MD_EMPHASIS_RE.sub(r"\2", s)
    s = strip_citations(s)
    return re.sub(r"\s+", " ", s).strip(" \t-*>#")


# --- assertion filter ---------------------------------------------------------------------
def _starts_with(phrases: str, tail: str = r"\b") -> re.Pattern[str]:
    """A case-insensitive regex matching text that starts with one of the '|'-separated phrases."""
    return re.compile(r"^(?:" + "|".join(p.strip() for p in phrases.split("|")) + ")" + tail, re.I)


_OPINION_RE = _starts_with(
    r"i think|i believe|i feel|i guess|in my (?:view|opinion)|personally|"
    r"it seems to me|i would (?:say|argue)|imho"
)
_HYPOTHETICAL_RE = _starts_with(
    r"hypothetically|suppose|supposing|imagine|let'?s say|assuming|what if|"
    r"if (?:we|you|one) (?:were|imagine)"
)
_GREETING_RE = _starts_with(
    r"thank(?:s| you)|you'?re welcome|hello|hi|hey|dear|sure|of course|certainly|"
    r"great question|good question|i understand|i hope this helps|hope this helps|"
    r"i'?m sorry|sorry|glad to help|happy to help|ok(?:ay)?"
)
_META_RE = _starts_with(
    r"in (?:this|my) (?:answer|response|summary)|(?:this|my) (?:answer|response)|"
    r"here (?:is|are)|below (?:is|are)|as (?:mentioned|noted|discussed) (?:above|earlier)|"
    r"let me|i will|i'?ll|i can|i cannot|i can'?t|i don'?t know|to summari[sz]e|"
    r"in summary|in conclusion|to conclude|overall,? (?:this|the answer)|"
    r"feel free|please (?:note|let me know|consult)"
)
CONNECTORS = (
    "therefore|however|thus|hence|moreover|furthermore|in addition|additionally|also|"
    "consequently|meanwhile|nevertheless|nonetheless"
)
_CONNECTOR_ONLY_RE = _starts_with(
    CONNECTORS + "|so|but|and|for example|for instance|in other words|that said", r"[\s,.:;!]*$"
)
_LEADING_CONNECTOR_RE = _starts_with(
    CONNECTORS + "|in fact|indeed|notably|importantly|similarly|likewise", r"\s*,\s*"
)
_VERB_HINT_RE = re.compile(
    r"\b(?:is|are|was|were|be|been|being|has|have|had|do|does|did|can|could|will|would|shall|should|"
    r"may|might|must|[a-z]{2,}(?:s|ed|es))\b",
    re.I,
)


def is_assertion(sentence: str) -> bool:
    s = sentence.strip()
    if not s:
        return False
    if s.endswith(("?", "\uff1f")):
        return False
    if _CONNECTOR_ONLY_RE.match(s) or _GREETING_RE.match(s) or _META_RE.match(s):
        return False
    if _OPINION_RE.match(s) or _HYPOTHETICAL_RE.match(s):
        return False
    words = re.findall(r"[^\W_]+", s)
    if len(words) < 3:
        return False
    if s.endswith(":") and len(words) < 12:
        return False  # a heading or a lead-in to a list
    has_latin = re.search(r"[A-Za-z]", s) is not None
    if has_latin and not _VERB_HINT_RE.search(s) and not re.search(r"\d", s) and len(words) < 6:
        return False  # a fragment or a heading
    return True


# --- atomic decomposition (docs/SPEC_NOTES.md#claims) ----------------------------------------------
_SPLIT_RE = re.compile(r";\s+|,\s+(?:and|but|while|whereas)\s+|(?<!\s)\s+(?:but|whereas)\s+", re.I)
_SUBJECT_PRONOUN_RE = re.compile(r"^(?:it|they|this|these|he|she)\b", re.I)


def _has_verb(part: str) -> bool:
    return bool(_VERB_HINT_RE.search(part))


def _subject_of(sentence: str) -> str:
    """The words before the first verb: a crude subject to stand in for a pronoun."""
    m = re.search(
        r"\b(?:is|are|was|were|has|have|had|can|could|will|would|should|may|might|must)\b", sentence
    )
    head = sentence[: m.start()].strip() if m else ""
    return head if 0 < len(head.split()) <= 8 else ""


def decompose(sentence: str) -> list[str]:
    """Split a compound sentence into stand-alone atomic claims (unchanged when already atomic)."""
    if len(sentence.split()) < ATOMIC_MIN_WORDS:
        return [sentence]
    parts = [p.strip(" ,;") for p in _SPLIT_RE.split(sentence) if p and p.strip(" ,;")]
    if len(parts) < 2 or any(len(p.split()) < 4 or not _has_verb(p) for p in parts):
        return [sentence]
    subject = _subject_of(parts[0])
    out = []
    for i, part in enumerate(parts):
        if i and subject and _SUBJECT_PRONOUN_RE.match(part):
            part = _SUBJECT_PRONOUN_RE.sub(subject, part, count=1)
        part = part[0].upper() + part[1:]
        if not part.endswith((".", "!", "%")):
            part += "."
        out.append(part)
    return out


# --- type and importance (docs/SPEC_NOTES.md#claims) ---------------------------------------------
NUMBER_RE = re.compile(
    r"(?<![\w.])[-+]?[$€£¥]?\d[\d,]*(?:\.\d+)?\s*(?:%|percent|[kmbt]n?\b|million|billion|"
    r"thousand|trillion)?",
    re.I,
)
_YEAR_OR_DATE_RE = re.compile(
    r"\b(?:1[5-9]\d\d|20\d\d)\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\.? \d{1,2}\b",
    re.I,
)
_POLICY_RE = re.compile(
    r"\b(?:must|shall|should|required?|requirements?|mandatory|prohibited|"
    r"not (?:allowed|permitted)|allowed|permitted|policy|policies|rules?|regulations?|"
    r"compliance|obliged|obligat\w+|need to|has to|have to)\b",
    re.I,
)
_DEFINITION_RE = re.compile(
    r"^(?:an? |the )?[\w' -]{1,60}?\b(?:is defined as|refers to|is called|"
    r"means|is known as|denotes|is a term for|stands for)\b|^[\w' -]{1,40}\b(?:is|are) "
    r"(?:an?|the) (?:type|kind|form|class|measure|process|term|method) of\b",
    re.I,
)
_IMPORTANCE_MARKERS_RE = re.compile(
    r"\b(?:always|never|only|all|none|every|critical|essential|"
    r"important|significant(?:ly)?|key|primary|main|major|most|least|"
    r"first|best|worst|required|guarantee\w*|proven|cause[sd]?|leads? to|"
    r"increases?|decreases?|reduces?|prevents?)\b",
    re.I,
)


def has_number(text: str) -> bool:
    return bool(re.search(r"\d", text))


def claim_type(text: str) -> str:
    if has_number(text) and (NUMBER_RE.search(text) or _YEAR_OR_DATE_RE.search(text)):
        return "numeric"
    if _DEFINITION_RE.search(text):
        return "definition"
    if _POLICY_RE.search(text):
        return "policy"
    return "fact"


def is_direct_answer(text: str, query: str, threshold: float = 0.5) -> bool:
    q = set(content_stems(query))
    if not q:
        return False
    c = set(content_stems(text))
    return len(q & c) / len(q) >= threshold


def importance(text: str, query: str = "", *, ctype: str | None = None, first: bool = False) -> str:
    ctype = ctype or claim_type(text)
    if ctype == "numeric":
        return IMPORTANCE_CRITICAL
    if query and is_direct_answer(text, query):
        return IMPORTANCE_CRITICAL
    if first and query:
        return IMPORTANCE_CRITICAL  # the opening statement usually answers the question
    if ctype == "policy" or _IMPORTANCE_MARKERS_RE.search(text):
        return IMPORTANCE_MATERIAL
    if ctype == "definition":
        return IMPORTANCE_MINOR
    return IMPORTANCE_MATERIAL if len(text.split()) >= 12 else IMPORTANCE_MINOR


# --- entry point ----------------------------------------------------------------------------
def extract_claims(
    answer: str, query: str = "", *, decompose_compound: bool = True, limit: int | None = None
) -> list[ClaimDraft]:
    """Claims of ``answer`` in reading order with ids c1, c2, … (deterministic). With ``limit``,
    extraction stops once it has found more than ``limit`` claims (the caller refuses the answer:
    40,000 tiny sentences cost 5.2 s of CPU before the refusal when the whole answer was read)."""
    text = normalize(answer or "")
    claims: list[ClaimDraft] = []
    first = True
    for start, end in split_sentences_with_spans(text):
        if limit is not None and len(claims) > limit:
            break
        raw = text[start:end]
        anchors = citation_anchors(raw)
        sentence = clean_sentence(raw)
        if not is_assertion(sentence):
            continue
        parts = decompose(sentence) if decompose_compound else [sentence]
        for part in parts:
            part = _LEADING_CONNECTOR_RE.sub("", part)
            part = part[:1].upper() + part[1:]
            ctype = claim_type(part)
            claims.append(
                ClaimDraft(
                    claim_id=f"c{len(claims) + 1}",
                    text=part,
                    span=(start, end),
                    type=ctype,
                    importance=importance(part, query, ctype=ctype, first=first),
                    citations=anchors,
                    sentence=sentence,
                )
            )
        first = False
    return claims


def claims_json(answer: str, query: str = "") -> list[dict[str, Any]]:
    """The deterministic JSON form of docs/SPEC_NOTES.md#claims: [{"claim_id": "c1", "text": …}, …]."""
    return [c.as_json() for c in extract_claims(answer, query)]
