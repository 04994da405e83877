"""Isolated verification (seed 003 stage 4): the judge sees only the claim and its evidence.

Never the draft, the question or the other claims, so "I wrote it, so it is true" cannot bias
it. Its four verdicts map to a probability of support and to the FEVER label through
``LLM_JUDGE_VERDICTS``.
"""

from __future__ import annotations

from audit.constants import LLM_EVIDENCE_PASSAGES, LLM_JUDGE_VERDICTS
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import not_run, unavailable_reason
from audit.pipeline.llm.prompts import JUDGE_SCHEMA, JUDGE_SYSTEM, messages, numbered_passages
from audit.pipeline.types import MethodResult

METHOD = "llm_judge"


def judge_claim(client: LLMClient | None, claim_text: str, evidence: list[str]) -> MethodResult:
    """Ask the judge about one claim given at most LLM_EVIDENCE_PASSAGES evidence texts."""
    reason = unavailable_reason(client)
    if reason:
        return not_run(METHOD, reason)
    evidence = [e for e in evidence if e and e.strip()][:LLM_EVIDENCE_PASSAGES]
    if not evidence:
        return not_run(METHOD, "no evidence to judge against")
    user = f"Claim: {claim_text}\n\nEvidence:\n{numbered_passages(evidence)}"
    try:
        reply = client.complete_json(purpose="judge", schema=JUDGE_SCHEMA, messages=messages(JUDGE_SYSTEM, user))
    except LLMError as exc:
        return not_run(METHOD, f"LLM failed ({exc.kind}): offline methods decided")
    score, p_refuted, fever, verdict = LLM_JUDGE_VERDICTS[reply["verdict"]]
    vote = {"supported": "supported", "contradicted": "contradicted"}.get(verdict, "not_found")
    return MethodResult(method=METHOD, score=score, verdict=vote, details={
        "judge_verdict": reply["verdict"], "fever_label": fever, "verdict": verdict, "p_refuted": p_refuted,
        "reasoning": reply["reasoning"][:1000], "key_match": reply.get("key_match"),
        "issues": [str(i)[:300] for i in reply.get("issues", [])][:10],
        "passages": [p for p in reply.get("passages", []) if 1 <= p <= len(evidence)],
    })
