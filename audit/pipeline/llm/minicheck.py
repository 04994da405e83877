"""The LLM judge, MiniCheck style: one claim against one chunk of evidence, a Yes/No answer.

MiniCheck (Tang, Laban and Durrett, EMNLP 2024) asks a model whether one document chunk supports one
claim and reads the probability of "Yes"; a claim is supported by its evidence when some chunk
supports it (the maximum over chunks). Here:

* the claim's evidence passages are cut into chunks of at most ``MINICHECK_CHUNK_CHARS`` characters
  by the knowledge base's chunker (ending at a sentence), at most ``MINICHECK_MAX_CHUNKS`` per claim,
  in the order the passages came (best first); reading stops at the first chunk that supports it;
* each call asks for one token with ``logprobs``: P(yes) = p(Yes) / (p(Yes) + p(No)) over the first
  token's candidates; a server that gives no logprobs is read from the text ("Yes…" 1.0, "No…" 0.0),
  and a reply that is neither is invalid (like any unusable reply it counts in the breaker's failure rate);
* the result is the ``llm_judge`` method's, so the LLM is weighed with the offline judge exactly as the
  batched judge is (``combine.weigh``): ``score`` is P(yes) moved so that 0.5 lands on the SUPPORTED
  threshold, and ``p_refuted`` is None: a Yes/No reading cannot tell a refutation from missing evidence,
  so it never argues for or against REFUTED.

A deployment picks it with ``THEORIA_LLM_JUDGE_PROMPT=minicheck`` (``LLMConfig.judge_prompt``): it costs
one call per claim and chunk, and suits an endpoint that gives logprobs (docs/LLM.md says when).
"""

from __future__ import annotations

import math

from audit.constants import (
    AUDIT_SCORE_THRESHOLD,
    LLM_EVIDENCE_PASSAGES,
    MINICHECK_CHUNK_CHARS,
    MINICHECK_MAX_CHUNKS,
)
from audit.pipeline.chunking import chunk_text
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import failure_reason, not_run
from audit.pipeline.llm.prompts import MINICHECK_SYSTEM, messages
from audit.pipeline.types import MethodResult

METHOD = "llm_judge"
YES, NO = "yes", "no"


def chunks(
    evidence: list[str], size: int = MINICHECK_CHUNK_CHARS, limit: int = MINICHECK_MAX_CHUNKS
) -> list[str]:
    """The evidence cut by the knowledge base's own chunker (``chunking.chunk_text``: at most ``size``
    characters, ending at a sentence where one lies near the end, no overlap), passage by passage, at
    most ``limit`` chunks."""
    out = [c.text for passage in evidence for c in chunk_text(passage, size=size, overlap=0)]
    return out[:limit]


def p_yes(text: str, logprobs: dict[str, float]) -> float | None:
    """P(Yes) of one reply: from the first token's log-probabilities where given, else from its text;
    None when the reply says neither Yes nor No."""
    yes = sum(math.exp(lp) for t, lp in logprobs.items() if t.strip().strip(".,!").lower() == YES)
    no = sum(math.exp(lp) for t, lp in logprobs.items() if t.strip().strip(".,!").lower() == NO)
    if yes + no > 0:
        return yes / (yes + no)
    first = text.strip().split(maxsplit=1)[0].strip(".,!:;\"'").lower() if text.strip() else ""
    return {YES: 1.0, NO: 0.0}.get(first)


def audit_score(p: float, threshold: float = AUDIT_SCORE_THRESHOLD) -> float:
    """P(yes) on the audit-score scale: 0.5 (MiniCheck's decision point) lands on ``threshold``."""
    if p >= 0.5:
        return threshold + (p - 0.5) / 0.5 * (1.0 - threshold)
    return p / 0.5 * threshold


def minicheck_claims(
    client: LLMClient, items: list[tuple[str, list[str]]], threshold: float = AUDIT_SCORE_THRESHOLD
) -> list[MethodResult]:
    """Read every (claim text, evidence texts) pair chunk by chunk; a claim without evidence is not read."""
    out = []
    for text, evidence in items:
        key = ("minicheck", text, tuple(evidence))
        if client.memo.get(key) is not None:
            out.append(client.memo[key])
            continue
        result = _read(
            client, text, [e for e in evidence if e and e.strip()][:LLM_EVIDENCE_PASSAGES], threshold
        )
        if result.ran:
            client.memo[key] = result
        out.append(result)
    return out


def _read(client: LLMClient, claim: str, evidence: list[str], threshold: float) -> MethodResult:
    parts = chunks(evidence)
    if not parts:
        return not_run(METHOD, "no evidence to judge against")
    readings: list[float] = []
    from_logprobs = False
    for chunk in parts:
        try:
            reply = client.complete_reply(
                purpose="judge:minicheck",
                task="minicheck",
                messages=messages(MINICHECK_SYSTEM, f"Document: {chunk}\nClaim: {claim}"),
                extra={"logprobs": True, "top_logprobs": 5},
                checked_later=True,
                stream=False,  # one token: nothing to abandon, and llama-cpp-python drops a stream's logprobs
            )
        except LLMError as exc:
            if readings:
                break  # what was read stands; the rest of the evidence is unread
            return not_run(
                METHOD, failure_reason(exc, "during the MiniCheck reading: offline methods decided")
            )
        p = p_yes(reply.text, reply.first_token_logprobs)
        client.accounting.add_json_result("minicheck", p is not None)
        if p is None:  # an unusable reply: the task's failure, in the breaker's failure rate only
            error = LLMError(
                "invalid_json", "the reply said neither Yes nor No", purpose="judge:minicheck", attempts=1
            )
            client.accounting.add_failure(error)
            client.endpoint.breaker.failure(error)
            continue
        client.endpoint.breaker.success()
        readings.append(p)
        from_logprobs = from_logprobs or bool(reply.first_token_logprobs)
        if p >= 0.5:
            break  # a chunk supports the claim: the maximum is reached for the label's purpose
    if not readings:
        return not_run(METHOD, "the LLM answered neither Yes nor No")
    best = max(readings)
    return MethodResult(
        method=METHOD,
        score=audit_score(best, threshold),
        verdict="supported" if best >= 0.5 else "not_found",
        details={
            "style": "minicheck",
            "p_yes": round(best, 4),
            "chunks_read": len(readings),
            "chunks": len(parts),
            "logprobs": from_logprobs,
            "fever_label": "SUPPORTED" if best >= 0.5 else "NEI",
            "p_refuted": None,
        },
    )
