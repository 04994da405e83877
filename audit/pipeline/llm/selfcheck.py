"""SelfCheck sampling (docs/SPEC_NOTES.md#verification-depths-and-profiles): k alternate answers at a controlled temperature.

Each sample is drawn independently at SELFCHECK_TEMPERATURE (a distinct seed per sample, so a
server honouring seeds still varies); then one judge call per sample says, for every claim,
whether that sample SUPPORTS, CONTRADICTS or does NOT_MENTION it. Samples are drawn, and then
judged, concurrently (up to the client's concurrency). A claim's disagreement ratio
is the share of judged samples that contradict it or leave it out.

The ratio exists only when samples were really drawn and judged: with no sample there is no
``selfcheck_disagreement`` (not a 0.0 that would read as "all samples agree").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from audit.constants import LLM_SEED, SELFCHECK_SAMPLES, SELFCHECK_TEMPERATURE
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import concurrently, failure_reason, not_run, unavailable_reason
from audit.pipeline.llm.prompts import (
    SELFCHECK_JUDGE_SYSTEM,
    SELFCHECK_SAMPLE_SYSTEM,
    echoes_prompt,
    messages,
    numbered_passages,
)
from audit.pipeline.types import ClaimDraft, MethodResult

METHOD = "selfcheck"


@dataclass
class SelfCheckOutcome:
    """Per-claim results, and the samples drawn (empty when SelfCheck could not run)."""

    results: dict[str, MethodResult]
    samples: list[str] = field(default_factory=list)
    reason: str = ""  # why it did not run, when it did not

    @property
    def ran(self) -> bool:
        return bool(self.samples) and any(r.ran for r in self.results.values())


def draw_samples(
    client: LLMClient, query: str, passages: list[str], k: int = SELFCHECK_SAMPLES
) -> tuple[list[str], list[LLMError]]:
    """Up to ``k`` sampled answers, and the errors of the samples that failed (recorded by the client).

    A sample that echoes the prompt (its task line, its "Passages:" / "Question:" frame) is no
    alternate answer: it is discarded and recorded as an ``echo`` failure. The samples are drawn
    once per client for the same question and passages (a revision pass reuses them).
    """
    user = f"Passages:\n{numbered_passages(passages)}\n\nQuestion: {query}"
    key = ("selfcheck_samples", query, tuple(sorted(set(passages))), k)  # the same passages in any order
    if key in client.memo:
        return list(client.memo[key]), []

    def draw(i: int) -> str | LLMError:
        try:
            sample = client.complete(
                purpose="selfcheck_sample",
                messages=messages(SELFCHECK_SAMPLE_SYSTEM, user),
                temperature=SELFCHECK_TEMPERATURE,
                seed=LLM_SEED + 1 + i,
            )
        except LLMError as exc:
            return exc
        if echoes_prompt(sample, SELFCHECK_SAMPLE_SYSTEM):
            error = LLMError("echo", "the sample repeats the prompt template", purpose="selfcheck_sample")
            client.accounting.add_failure(error)
            return error
        return sample

    drawn = concurrently(client, draw, range(k))
    samples = [d for d in drawn if isinstance(d, str)]
    if samples:
        client.memo[key] = list(samples)
    return samples, [d for d in drawn if isinstance(d, LLMError)]


def selfcheck(
    client: LLMClient | None,
    query: str,
    claims: list[ClaimDraft],
    passages: list[str],
    *,
    k: int = SELFCHECK_SAMPLES,
    threshold: float,
) -> SelfCheckOutcome:
    """Draw samples, judge every claim against each, and return per-claim disagreement.

    ``threshold`` is ``Thresholds.selfcheck_disagreement_threshold``: a claim above it gets the
    ``selfcheck_disagreement`` risk flag, which feeds escalation (docs/SPEC_NOTES.md#escalation-to-audit-web).
    """
    reason = unavailable_reason(client)
    if reason is None and not (query or "").strip():
        reason = "no question to sample answers for"
    if reason is None and not claims:
        reason = "no claims"
    if reason:
        return SelfCheckOutcome({c.claim_id: not_run(METHOD, reason) for c in claims}, reason=reason)
    samples, errors = draw_samples(client, query, passages, k)
    if not samples:
        reason = (
            failure_reason(errors[0], "drawing SelfCheck samples")
            if errors
            else "no sample could be drawn from the LLM"
        )
        return SelfCheckOutcome({c.claim_id: not_run(METHOD, reason) for c in claims}, reason=reason)
    ids = {f"c{n}": c.claim_id for n, c in enumerate(claims, 1)}
    claim_list = "\n".join(f"c{n}: {c.text}" for n, c in enumerate(claims, 1))
    votes: dict[str, list[str]] = {c.claim_id: [] for c in claims}

    def judge(sample: str):
        key = ("selfcheck_judge", sample, claim_list)
        if key in client.memo:  # the same sample and claims in a later revision pass
            return client.memo[key]
        try:
            reply = client.complete_json(
                purpose="selfcheck_judge",
                items=len(claims),
                messages=messages(SELFCHECK_JUDGE_SYSTEM, f"Passage:\n{sample}\n\nClaims:\n{claim_list}"),
            )
        except LLMError:
            return None
        client.memo[key] = reply
        return reply

    for reply in concurrently(client, judge, samples):
        if reply is None:
            continue
        for row in reply["results"]:
            row = {**row, "claim_id": ids.get(row["claim_id"], "")}
            if row["claim_id"] in votes and len(votes[row["claim_id"]]) < len(samples):
                votes[row["claim_id"]].append(row["verdict"])
    results = {}
    for claim in claims:
        judged = votes[claim.claim_id]
        if not judged:
            results[claim.claim_id] = not_run(METHOD, "no sample was judged for this claim")
            continue
        ratio = sum(v != "SUPPORTS" for v in judged) / len(judged)
        contradicted = judged.count("CONTRADICTS")
        results[claim.claim_id] = MethodResult(
            method=METHOD,
            score=round(1.0 - ratio, 4),
            verdict="contradicted" if contradicted > len(judged) / 2 else None,
            details={
                "selfcheck_disagreement": round(ratio, 4),
                "samples_drawn": len(samples),
                "samples_judged": len(judged),
                "votes": judged,
            },
            flags=["selfcheck_disagreement"] if ratio > threshold else [],
        )
    return SelfCheckOutcome(results, samples)
