"""Pure helpers that shape stored rows for the pages: inline claim marks, revision diffs.

No ORM and no HTTP: they take plain values (or model instances already loaded) and return
plain values, so they are tested without a database.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from audit.models.choices import LABEL_BADGES, Label


@dataclass
class Segment:
    """A stretch of answer text; ``claims`` is non-empty when the stretch is a claim's sentence."""

    text: str
    claims: list[Any] = field(default_factory=list)


def badge_for(label: str) -> tuple[str, str]:
    """Return (text, css modifier) of the badge of a label; unknown labels read as Needs Evidence."""
    try:
        return LABEL_BADGES[Label(label)]
    except ValueError:
        return LABEL_BADGES[Label.NEI]


def mark_claims(text: str, claims: Sequence[Any]) -> list[Segment]:
    """Cut ``text`` into plain stretches and claim stretches, in order.

    Each claim has ``span_start``/``span_end`` offsets into ``text``. Claims sharing a span (an
    atomic decomposition of one sentence) share one stretch. A span that overlaps an earlier one
    or falls outside the text is not marked in the text; its claim joins the previous stretch,
    or the last one, so every claim still gets its badge.
    """
    spans: dict[tuple[int, int], list[Any]] = {}
    for claim in sorted(claims, key=lambda c: (c.span_start, c.span_end)):
        spans.setdefault((claim.span_start, claim.span_end), []).append(claim)
    segments: list[Segment] = []
    orphans: list[Any] = []
    cursor = 0
    for (start, end), group in spans.items():
        if start < cursor or end > len(text) or end <= start:
            if segments and segments[-1].claims:
                segments[-1].claims.extend(group)
            else:
                orphans.extend(group)
            continue
        if start > cursor:
            segments.append(Segment(text[cursor:start]))
        segments.append(Segment(text[start:end], list(group)))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text[cursor:]))
    if orphans:
        segments.append(Segment("", orphans))
    return segments


@dataclass
class ReturnedClaim:
    """A claim as the returned (revised) text states it, for its badge: the revision's wording and
    verdict placed where that wording is in the returned text; the received claim when untouched."""

    claim: Any
    label: str
    confidence: float
    span_start: int
    span_end: int

    def __getattr__(self, name):  # pk, claim_id, metrics, evidence… of the claim card
        return getattr(self.claim, name)


def returned_claims(text: str, claims: Sequence[Any]) -> list[ReturnedClaim]:
    """The claims of the returned ``text``: each claim's revision (or the claim itself when
    untouched) where its wording is found; removed claims are left out."""
    out: list[ReturnedClaim] = []
    for claim in claims:
        revision = getattr(claim, "revision", None) or {}
        if revision.get("review", {}).get("action") == "restored_received_wording":
            revision = {}  # a reviewer brought the received wording back: the claim stands as received
        wording = revision.get("text", claim.text) if revision else claim.text
        body = (wording or "").strip().rstrip(".!?;: ")
        at = text.find(body) if body else -1
        if at < 0:
            continue
        label = (revision.get("label") or claim.label) if revision else claim.label
        confidence = revision.get("confidence") if revision and revision.get("confidence") is not None else claim.confidence
        out.append(ReturnedClaim(claim, label, confidence, at, at + len(body)))
    return out


_TOKEN = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class DiffPart:
    """A piece of a word diff: ``op`` is "equal", "insert" or "delete"."""

    op: str
    text: str


def word_diff(before: str, after: str) -> list[DiffPart]:
    """Return a word-level diff of two texts (whitespace kept, so the result reads as prose)."""
    a, b = _TOKEN.findall(before or ""), _TOKEN.findall(after or "")
    parts: list[DiffPart] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(DiffPart("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(DiffPart("delete", "".join(a[i1:i2])))
        if j2 > j1:
            parts.append(DiffPart("insert", "".join(b[j1:j2])))
    return parts


KEY_METRICS = ("faithfulness", "answer_relevance", "context_precision", "selfcheck_disagreement", "entailment", "relevance")


def key_metrics(metrics: dict | None, limit: int = 4) -> list[tuple[str, float]]:
    """Return up to ``limit`` headline metrics of a claim as (name, value), known names first."""
    metrics = metrics or {}
    numeric = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    ordered = [k for k in KEY_METRICS if k in numeric] + sorted(k for k in numeric if k not in KEY_METRICS)
    return [(k.replace("_", " "), round(numeric[k], 3)) for k in ordered[:limit]]

