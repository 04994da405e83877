"""The Audit-Web rule (docs/SPEC_NOTES.md#escalation-to-audit-web), on plain values: which claims of
an audited answer go on to web verification and why (``web_reasons`` for one claim,
``web_escalation_of`` on the pipeline's verdicts) and what the web step of a request does
(``web_block``). The same rule on stored claims is ``audit.services.web_rule.web_escalation_reasons``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from audit import constants
from audit.pipeline.profiles import VerificationPlan
from audit.pipeline.revision import NOT_FOUND  # the verdict of a claim no passage speaks to
from audit.pipeline.types import ClaimVerdict


@dataclass
class WebEscalation:
    """Why (if at all) an audited answer goes on to web verification, claim by claim."""

    reasons: dict[str, list[str]] = field(default_factory=dict)  # claim_id -> reasons

    @property
    def needed(self) -> bool:
        return bool(self.reasons)


def web_reasons(
    *,
    confidence: float,
    has_evidence: bool,
    verdict: str,
    metrics: dict[str, Any],
    risk_flags: list[str],
    thresholds: constants.Thresholds,
) -> list[str]:
    """The four conditions of docs/SPEC_NOTES.md#escalation-to-audit-web for one claim, once; never
    for a claim too long to verify (the web step would not read it either, and would send it out)."""
    reasons: list[str] = []
    if {constants.TOO_LONG_FLAG, constants.OVER_BUDGET_FLAG} & set(risk_flags or []):
        return reasons
    if confidence < thresholds.audit_score_threshold:
        reasons.append("audit_score_below_threshold")
    if not has_evidence or verdict == NOT_FOUND:
        reasons.append("no_local_support")
    disagreement = (metrics or {}).get(constants.WEB_SELFCHECK_METRIC)
    if isinstance(disagreement, (int, float)) and disagreement > thresholds.selfcheck_disagreement_threshold:
        reasons.append("selfcheck_disagreement")
    if constants.WEB_STALE_FLAG in (risk_flags or []):
        reasons.append("stale_source")
    return reasons


def web_escalation_of(verdicts: Iterable[ClaimVerdict], thresholds: constants.Thresholds) -> WebEscalation:
    """Apply the Audit-Web rule to what the pipeline decided (before anything is stored).

    A claim escalates when its confidence is below ``audit_score_threshold``, when no local
    passage supports it (no evidence, or verdict not found), when its SelfCheck disagreement is
    above ``selfcheck_disagreement_threshold``, or when it carries the stale-source risk flag.
    Claims already SUPPORTED above the threshold with fresh support do not escalate.
    """
    result = WebEscalation()
    for v in verdicts:
        reasons = web_reasons(
            confidence=v.confidence,
            has_evidence=bool(v.evidence),
            verdict=v.verdict,
            metrics=v.metrics,
            risk_flags=v.risk_flags,
            thresholds=thresholds,
        )
        if reasons:
            result.reasons[v.claim.claim_id] = reasons
    return result


def web_block(
    *,
    asked: bool,
    escalation: WebEscalation,
    structured: bool,
    external_calls: bool,
    plan: VerificationPlan,
) -> dict[str, Any]:
    """What the web step will do, decided on the pipeline's result before anything is stored:
    {} when Audit-Web is neither ``asked`` for (the request's mode) nor needed (``escalation``); a
    ``status`` when it is skipped (every claim supported locally, a structured answer, a workspace
    without ``external_calls``, a verification ``plan`` without the web); no ``status`` when the web
    must be consulted."""
    if not (asked or escalation.needed):
        return {}
    web: dict[str, Any] = {"requested": asked, "reasons": escalation.reasons}
    if not escalation.needed:
        web["status"] = "skipped: every claim is supported locally"
    elif structured:
        web["status"] = "skipped: a structured answer is verified against the passages its refs name"
    elif not external_calls:
        web["status"] = "skipped: the workspace forbids external calls"
    elif not plan.web:
        web["status"] = f"skipped: the {plan.profile} verification profile does not verify on the web"
    return web
