"""LLM-backed verification methods as plug-ins (docs/LLM.md): ``llm_judge``, ``llm_cove``, ``selfcheck``.

They read the client from ``ctx.llm`` (an ``audit.pipeline.llm.LLMClient`` or None). Without a
usable client, or when a call fails, a method returns ``ran=False`` with the reason, and the
offline methods decide alone: the entailment judge stands in for ``llm_judge``, the offline
``cove`` for ``llm_cove``; SelfCheck has no offline form, so its disagreement ratio appears only
when samples were really drawn. Claims are batched per call and batches run concurrently up to
the client's concurrency (``audit.pipeline.audit.run_methods`` also runs the three methods side by side).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from audit.pipeline.llm.common import NO_LLM, not_run, unavailable_reason
from audit.pipeline.llm.cove import cove_checks
from audit.pipeline.llm.judge import judge_claims
from audit.pipeline.llm.selfcheck import selfcheck
from audit.pipeline.methods.base import ROLE_JUDGE, VerificationMethod, VerifyContext, register
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit, MethodResult

if TYPE_CHECKING:
    from audit.pipeline.llm.client import LLMClient
    from audit.pipeline.llm.extraction import Extraction

LLM_METHODS = ("llm_judge", "llm_cove", "selfcheck")
# offline method that stands in when the LLM variant did not run
OFFLINE_COUNTERPART = {"llm_judge": "entailment", "llm_cove": "cove"}


def _client(ctx: VerifyContext) -> LLMClient | None:
    client: LLMClient | None = getattr(ctx, "llm", None)
    return client


def _evidence(hits: list[EvidenceHit]) -> list[str]:
    ranked = sorted(hits, key=lambda h: (not h.cited, -h.relevance))
    return [h.passage.text for h in ranked]


class _PerClaimLLMMethod(VerificationMethod):
    """An LLM check of every claim: ``check(client, [(claim_text, evidence_texts)]) -> [MethodResult]``."""

    offline = False

    @staticmethod
    def check(client: LLMClient | None, items: list[tuple[str, list[str]]]) -> list[MethodResult]:
        raise NotImplementedError

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        return self.verify_many([(claim, hits)], ctx)[0]

    def verify_many(
        self, items: list[tuple[ClaimDraft, list[EvidenceHit]]], ctx: VerifyContext
    ) -> list[MethodResult]:
        client = _client(ctx)
        reason = unavailable_reason(client)
        if reason:
            return [not_run(self.name, reason) for _ in items]
        return self.check(client, [(claim.text, _evidence(hits)) for claim, hits in items])


@register
class LLMJudgeMethod(_PerClaimLLMMethod):
    """Isolated verification: the judge sees only the claim and its evidence (docs/SPEC_NOTES.md#labels-verdicts-and-confidence)."""

    name, display_name, check = "llm_judge", "LLM isolated verification", staticmethod(judge_claims)
    label_role = ROLE_JUDGE


@register
class LLMCoveMethod(_PerClaimLLMMethod):
    """CoVe with LLM questions, each answered independently from the evidence (docs/SPEC_NOTES.md#verification-depths-and-profiles)."""

    name, display_name, check = "llm_cove", "LLM Chain-of-Verification", staticmethod(cove_checks)


@register
class SelfCheckMethod(VerificationMethod):
    """SelfCheck sampling over the whole answer (docs/SPEC_NOTES.md#verification-depths-and-profiles); flags claims above the threshold."""

    name = "selfcheck"
    display_name = "SelfCheck sampling"
    offline = False

    def verify_many(
        self, items: list[tuple[ClaimDraft, list[EvidenceHit]]], ctx: VerifyContext
    ) -> list[MethodResult]:
        claims = [claim for claim, _ in items]
        passages: list[str] = []
        seen: set[str] = set()
        for _, hits in items:
            for h in hits:
                if h.passage.id not in seen:
                    seen.add(h.passage.id)
                    passages.append(h.passage.text)
        outcome = selfcheck(
            _client(ctx),
            ctx.query,
            claims,
            passages,
            threshold=ctx.thresholds.selfcheck_disagreement_threshold,
        )
        return [outcome.results[c.claim_id] for c in claims]

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        return self.verify_many([(claim, hits)], ctx)[0]


def llm_methods_not_run(
    verdicts: list[ClaimVerdict], llm: LLMClient | None, extraction: Extraction | None = None
) -> dict[str, str]:
    """{method: reason} for the LLM methods that ran for no claim of the answer (claim cards)."""
    out: dict[str, str] = {}
    if extraction is not None and extraction.fallback and llm is not None:
        out["llm_extraction"] = f"claims extracted offline ({extraction.fallback})"
    for name in LLM_METHODS:
        results = [m for v in verdicts for m in v.methods if m.method == name]
        if llm is None:
            out[name] = NO_LLM
        elif not any(r.ran for r in results):
            out[name] = results[0].details.get("reason", "did not run") if results else "no claims"
    return out


def answer_selfcheck_disagreement(verdicts: list[ClaimVerdict]) -> float | None:
    """Mean SelfCheck disagreement over the claims that have one; None when no sample was drawn."""
    ratios = [v.metrics["selfcheck_disagreement"] for v in verdicts if "selfcheck_disagreement" in v.metrics]
    return round(sum(ratios) / len(ratios), 4) if ratios else None
