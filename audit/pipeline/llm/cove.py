"""Chain-of-Verification (docs/SPEC_NOTES.md#verification-depths-and-profiles): plan questions, answer them independently, compare.

1. The planner sees a batch of claims and writes up to COVE_MAX_QUESTIONS questions for each
   (one call per LLM_BATCH_CLAIMS claims).
2. Each claim's questions are answered in one call from that claim's evidence only (never the
   claim or the draft), so an answer cannot echo the claim.
3. One comparison call per batch labels each answer CONSISTENT / INCONSISTENT / UNKNOWN with its claim.
``cove_consistency`` = consistent answers / answers that said something (UNKNOWN left out).
Any failed step leaves CoVe not run for the claims it concerned. A claim is checked once per client
(one audit) for the same text and evidence: a revision pass re-asks only the claims it changed.
"""

from __future__ import annotations

from audit.constants import COVE_MAX_QUESTIONS, LLM_EVIDENCE_PASSAGES
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import batches, concurrently, failure_reason, not_run, unavailable_reason
from audit.pipeline.llm.prompts import (
    COVE_ANSWER_SYSTEM,
    COVE_COMPARE_SYSTEM,
    COVE_PLAN_SYSTEM,
    messages,
    numbered_passages,
)
from audit.pipeline.types import MethodResult

METHOD = "llm_cove"


def cove_check(client: LLMClient | None, claim_text: str, evidence: list[str]) -> MethodResult:
    """Run the three CoVe steps for one claim."""
    return cove_checks(client, [(claim_text, evidence)])[0]


def cove_checks(client: LLMClient | None, items: list[tuple[str, list[str]]]) -> list[MethodResult]:
    """CoVe for every (claim text, evidence texts) pair, in batches run concurrently."""
    reason = unavailable_reason(client)
    if reason:
        return [not_run(METHOD, reason) for _ in items]
    results: list[MethodResult | None] = [None] * len(items)
    todo, keys = [], {}
    for i, (text, evidence) in enumerate(items):
        evidence = [e for e in evidence if e and e.strip()][:LLM_EVIDENCE_PASSAGES]
        keys[i] = (METHOD, text, tuple(evidence))
        if client.memo.get(keys[i]) is not None:  # checked already in this audit (a revision pass)
            results[i] = client.memo[keys[i]]
        else:
            todo.append((i, text, evidence))
    for batch_results in concurrently(client, lambda batch: _cove_batch(client, batch), batches(todo)):
        for i, result in batch_results:
            results[i] = result
            if result.ran:
                client.memo[keys[i]] = result
    return results


def _answer(client: LLMClient, questions: list[str], evidence: list[str]) -> list[dict] | LLMError:
    listing = "\n".join(f"{n}. {q}" for n, q in enumerate(questions, 1))
    try:
        reply = client.complete_json(
            purpose="cove_answer",
            items=len(questions),
            messages=messages(
                COVE_ANSWER_SYSTEM, f"Passages:\n{numbered_passages(evidence)}\n\nQuestions:\n{listing}"
            ),
        )
    except LLMError as exc:
        return exc
    by_number = {row["question"]: row for row in reply["answers"]}
    return [by_number.get(n, {"answer": "", "found": False}) for n in range(1, len(questions) + 1)]


def _cove_batch(client: LLMClient, batch: list[tuple[int, str, list[str]]]) -> list[tuple[int, MethodResult]]:
    claims = "\n".join(f"c{n}: {text}" for n, (_, text, _) in enumerate(batch, 1))
    try:
        plan = client.complete_json(
            purpose="cove_questions",
            items=len(batch),
            messages=messages(COVE_PLAN_SYSTEM, f"Claims:\n{claims}"),
        )
    except LLMError as exc:
        reason = failure_reason(exc, "during CoVe")
        return [(i, not_run(METHOD, reason)) for i, _, _ in batch]
    planned = {
        row["claim_id"]: [q.strip() for q in row["questions"]][:COVE_MAX_QUESTIONS] for row in plan["results"]
    }
    questions = [planned.get(f"c{n}", []) for n in range(1, len(batch) + 1)]
    answers = concurrently(
        client,
        lambda job: _answer(client, *job) if job[0] else [],
        [(q, evidence) for q, (_, _, evidence) in zip(questions, batch)],
    )
    out: list[tuple[int, MethodResult]] = []
    listing = []
    for n, ((i, text, _), qs, ans) in enumerate(zip(batch, questions, answers), 1):
        if not qs:
            out.append((i, not_run(METHOD, "the LLM planned no question for this claim")))
        elif isinstance(ans, LLMError):
            out.append((i, not_run(METHOD, failure_reason(ans, "during CoVe"))))
        else:
            listing.append((n, i, text, qs, ans))
    if not listing:
        return out
    body = "\n\n".join(
        f"Claim c{n}: {text}\n"
        + "\n".join(
            f"  {k}. Q: {q}\n     A: {a['answer'] if a['found'] else '(not in the passages)'}"
            for k, (q, a) in enumerate(zip(qs, ans), 1)
        )
        for n, _, text, qs, ans in listing
    )
    try:
        compared = client.complete_json(
            purpose="cove_compare", items=len(listing), messages=messages(COVE_COMPARE_SYSTEM, body)
        )
    except LLMError as exc:
        reason = failure_reason(exc, "during CoVe")
        return out + [(i, not_run(METHOD, reason)) for _, i, _, _, _ in listing]
    rows = {row["claim_id"]: row["verdicts"] for row in compared["results"]}
    for n, i, _, qs, ans in listing:
        if f"c{n}" not in rows:
            out.append((i, not_run(METHOD, "the LLM compared no answer for this claim")))
            continue
        out.append((i, _result(qs, ans, rows[f"c{n}"])))
    return out


def _result(questions: list[str], answers: list[dict], verdicts: list[str]) -> MethodResult:
    verdicts = (list(verdicts) + ["UNKNOWN"] * len(questions))[: len(questions)]
    verdicts = [v if a["found"] else "UNKNOWN" for v, a in zip(verdicts, answers)]
    decided = [v for v in verdicts if v != "UNKNOWN"]
    consistency = (decided.count("CONSISTENT") / len(decided)) if decided else None
    if "INCONSISTENT" in decided:
        vote = "contradicted"
    elif decided:
        vote = "supported"
    else:
        vote = "not_found"
    return MethodResult(
        method=METHOD,
        score=consistency,
        verdict=vote,
        details={
            "cove_consistency": consistency,
            "questions": [
                {"question": q, "answer": a["answer"][:500], "found": a["found"], "verdict": v}
                for q, a, v in zip(questions, answers, verdicts)
            ],
        },
    )
