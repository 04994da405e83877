"""The sentences of an answer as the editor sees them: spans, citation markers and anchors, softening and
the keys that recognise a claim again after an edit."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from audit.constants import SOFTENING_HEDGE, SOFTENING_PARENTHETICAL, SOFTENING_QUALIFY, UNSUPPORTED_QUALIFIER
from audit.pipeline.extraction import CITATION_RE, SPACE_BEFORE_PUNCT_RE, citation_anchors
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.revision.model import Edit, Strategy
from audit.pipeline.text import STOPWORDS
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, Passage

# --- 3. deterministic rewriting of the claim sentences --------------------------------------
_PREFIX_RE = re.compile(r"^\s*(?:(?:[-*\u2022\u25cf+]|\d{1,3}[.)]|#{1,6})\s+)?")
# The trail of a sentence (its citation markers, final punctuation and closing quotes): the
# longest end of the text made only of spaces, "[marker]" (1-60 characters), "(source …)"
# (up to 40), runs of . ! ? ; : and runs of closing quotes followed by . ! ? or the end (or a
# final line break).
# It is matched on the reversed text from its start, once: searching the text for where the
# trail begins would try every position and cost the square of the length.
_TRAIL_REVERSED_RE = re.compile(
    r"\s*+(?:(?:\][^\[\]]{1,60}\[|\)[^)]{0,40}(?<!\w)(?:ecruos|crs|fer)\(|[.!?;:\u3002]++"
    r"|(?:(?<=[.!?])|^|(?<=^\n))[\"'\u201d\u2019]++)\s*+)*+",
    re.I,
)


def trail_of(text: str) -> str:
    """The trail of ``text`` (see ``_TRAIL_REVERSED_RE``): "" when it ends with a word."""
    m = _TRAIL_REVERSED_RE.match(text[::-1])  # the pattern matches the empty string: never None
    return m.group(0)[::-1] if m else ""


_AUX_WORDS = "is|are|was|were|has|have|had|can|could|will|would|should|must|may|might|does|do|did"
_AUX_RE = re.compile(rf"\b(?:{_AUX_WORDS})\b(?! not\b)")
_QUOTED_RE = re.compile(r"\"[^\"]*\"|\u201c[^\u201c\u201d]*\u201d")  # an opening quote ends a scan
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_FIRST_WORD_RE = re.compile(r"(?<!\s)\s*+([^\W\d_]+)")
_MONTH_RE = re.compile(r"\b(" + "|".join(m.capitalize() for m in _MONTHS) + r")\b")
DISPUTED_QUALIFIER = "(disputed by the provided documents)"
PROTECTED_CONTAINMENT = 0.8  # share of a once-supported claim's content words a later claim must keep
_SOFTENED_MARKERS = (
    SOFTENING_HEDGE,
    SOFTENING_QUALIFY,
    SOFTENING_PARENTHETICAL,
    UNSUPPORTED_QUALIFIER,
    DISPUTED_QUALIFIER,
)


@dataclass
class _Sentence:
    """A sentence cut into list prefix, body and trail (citation markers and final punctuation)."""

    prefix: str
    body: str
    trail: str

    @classmethod
    def parse(cls, raw: str) -> "_Sentence":
        m = _PREFIX_RE.match(raw)  # the pattern matches the empty string: never None
        prefix = m.group(0) if m else ""
        rest = raw[len(prefix) :]
        trail = trail_of(rest)
        body = rest[: len(rest) - len(trail)]
        if not body.strip():  # a sentence made only of markers: keep it whole as body
            return cls(prefix, rest, "")
        return cls(prefix, body, trail)

    @property
    def text(self) -> str:
        return self.prefix + self.body + self.trail

    def anchors(self) -> tuple[str, ...]:
        return citation_anchors(self.body + self.trail)


def _decap(body: str) -> str | None:
    """The body with its first word lower-cased, or None when that word may be a name."""
    m = _FIRST_WORD_RE.match(body)
    if not m:
        return None
    word = m.group(1)
    if word.lower() in STOPWORDS and not word.isupper():
        i = m.start(1)
        return body[:i] + body[i].lower() + body[i + 1 :]
    return body if word.islower() else None


def _cap(body: str) -> str:
    m = re.search(r"[^\W\d_]", body)
    return body[: m.start()] + body[m.start()].upper() + body[m.start() + 1 :] if m else body


def soften(body: str, style: str) -> str:
    """Soften an unverified statement (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): hedge, qualify or parenthetical."""
    if style == "hedge":
        quoted = [q.span() for q in _QUOTED_RE.finditer(body)]
        # the first auxiliary outside quotation marks: a quoted question is someone's words
        m = next((a for a in _AUX_RE.finditer(body) if not any(x <= a.start() < y for x, y in quoted)), None)
        if m:
            return f"{body[: m.end()]} {SOFTENING_HEDGE}{body[m.end() :]}"
        lowered = _decap(body.lstrip())
        if lowered is not None:
            return f"{SOFTENING_HEDGE.capitalize()}, {lowered}"
    elif style == "qualify":
        lowered = _decap(body.lstrip())
        if lowered is not None:
            return f"{SOFTENING_QUALIFY} {lowered}"
    # no safe place for the phrase (the sentence may open with a name): the parenthetical form
    return f"{body.rstrip()} {SOFTENING_PARENTHETICAL}"


def unsoften(body: str) -> str:
    """Take the softening phrases of ``soften`` back out of a sentence body."""
    out = re.sub(rf"\b({_AUX_WORDS}) {SOFTENING_HEDGE}\b", r"\1", body)
    for lead in (f"{SOFTENING_HEDGE.capitalize()}, ", f"{SOFTENING_QUALIFY} "):
        if out.lstrip().startswith(lead):
            out = _cap(out.lstrip()[len(lead) :])
    return out.replace(f" {SOFTENING_PARENTHETICAL}", "")


def claim_key(text: str) -> str:
    """What a claim asserts, without what revision adds or takes away around it: citation markers,
    softening phrases and qualifiers (two texts with one key are the same claim)."""
    body = unsoften(CITATION_RE.sub(" ", text))
    for note in (UNSUPPORTED_QUALIFIER, DISPUTED_QUALIFIER):
        body = body.replace(note, " ")
    return " ".join(re.sub(r"[^\w\s]", " ", body).lower().split())


def verdicts_to_keep(result: AuditResult) -> Callable[[ClaimDraft], ClaimVerdict | None]:
    """``reuse`` for re-verifying a revised text on the same pool: a claim whose words did not
    change (only its softening, its qualifier or fewer of its citation markers) keeps the verdict
    it had, so removing a marker its judge rejected or adding a hedge never moves a label."""
    by_key: dict[str, ClaimVerdict] = {}
    for c in result.claims:
        by_key.setdefault(claim_key(c.claim.text), c)

    def reuse(draft: ClaimDraft) -> ClaimVerdict | None:
        prev = by_key.get(claim_key(draft.text))
        if prev is None or not set(draft.citations) <= set(prev.claim.citations):
            return None
        return prev

    return reuse


def _already_softened(text: str) -> bool:
    low = text.lower()
    return any(marker.lower() in low for marker in _SOFTENED_MARKERS)


def marker_for(passage: Passage) -> str:
    """The citation marker that names ``passage``: its first anchor, its "[n]" header, or its id."""
    header = re.match(r"^\s*\[(\d{1,3})\]", passage.text)
    # A request passage with a numeric id ("1") is what "[1]" names: reuse that, not "[cite:1]".
    fallback = passage.id if passage.id.isdigit() else f"cite:{passage.id}"
    anchor = passage.anchors[0] if passage.anchors else header.group(1) if header else fallback
    if anchor.isdigit():
        return f"[{anchor}]"
    if anchor.startswith("cite:"):
        return f"[{anchor}]"
    if re.fullmatch(r"[A-Z][A-Za-z0-9]{1,30}(?:-\d+)?", anchor):
        return f"[{anchor}]"
    return f"[cite:{anchor}]"


def _rewrite_markers(text: str, mapping: Callable[[str], list[str]]) -> str:
    """Rewrite every citation marker of ``text``: each anchor becomes ``mapping(anchor)`` (maybe none)."""

    def repl(m: re.Match[str]) -> str:
        anchors = citation_anchors(m.group(0))
        new: list[str] = []
        for a in anchors:
            for b in mapping(a):
                if b not in new:
                    new.append(b)
        if list(new) == list(anchors):
            return m.group(0)
        if not new:
            return ""
        if all(a.isdigit() for a in new) and m.group("num"):
            return "[" + ", ".join(new) + "]"
        return "".join(
            f"[{a}]" if (a.isdigit() or a.startswith("cite:") or m.group("key")) else f"[cite:{a}]"
            for a in new
        )

    out = CITATION_RE.sub(repl, text)
    if out == text:
        return out
    out = re.sub(r"[ \t]{2,}", " ", SPACE_BEFORE_PUNCT_RE.sub(r"\1", out))
    # a marker dropped at the end of a sentence body must not leave a space before its full stop
    return out if text[-1:].isspace() else out.rstrip()


def _add_marker(sent: _Sentence, marker: str) -> None:
    """Put ``marker`` after the sentence's last marker, or before its final punctuation."""
    trail = sent.trail
    last = None
    for m in re.finditer(r"\[[^\[\]]{1,60}\]", trail):
        last = m
    if last is not None:
        sent.trail = trail[: last.end()] + marker + trail[last.end() :]
    else:
        sent.body = sent.body.rstrip() + " " + marker
        sent.trail = trail.lstrip() if trail.strip() else trail


