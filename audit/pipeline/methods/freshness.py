"""Source freshness against the workspace policy (docs/SPEC_NOTES.md#freshness-and-retention).

A dated passage older than the policy for its domain (neuroscience 18 months, general 36, or the
workspace's override) raises ``outdated_source``. Without any dated evidence it does not run.
"""

from __future__ import annotations

from datetime import date, datetime

from audit.pipeline.methods.base import VerificationMethod, VerifyContext, register
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult


def age_months(published: date, now: datetime | date) -> float:
    today = now.date() if isinstance(now, datetime) else now
    pub = published.date() if isinstance(published, datetime) else published
    return (today - pub).days / 30.4375


@register
class FreshnessMethod(VerificationMethod):
    name = "freshness"
    display_name = "Source freshness"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        dated = [(h, h.passage.published) for h in hits if h.passage.published is not None]
        if not dated:
            return MethodResult(self.name, ran=False, details={"reason": "no dated evidence"})
        items, outdated = [], 0
        for h, published in dated:
            limit = ctx.thresholds.freshness_for(ctx.domain or h.passage.domain)
            age = age_months(published, ctx.now)
            stale = age > limit
            outdated += stale
            items.append(
                {
                    "source_id": h.passage.id,
                    "age_months": round(age, 1),
                    "limit_months": limit,
                    "outdated": stale,
                }
            )
        # the claim's support is stale when its best (first) dated evidence is
        flags = ["outdated_source"] if items[0]["outdated"] else []
        return MethodResult(
            self.name, ran=True, score=1.0 - outdated / len(items), details={"sources": items}, flags=flags
        )
