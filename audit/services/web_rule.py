"""The Audit-Web rule (docs/SPEC_NOTES.md#escalation-to-audit-web) on stored claims
(``web_escalation_reasons``): which claims of an answer stored earlier go on to web verification and
why. The rule itself, on the pipeline's verdicts, is ``audit.pipeline.web.rule``."""

from __future__ import annotations

from typing import Iterable

from audit import constants
from audit.models import Claim
from audit.pipeline.web.rule import WebEscalation, web_reasons


def web_escalation_reasons(claims: Iterable[Claim], thresholds: constants.Thresholds) -> WebEscalation:
    """The same rule as ``audit.pipeline.web.rule.web_escalation_of``, on stored claims (their evidence prefetched):
    for the web step of an answer stored earlier (``services.web.web_verify_answer`` without
    the caller's reasons)."""
    result = WebEscalation()
    for claim in claims:
        reasons = web_reasons(
            confidence=claim.confidence,
            has_evidence=bool(list(claim.evidence.all())),
            verdict=claim.verdict,
            metrics=claim.metrics,
            risk_flags=claim.risk_flags,
            thresholds=thresholds,
        )
        if reasons:
            result.reasons[claim.claim_id] = reasons
    return result
