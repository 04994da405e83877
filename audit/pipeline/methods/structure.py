"""Structural contradiction checks as a verification method (``audit.pipeline.contradiction``).

Negation mismatch, opposite predicates, entity substitution and missing named entities between a
claim and its best-aligned evidence sentence. The findings (rule, words, evidence sentence) go in
the details on the claim card; scoring turns a contradiction into REFUTED the way the numeric
override does, and a missing named entity into a confidence below the SUPPORTED threshold.
"""

from __future__ import annotations

from collections.abc import Callable

from audit.pipeline.contradiction import check
from audit.pipeline.embedding import similarity_fn
from audit.pipeline.methods.base import ROLE_STRUCTURE, VerificationMethod, VerifyContext, register
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult


def _similarity_fn(ctx: VerifyContext) -> Callable[[str, str], float]:
    return similarity_fn(getattr(ctx, "embed", None))


@register
class StructureMethod(VerificationMethod):
    name = "structure"
    label_role = ROLE_STRUCTURE
    display_name = "Structural contradiction checks"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        if not hits:
            return MethodResult(
                self.name, ran=True, score=None, verdict="not_found", details={"reason": "no evidence"}
            )
        report = check(
            claim.text,
            [(h.passage.id, h.passage.text) for h in hits],
            _similarity_fn(ctx),
            encode=getattr(ctx, "embed", None),
        )
        verdict = (
            "contradicted"
            if report.contradicted
            else "not_found"
            if report.missing_entity or report.unstated_obligation or report.unbound
            else "supported"
            if report.alignment
            else "not_found"
        )
        return MethodResult(
            self.name,
            ran=True,
            score=0.0 if report.contradicted else None,
            verdict=verdict,
            details=report.as_dict(),
        )
