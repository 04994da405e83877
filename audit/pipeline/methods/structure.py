"""Structural contradiction checks as a verification method (``audit.pipeline.contradiction``).

Negation mismatch, opposite predicates, entity substitution and missing named entities between a
claim and its best-aligned evidence sentence. The findings (rule, words, evidence sentence) go in
the details on the claim card; scoring turns a contradiction into REFUTED the way the numeric
override does, and a missing named entity into a confidence below the SUPPORTED threshold.

The role binding (``audit.pipeline.binding``, a dependency parse: the check's cost) runs only on the
claims it can change: those the methods run before it (the entailment judge, the numbers) and the
rules without it would label SUPPORTED (``scoring.label_claim`` on those results). Its findings keep a
claim below SUPPORTED or contradict it; a claim already below needs no parse to stay there. With an LLM
client in the context the LLM judge, which runs beside this method, may raise a claim, so every claim
is read. The parses of every claim to be read and of its evidence sentences are one batched pass per
answer (``binding.prefetch``), and so are those the negation check reads on the predicate
(``contradiction.prefetch_polarity``) before the checks run claim by claim. A knowledge-base
sentence's parse is read from the store ingestion wrote (``ctx.encodings``, ``parse_store.py``)
rather than parsed.
"""

from __future__ import annotations

from collections.abc import Callable

from audit.pipeline import binding, parse_store
from audit.pipeline.contradiction import StructureReport, bind_roles, check, parseable, prefetch_polarity
from audit.pipeline.embedding import similarity_fn
from audit.pipeline.methods.base import (
    ROLE_STRUCTURE,
    VerificationMethod,
    VerifyContext,
    register,
    results_for,
)
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult


def _similarity_fn(ctx: VerifyContext) -> Callable[[str, str], float]:
    return similarity_fn(getattr(ctx, "embed", None))


def _result(name: str, report: StructureReport) -> MethodResult:
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
        name,
        ran=True,
        score=0.0 if report.contradicted else None,
        verdict=verdict,
        details=report.as_dict(),
    )


BINDING_RULES = ("role_reversed", "role_mismatch", "unstated_content")


def without_binding(result: MethodResult) -> MethodResult:
    """The structure result as it would be without the role binding's findings (the binding only adds
    findings: a reversal's contradiction, an unbound flag): ``evaluate`` reports both from one run."""
    from dataclasses import replace

    findings = result.details.get("findings") or []
    if not any(f.get("rule") in BINDING_RULES for f in findings):
        return result
    report = StructureReport(
        contradicted=result.verdict == "contradicted"
        and not any(f.get("rule") == "role_reversed" for f in findings),
        missing_entity=bool(result.details.get("missing_entity")),
        unstated_obligation=bool(result.details.get("unstated_obligation")),
        alignment=float(result.details.get("alignment") or 0.0),
    )
    details = {
        **result.details,
        "contradicted": report.contradicted,
        "unbound": False,
        "findings": [f for f in findings if f.get("rule") not in BINDING_RULES],
    }
    return replace(
        result,
        score=_result(result.method, report).score,
        verdict=_result(result.method, report).verdict,
        details=details,
    )


def binding_can_change(
    claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext, without: MethodResult, name: str
) -> bool:
    """Whether the role binding can change this claim's label: the label the results so far give it
    (``without``: this method's result before the binding) is SUPPORTED, or an LLM judge may still
    raise it. A method that has not left a result for the claim counts as unknown: read it."""
    from audit.pipeline.scoring import SUPPORTED, label_claim

    if getattr(ctx, "llm", None) is not None:
        return True
    results = {method: r for method, r in results_for(ctx, claim).items() if method != name}
    if "entailment" not in results:
        return True
    results[name] = without
    return label_claim(claim, hits, results, ctx.thresholds).label == SUPPORTED


@register
class StructureMethod(VerificationMethod):
    name = "structure"
    label_role = ROLE_STRUCTURE
    display_name = "Structural contradiction checks"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        return self.verify_many([(claim, hits)], ctx)[0]

    def verify_many(
        self, items: list[tuple[ClaimDraft, list[EvidenceHit]]], ctx: VerifyContext
    ) -> list[MethodResult]:
        similarity = _similarity_fn(ctx)
        passages = [[(h.passage.id, h.passage.text) for h in hits] for _, hits in items]
        stored = parse_store.reader(getattr(ctx, "encodings", None))  # the KB's, parsed at ingestion
        if similarity is not None and ctx.binding:  # the negation check's parses, in one pass
            prefetch_polarity([(c.text, ps) for (c, _), ps in zip(items, passages) if ps], stored)
        reports: list[StructureReport | None] = []
        for (claim, hits), ps in zip(items, passages):
            reports.append(
                check(
                    claim.text,
                    ps,
                    similarity,
                    bind=False,
                    binding=ctx.binding,
                )
                if hits
                else None
            )
        to_bind = {
            k
            for k, ((claim, hits), report) in enumerate(zip(items, reports))
            if report is not None
            and ctx.binding
            and not report.contradicted
            and binding_can_change(claim, hits, ctx, _result(self.name, report), self.name)
        }
        if to_bind:
            binding.prefetch(
                [
                    # the passages as bind_roles hands them to the binding: no over-long sentence is parsed
                    (items[k][0].text, parseable(passages[k]))
                    for k in sorted(to_bind)
                ],
                stored,
            )
        encode = getattr(ctx, "embed", None)
        out = []
        for k, ((claim, _), report) in enumerate(zip(items, reports)):
            if report is None:
                out.append(
                    MethodResult(
                        self.name,
                        ran=True,
                        score=None,
                        verdict="not_found",
                        details={"reason": "no evidence"},
                    )
                )
                continue
            if k in to_bind:
                bind_roles(report, claim.text, passages[k], encode)
            result = _result(self.name, report)
            result.details["binding"] = "read" if k in to_bind else "not needed"
            out.append(result)
        return out
