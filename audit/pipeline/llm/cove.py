"""Chain-of-Verification (spec §4.2.1): plan questions, answer each independently, compare.

1. The planner sees the claim and writes up to COVE_MAX_QUESTIONS questions.
2. Each question is answered in its own call from the evidence only (never the claim or the
   draft), so an answer cannot echo the claim.
3. One comparison call labels each answer CONSISTENT / INCONSISTENT / UNKNOWN with the claim.
``cove_consistency`` = consistent answers / answers that said something (UNKNOWN left out).
"""

from __future__ import annotations

from audit.constants import COVE_MAX_QUESTIONS, LLM_EVIDENCE_PASSAGES
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import not_run, unavailable_reason
from audit.pipeline.llm.prompts import (COVE_ANSWER_SCHEMA, COVE_ANSWER_SYSTEM, COVE_COMPARE_SCHEMA,
                                        COVE_COMPARE_SYSTEM, COVE_PLAN_SCHEMA, COVE_PLAN_SYSTEM, messages,
                                        numbered_passages)
from audit.pipeline.types import MethodResult

METHOD = "llm_cove"


def cove_check(client: LLMClient | None, claim_text: str, evidence: list[str]) -> MethodResult:
    """Run the three CoVe steps for one claim; any failed step means CoVe did not run."""
    reason = unavailable_reason(client)
    if reason:
        return not_run(METHOD, reason)
    evidence = [e for e in evidence if e and e.strip()][:LLM_EVIDENCE_PASSAGES]
    try:
        plan = client.complete_json(purpose="cove_questions", schema=COVE_PLAN_SCHEMA,
                                    messages=messages(COVE_PLAN_SYSTEM, f"Claim: {claim_text}"))
        questions = [q.strip() for q in plan["questions"]][:COVE_MAX_QUESTIONS]
        answers = []
        for question in questions:
            reply = client.complete_json(
                purpose="cove_answer", schema=COVE_ANSWER_SCHEMA,
                messages=messages(COVE_ANSWER_SYSTEM, f"Passages:\n{numbered_passages(evidence)}\n\nQuestion: {question}"))
            answers.append(reply)
        listing = "\n".join(f"{i}. Q: {q}\n   A: {a['answer'] if a['found'] else '(not in the passages)'}"
                            for i, (q, a) in enumerate(zip(questions, answers), 1))
        compared = client.complete_json(purpose="cove_compare", schema=COVE_COMPARE_SCHEMA,
                                        messages=messages(COVE_COMPARE_SYSTEM, f"Claim: {claim_text}\n\n{listing}"))
    except LLMError as exc:
        return not_run(METHOD, f"LLM failed ({exc.kind}) during CoVe")
    verdicts = (compared["verdicts"] + ["UNKNOWN"] * len(questions))[: len(questions)]
    verdicts = [v if a["found"] else "UNKNOWN" for v, a in zip(verdicts, answers)]
    decided = [v for v in verdicts if v != "UNKNOWN"]
    consistency = (decided.count("CONSISTENT") / len(decided)) if decided else None
    if "INCONSISTENT" in decided:
        vote = "contradicted"
    elif decided:
        vote = "supported"
    else:
        vote = "not_found"
    return MethodResult(method=METHOD, score=consistency, verdict=vote, details={
        "cove_consistency": consistency,
        "questions": [{"question": q, "answer": a["answer"][:500], "found": a["found"], "verdict": v}
                      for q, a, v in zip(questions, answers, verdicts)],
    })
