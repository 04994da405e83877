"""1. The revision decision: whether an answer needs another revision and, if so, one instruction per claim
(docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop, its gates)."""

from __future__ import annotations

from audit.constants import IMPORTANCE_MINOR, Thresholds
from audit.pipeline.revision.model import (
    CONTRADICTED,
    NOT_FOUND,
    WEAK,
    RevisionDecision,
    RevisionOptions,
    Strategy,
    ledger_summary,
)
from audit.pipeline.types import ClaimVerdict


# --- 1. revision decision (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop, its gates) --------------------------------------
def decide_revision(
    claims: list[ClaimVerdict],
    revision_count: int,
    thresholds: Thresholds = Thresholds(),  # pure-function default (tests); the loop passes its job's
    options: RevisionOptions = RevisionOptions(),
) -> RevisionDecision:
    """Whether to revise again, why, and one instruction per claim that needs work.

    The loop stops at coverage ≥ 85 %; the quality gates add what coverage alone can hide (a
    contradiction "must be corrected", a critical claim without evidence "must be revised or
    removed", the unsupported rate must stay ≤ 5 %), so the loop stops only when all hold.
    """
    s = ledger_summary(claims)
    gates_hold = (
        s["coverage"] >= thresholds.coverage_threshold
        and s["contradicted"] == 0
        and s["critical_unsupported"] == 0
        and s["unsupported_rate"] <= thresholds.unsupported_rate_threshold
    )
    if gates_hold:
        return RevisionDecision(False, "Coverage threshold met")
    if revision_count >= thresholds.max_revisions:
        return RevisionDecision(False, "Maximum revision cycles reached")
    instructions = []
    for c in claims:
        if c.verdict == NOT_FOUND:
            strategy = (
                Strategy.QUALIFY
                if (options.unsupported_action == "qualify" or c.claim.importance == IMPORTANCE_MINOR)
                else Strategy.REMOVE
            )
            text = f'Remove or qualify claim: "{c.claim.text}"'
        elif c.verdict == CONTRADICTED:
            strategy, text = Strategy.CORRECT, f'Correct claim based on evidence: "{c.claim.text}"'
        elif c.verdict == WEAK:
            strategy, text = (
                Strategy.SOFTEN,
                f'Strengthen wording to match evidence or soften claim: "{c.claim.text}"',
            )
        else:
            continue
        instructions.append(
            {
                "claim_id": c.claim.claim_id,
                "claim": c.claim.text,
                "verdict": c.verdict,
                "importance": c.claim.importance,
                "strategy": str(strategy),
                "instruction": text,
            }
        )
    if s["critical_unsupported"]:
        reason = "Critical claims lack evidence"
    elif s["contradicted"]:
        reason = "Claims contradict evidence"
    elif s["coverage"] < thresholds.coverage_threshold:
        reason = (
            f"Coverage {s['coverage'] * 100:.0f}% below {thresholds.coverage_threshold * 100:.0f}% threshold"
        )
    else:
        reason = (
            f"Unsupported rate {s['unsupported_rate'] * 100:.0f}% above "
            f"{thresholds.unsupported_rate_threshold * 100:.0f}% threshold"
        )
    if not instructions:
        instructions.append(
            {
                "claim_id": "",
                "claim": "",
                "verdict": "",
                "importance": "",
                "strategy": str(Strategy.CITATION),
                "instruction": "Strengthen citations or remove unsupported claims",
            }
        )
    return RevisionDecision(True, reason, instructions)
