"""Isolated verification (docs/SPEC_NOTES.md#labels-verdicts-and-confidence): the judge sees each claim with its own evidence only.

Never the draft, the question or the other claims' evidence, so "I wrote it, so it is true" cannot
bias it. With ``LLMConfig.judge_prompt`` "minicheck" each claim is read chunk by chunk with a Yes/No
question instead (``llm/minicheck.py``). Otherwise claims are judged in batches of LLM_BATCH_CLAIMS (one call per batch, each claim listed
with its own passages); a batch whose reply was cut off at the token cap is split in two and each
half asked again (down to one claim), not dropped. Its four verdicts map to a probability of support and to the FEVER label
through ``LLM_JUDGE_VERDICTS``.
"""

from __future__ import annotations

from audit.constants import AUDIT_SCORE_THRESHOLD, LLM_EVIDENCE_PASSAGES, LLM_JUDGE_VERDICTS
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import (
    batches,
    concurrently,
    failure_reason,
    not_run,
    split_when_cut_off,
    unavailable_reason,
)
from audit.pipeline.llm.minicheck import minicheck_claims
from audit.pipeline.llm.prompts import JUDGE_SYSTEM, messages, numbered_passages
from audit.pipeline.llm.schemas import REASON_MAX_CHARS
from audit.pipeline.types import MethodResult

METHOD = "llm_judge"


def _evidence(evidence: list[str]) -> list[str]:
    return [e for e in evidence if e and e.strip()][:LLM_EVIDENCE_PASSAGES]


def judge_claim(client: LLMClient | None, claim_text: str, evidence: list[str]) -> MethodResult:
    """Ask the judge about one claim given at most LLM_EVIDENCE_PASSAGES evidence texts."""
    return judge_claims(client, [(claim_text, evidence)])[0]


def judge_claims(
    client: LLMClient | None, items: list[tuple[str, list[str]]], threshold: float = AUDIT_SCORE_THRESHOLD
) -> list[MethodResult]:
    """Judge every (claim text, evidence texts) pair, batched; a claim without evidence is not judged.

    Each claim is judged once per client (one audit) for the same text and evidence: the revision
    loop's next pass, or the support judge ``llm`` and the ``llm_judge`` method asking about the
    same claim, reuse the verdict (``LLMClient.memo``) instead of calling again.
    """
    reason = unavailable_reason(client)
    if reason:
        return [not_run(METHOD, reason) for _ in items]
    with client.memo_lock:
        if client.config.judge_prompt == "minicheck":
            results = minicheck_claims(client, items, threshold)
        else:
            results = _judge_claims(client, items)
    weighing = {
        "weight": client.config.judge_weight,
        "margin": client.config.judge_margin,
        "weight_source": client.config.weight_source,
    }
    for result in results:  # what scoring weighs the verdict with (docs/LLM.md#weighing-the-llm-judge)
        if result.ran:
            result.details.update(weighing)
    return results


def _judge_claims(client: LLMClient, items: list[tuple[str, list[str]]]) -> list[MethodResult]:
    results: list[MethodResult | None] = [None] * len(items)
    todo, pending = [], {}
    for i, (text, evidence) in enumerate(items):
        evidence = _evidence(evidence)
        key = (METHOD, text, tuple(evidence))
        if not evidence:
            results[i] = not_run(METHOD, "no evidence to judge against")
        elif client.memo.get(key) is not None:
            results[i] = client.memo[key]
        elif key in pending:
            pending[key].append(i)  # the same claim twice in one call: judged once
        else:
            pending[key] = [i]
            todo.append((i, text, evidence))
    for batch_results in concurrently(client, lambda batch: _judge_batch(client, batch), batches(todo)):
        for i, result in batch_results:
            key = (METHOD, items[i][0], tuple(_evidence(items[i][1])))
            if result.ran:
                client.memo[key] = result
            for k in pending[key]:
                results[k] = result
    return results


def _judge_batch(
    client: LLMClient, batch: list[tuple[int, str, list[str]]]
) -> list[tuple[int, MethodResult]]:
    try:
        rows = split_when_cut_off(lambda part: _ask(client, part), batch)
    except LLMError as exc:
        reason = failure_reason(exc, "during isolated verification: offline methods decided")
        return [(i, not_run(METHOD, reason)) for i, _, _ in batch]
    out = []
    for (i, _, _), row in zip(batch, rows):
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
                        "reasoning": row["reasoning"][:REASON_MAX_CHARS],
                        "batch_size": row["batch_size"],
                    },
                ),
            )
        )
    return out


def _ask(client: LLMClient, batch: list[tuple[int, str, list[str]]]) -> list[dict | None]:
    """One judge call for ``batch``: its row per claim (None where the reply gave none), in order."""
    listing = "\n\n".join(
        f"Claim c{n}: {text}\nEvidence for c{n}:\n{numbered_passages(evidence)}"
        for n, (_, text, evidence) in enumerate(batch, 1)
    )
    reply = client.complete_json(purpose="judge", items=len(batch), messages=messages(JUDGE_SYSTEM, listing))
    rows = {row["claim_id"]: row for row in reply["results"]}
    found = [rows.get(f"c{n}") for n in range(1, len(batch) + 1)]
    return [None if row is None else {**row, "batch_size": len(batch)} for row in found]
