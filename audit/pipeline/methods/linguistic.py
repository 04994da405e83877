"""Linguistic confidence indicators (docs/SPEC_NOTES.md#labels-verdicts-and-confidence).

Base 0.5; each high-confidence indicator ("according to", "the study found") adds 0.15, each
low-confidence one ("may", "reportedly", "approximately") takes 0.15 away; a quotation found
verbatim in the evidence adds 0.15. The score routes verification depth (quick >= 0.7,
standard 0.4–0.7, full < 0.4); it is a property of the wording, not of the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from audit.constants import LINGUISTIC_BASE, LINGUISTIC_STEP
from audit.pipeline.methods.base import VerificationMethod, VerifyContext, register
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult

HIGH = (
    "according to",
    "states that",
    "reports that",
    "shows that",
    "indicates that",
    "confirms that",
    "demonstrates that",
    "based on",
    "the study found",
    "found that",
    "reported that",
)
LOW = (
    "may",
    "might",
    "could",
    "possibly",
    "perhaps",
    "likely",
    "probably",
    "appears to",
    "seems to",
    "suggests that",
    "approximately",
    "reportedly",
    "allegedly",
    "it is believed",
    "some evidence",
)


# a quotation of eight characters or more; an opening curly quote ends one (linear time on "““““")
_QUOTE_RE = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{8,})[\"\u201d]")


def linguistic_score(text: str, evidence_texts: Sequence[str] = ()) -> tuple[float, dict[str, Any]]:
    low = text.lower()
    highs = [p for p in HIGH if re.search(r"\b" + re.escape(p) + r"\b", low)]
    lows = [p for p in LOW if re.search(r"\b" + re.escape(p) + r"\b", low)]
    quotes = _QUOTE_RE.findall(text)
    evidence = " ".join(evidence_texts).lower() if quotes else ""
    quote_match = any(q.lower() in evidence for q in quotes)
    score = LINGUISTIC_BASE + LINGUISTIC_STEP * (len(highs) - len(lows) + int(quote_match))
    score = min(1.0, max(0.0, score))
    route = "quick" if score >= 0.7 else "standard" if score >= 0.4 else "full"
    return score, {"high": highs, "low": lows, "quote_match": quote_match, "route": route}


@register
class LinguisticMethod(VerificationMethod):
    name = "linguistic"
    display_name = "Linguistic confidence"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        score, details = linguistic_score(claim.text, [h.passage.text for h in hits])
        return MethodResult(self.name, ran=True, score=score, details=details)