class _Anchors:
    """Citation anchor -> passage, resolved the way retrieval resolves them."""

    def __init__(self, pool: list[Passage]):
        self._pool, self._size, self._map = pool, len(pool), anchor_map(pool)

    def _current(self) -> dict[str, Passage]:
        if len(self._pool) != self._size:  # a passage was cited while planning: it joined the pool
            self._size, self._map = len(self._pool), anchor_map(self._pool)
        return self._map

    def __contains__(self, anchor: str) -> bool:
        return resolve_anchor(anchor, self._current()) is not None

    def __getitem__(self, anchor: str) -> Passage:
        passage = resolve_anchor(anchor, self._current())
        if passage is None:  # callers test ``anchor in self`` first
            raise KeyError(anchor)
        return passage


class _SentencePlan:
    """The chain of edits of one sentence; each step records one Edit on the sentence span."""

    def __init__(self, span: tuple[int, int], raw: str):
        self.span = span
        self.sent = _Sentence.parse(raw)
        self.removed = False
        self.edits: list[Edit] = []

    def step(
        self,
        c: ClaimVerdict,
        strategy: Strategy,
        reason: str,
        change: Callable[[_Sentence], None] | None = None,
        *,
        remove: bool = False,
        action: str = "",
        passage_id: str = "",
        details: dict[str, Any] | None = None,
    ) -> bool:
        before = self.sent.text
        if remove:
            after = ""
        else:
            if change is None:
                raise TypeError("a step that does not remove the sentence needs a change")
            change(self.sent)
            after = self.sent.text
        if after == before:
            return False
        self.edits.append(
            Edit(
                claim_id=c.claim.claim_id,
                claim_text=c.claim.text,
                strategy=str(strategy),
                span=self.span,
                before=before,
                after=after,
                reason=reason,
                action=action,
                passage_id=passage_id,
                details=details or {},
            )
        )
        self.removed = remove
        return True
