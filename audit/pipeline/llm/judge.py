"""Isolated verification (docs/SPEC_NOTES.md#labels-verdicts-and-confidence): the judge sees each claim with its own evidence only.

Never the draft, the question or the other claims' evidence, so "I wrote it, so it is true" cannot
bias it. Claims are judged in batches of LLM_BATCH_CLAIMS (one call per batch, each claim listed
with its own passages). Its four verdicts map to a probability of support and to the FEVER label
through ``LLM_JUDGE_VERDICTS``.
"""

from __future__ import annotations

from audit.constants import LLM_EVIDENCE_PASSAGES, LLM_JUDGE_VERDICTS
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import batches, concurrently, failure_reason, not_run, unavailable_reason
from audit.pipeline.llm.prompts import JUDGE_SYSTEM, messages, numbered_passages
from audit.pipeline.types import MethodResult

METHOD = "llm_judge"


def _evidence(evidence: list[str]) -> list[str]:
    return [e for e in evidence if e and e.strip()][:LLM_EVIDENCE_PASSAGES]


def judge_claim(client: LLMClient | None, claim_text: str, evidence: list[str]) -> MethodResult:
    """Ask the judge about one claim given at most LLM_EVIDENCE_PASSAGES evidence texts."""
    return judge_claims(client, [(claim_text, evidence)])[0]


def judge_claims(client: LLMClient | None, items: list[tuple[str, list[str]]]) -> list[MethodResult]:
    """Judge every (claim text, evidence texts) pair, batched; a claim without evidence is not judged."""
    reason = unavailable_reason(client)
    if reason:
        return [not_run(METHOD, reason) for _ in items]
    results: list[MethodResult | None] = [None] * len(items)
    todo = []
    for i, (text, evidence) in enumerate(items):
        evidence = _evidence(evidence)
        if evidence:
            todo.append((i, text, evidence))
        else:
            results[i] = not_run(METHOD, "no evidence to judge against")
    for batch_results in concurrently(client, lambda batch: _judge_batch(client, batch), batches(todo)):
        for i, result in batch_results:
            results[i] = result
    return results


def _judge_batch(
    client: LLMClient, batch: list[tuple[int, str, list[str]]]
) -> list[tuple[int, MethodResult]]:
    listing = "\n\n".join(
        f"Claim c{n}: {text}\nEvidence for c{n}:\n{numbered_passages(evidence)}"
        for n, (_, text, evidence) in enumerate(batch, 1)
    )
    try:
        reply = client.complete_json(
            purpose="judge", items=len(batch), messages=messages(JUDGE_SYSTEM, listing)
        )
    except LLMError as exc:
        reason = failure_reason(exc, "during isolated verification: offline methods decided")
        return [(i, not_run(METHOD, reason)) for i, _, _ in batch]
    rows = {row["claim_id"]: row for row in reply["results"]}
    out = []
    for n, (i, _, _) in enumerate(batch, 1):
        row = rows.get(f"c{n}")
        if row is None:
            out.append((i, not_run(METHOD, "the LLM gave no verdict for this claim")))
            continue
        score, p_refuted, fever, verdict = LLM_JUDGE_VERDICTS[row["verdict"]]
        vote = {"supported": "supported", "contradicted": "contradicted"}.get(verdict, "not_found")
        out.append(
            (
                i,
                MethodResult(
                    method=METHOD,
                    score=score,
                    verdict=vote,
                    details={
                        "judge_verdict": row["verdict"],
                        "fever_label": fever,
                        "verdict": verdict,
                        "p_refuted": p_refuted,
                        "reasoning": row["reasoning"][:1000],
                        "batch_size": len(batch),
                    },
                ),
            )
        )
    return out
