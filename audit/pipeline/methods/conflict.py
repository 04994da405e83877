"""Conflicting evidence across sources (docs/SPEC_NOTES.md#labels-verdicts-and-confidence).

Two of a claim's relevant passages conflict when one supports the claim (per-passage entailment
at or above the audit threshold) while another, about as relevant, contradicts it (its
P(refuted) at or above ``refuted_threshold`` and its support far lower), or when two relevant
passages state different values for the claim's quantity. Raises the ``conflict`` risk flag.
"""

from __future__ import annotations

from audit.pipeline.methods.base import VerificationMethod, VerifyContext, register, results_for
from audit.pipeline.methods.numeric import compare_numbers
from audit.pipeline.numbers import extract_quantities
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult, Passage


def source_key(p: Passage) -> str:
    """Passages of one document (same URI, else same title) are one source: they cannot conflict."""
    return p.uri or (p.title and f"title:{p.title}") or f"id:{p.id}"


@register
class ConflictMethod(VerificationMethod):
    name = "conflict"
    display_name = "Cross-source conflict"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        if len({source_key(h.passage) for h in hits}) < 2:
            return MethodResult(self.name, ran=False, details={"reason": "fewer than two sources"})
        t = ctx.thresholds
        entail = results_for(ctx, claim).get("entailment")
        per_hit = (entail.details.get("per_hit") if entail else None) or {}
        source_of = {h.passage.id: source_key(h.passage) for h in hits}
        supporting = [pid for pid, v in per_hit.items() if v["score"] >= t.audit_score_threshold]
        contradicting = [
            pid
            for pid, v in per_hit.items()
            if v["p_refuted"] >= t.refuted_threshold and v["score"] < t.weak_threshold
        ]
        pairs = [(a, b) for a in supporting for b in contradicting if source_of.get(a) != source_of.get(b)]
        numeric_conflict = []
        if extract_quantities(claim.text):
            verdicts = {}
            for h in hits[:3]:
                res = compare_numbers(
                    claim.text, [h.passage.text], t.numeric_rel_tolerance, t.numeric_approx_tolerance
                )
                if res["items"]:
                    verdicts[h.passage.id] = (
                        "match"
                        if res["matched"] and not res["mismatched"]
                        else ("mismatch" if res["mismatched"] else "absent")
                    )
            by_verdict = {
                v: {source_of[pid] for pid, x in verdicts.items() if x == v} for v in ("match", "mismatch")
            }
            if (
                by_verdict["match"]
                and by_verdict["mismatch"]
                and by_verdict["match"] != by_verdict["mismatch"]
            ):
                numeric_conflict = sorted(verdicts.items())
        conflict = bool(pairs or numeric_conflict)
        return MethodResult(
            self.name,
            ran=True,
            score=0.0 if conflict else 1.0,
            verdict="contradicted" if conflict else None,
            details={"supporting": supporting, "contradicting": contradicting, "numeric": numeric_conflict},
            flags=["conflict"] if conflict else [],
        )
