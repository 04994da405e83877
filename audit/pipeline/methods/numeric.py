"""Numeric verification (docs/SPEC_NOTES.md#numeric-checks): the claim's quantities against the evidence's.

Currency, percentages, counts, T/B/M/K and written multipliers, scale conversions ($1,000M =
$1B), rounding tolerance and "about/approximately" tolerance, years. A quantity of the claim
that a relevant evidence sentence states differently (same kind, other value) is a mismatch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audit.constants import NUMERIC_MAX_CLAIM_QUANTITIES
from audit.constants import NUMERIC_RELEVANT_OVERLAP as RELEVANT_OVERLAP
from audit.pipeline.extraction import split_sentences
from audit.pipeline.methods.base import ROLE_NUMERIC, VerificationMethod, VerifyContext, register
from audit.pipeline.numbers import (
    Quantity,
    Range,
    extract_quantities,
    extract_ranges,
    same_quantity,
    spelled_counts,
    values_match,
    within_range,
)
from audit.pipeline.text import content_stems
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult


def quantities(text: str) -> list[Quantity]:
    """The quantities of a text: digits (``extract_quantities``) and counts spelled out before what
    they count (``spelled_counts``: "three failed attempts")."""
    return extract_quantities(text) + spelled_counts(text)


# long: one pass over the claim's quantities, with the counters the method reports
def compare_numbers(
    claim_text: str, evidence_texts: list[str], rel_tol: float = 0.02, approx_tol: float = 0.10
) -> dict[str, Any]:
    """{"quantities": [...], "matched": n, "mismatched": n, "absent": n, "unchecked": n, "items": [...]}

    The first NUMERIC_MAX_CLAIM_QUANTITIES quantities of the claim are compared (the same quantity
    stated twice is compared once); the rest are counted as ``unchecked``, so a claim that is a
    list of thousands of numbers costs time linear in its length and the evidence's.
    """
    every_q = quantities(claim_text)
    cq = every_q[:NUMERIC_MAX_CLAIM_QUANTITIES]
    cstems = {w for w in content_stems(claim_text) if not any(ch.isdigit() for ch in w)}
    sentences = [s for t in evidence_texts for s in split_sentences(t)]
    relevant = []
    for s in sentences:
        st = set(content_stems(s))
        overlap = len(cstems & st) / len(cstems) if cstems else 1.0
        if overlap >= RELEVANT_OVERLAP:
            relevant.append((overlap, s))
    relevant.sort(key=lambda t: -t[0])
    # the quantities of the three most relevant sentences, read once for all the claim's quantities
    nearest = [(quantities(s), s) for _, s in relevant[:3]]
    all_q = [q for t in evidence_texts for q in quantities(t)]
    evidence_words = {w for t in evidence_texts for w in content_stems(t)}
    all_ranges = [r for t in evidence_texts for r in extract_ranges(t)]
    items: list[dict[str, Any]] = []
    compared: dict[Quantity, dict[str, Any] | None] = {}
    for q in cq:
        if q not in compared:
            compared[q] = _compare_one(
                q, all_q, all_ranges, nearest, evidence_words, rel_tol=rel_tol, approx_tol=approx_tol
            )
        item = compared[q]
        if item is not None:
            items.append(dict(item))
    return {
        "matched": sum(1 for i in items if i["match"]),
        "mismatched": sum(1 for i in items if i["match_type"] == "mismatch"),
        "absent": sum(1 for i in items if i["match_type"] == "absent"),
        "unchecked": len(every_q) - len(cq),
        "items": items,
    }


def _compare_one(
    q: Quantity,
    all_q: list[Quantity],
    all_ranges: list[Range],
    nearest: list[tuple[list[Quantity], str]],
    evidence_words: set[str],
    *,
    rel_tol: float,
    approx_tol: float,
) -> dict[str, Any] | None:
    """The item of one claim quantity (None: a spelled count of something the evidence names)."""

    def rival_in(pick: Callable[[Quantity], bool], kind: str = q.kind) -> tuple[Quantity, str] | None:
        for found_q, s in nearest:
            found = [e for e in found_q if e.kind == kind and pick(e)]
            if found:
                return found[0], s
        return None

    def same_unit(e: Quantity, unit: str = q.unit) -> bool:
        return bool(unit) and e.unit == unit

    # 1. the same count of the same unit ("1 business day" for "1 business day")
    if any(same_unit(e) and values_match(q, e, rel_tol, approx_tol) for e in all_q):
        return {
            "claim_value": q.raw,
            "match_type": "exact"
            if any(same_unit(e) and e.value == q.value for e in all_q)
            else "approximate",
            "match": True,
        }
    # 2. a relevant sentence counts the same unit differently ("1 business day" for "2 business days")
    rival = rival_in(same_unit)
    if rival is None:
        # 3. the value stated anywhere in the evidence, or inside a stated range
        if any(values_match(q, e, rel_tol, approx_tol) for e in all_q):
            return {
                "claim_value": q.raw,
                "match_type": "exact" if any(e.value == q.value for e in all_q) else "approximate",
                "match": True,
            }
        span = next((r for r in all_ranges if within_range(q, r, approx_tol)), None)
        if span:
            return {
                "claim_value": q.raw,
                "evidence_value": span.raw,
                "match_type": "within_range",
                "match": True,
            }
        if q.written:
            # a spelled count is a specific only where what it counts is unstated too ("two
            # pharmacists" where no source names pharmacists); "the two groups" is no claim of number
            if not set(content_stems(q.unit)) & evidence_words:
                return {"claim_value": q.raw, "match_type": "absent", "match": False}
            return None
        # 4. a relevant sentence states a quantity of the same kind (and not of another unit)
        rival = rival_in(lambda e: same_quantity(q, e))
    if rival:
        return {
            "claim_value": q.raw,
            "evidence_value": rival[0].raw,
            "match_type": "mismatch",
            "match": False,
            "normalized_claim": q.value,
            "normalized_evidence": rival[0].value,
            "sentence": rival[1][:300],
        }
    return {"claim_value": q.raw, "match_type": "absent", "match": False}


@register
class NumericMethod(VerificationMethod):
    name = "numeric"
    label_role = ROLE_NUMERIC
    display_name = "Numeric QA verification"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        if not quantities(claim.text):
            return MethodResult(self.name, ran=False, details={"reason": "no quantity in the claim"})
        if not hits:
            return MethodResult(
                self.name, ran=True, score=0.0, verdict="not_found", details={"reason": "no evidence"}
            )
        t = ctx.thresholds
        res = compare_numbers(
            claim.text, [h.passage.text for h in hits], t.numeric_rel_tolerance, t.numeric_approx_tolerance
        )
        n = len(res["items"])
        if not n:  # only spelled numbers that count what the evidence also names: nothing to verify
            return MethodResult(self.name, ran=False, details={"reason": "no quantity to verify"})
        score = res["matched"] / n if n else None
        verdict = "contradicted" if res["mismatched"] else "supported" if res["matched"] == n else "not_found"
        return MethodResult(self.name, ran=True, score=score, verdict=verdict, details=res)
