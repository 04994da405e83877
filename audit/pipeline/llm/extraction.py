"""LLM claim extraction with the deterministic JSON prompt of docs/SPEC_NOTES.md#claims, offline fallback.

The LLM gives claim texts; the offline extractor's machinery gives each claim its span (the
answer sentence it overlaps most), its citation anchors, its type and its importance, so an
LLM claim card carries the same fields as an offline one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.pipeline import extraction as offline
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.llm.common import NO_LLM, failure_reason, unavailable_reason
from audit.pipeline.llm.prompts import EXTRACT_SYSTEM, messages
from audit.pipeline.text import content_stems, normalize
from audit.pipeline.types import ClaimDraft

METHOD_LLM = "llm_extraction"
METHOD_OFFLINE = "rule_extraction"
MIN_GROUNDING = 0.5  # share of a claim's content words that must occur in the answer


@dataclass
class Extraction:
    """The claims of an answer and how they were obtained (``fallback``: why not by the LLM)."""

    claims: list[ClaimDraft]
    method: str
    fallback: str = ""


def extract_claims(client: LLMClient | None, answer: str, query: str = "") -> Extraction:
    """Claims of ``answer`` by the LLM when one is usable, else by the offline extractor.

    Any failure (transport, empty reply, JSON invalid twice, schema) falls back to the offline
    extractor; the failure is already recorded in ``client.accounting``.
    """
    text = normalize(answer or "")
    reason = unavailable_reason(client) or ("empty answer" if not text.strip() else None)
    if reason or client is None:
        return Extraction(offline.extract_claims(text, query), METHOD_OFFLINE, reason or NO_LLM)
    sentences = len(offline.split_sentences(text)) or 1
    try:
        rows = client.complete_json(
            purpose="extract_claims", items=sentences, messages=messages(EXTRACT_SYSTEM, f"Answer:\n{text}")
        )["claims"]
    except LLMError as exc:
        reason = failure_reason(exc, "") if exc.kind in ("budget", "circuit_open") else exc.kind
        return Extraction(offline.extract_claims(text, query), METHOD_OFFLINE, reason)
    claims = claims_from_rows(rows, text, query)
    if not claims:
        client.accounting.add_failure(
            LLMError(
                "schema", "no extracted claim is grounded in the answer", purpose="extract_claims", attempts=1
            )
        )
        return Extraction(offline.extract_claims(text, query), METHOD_OFFLINE, "schema")
    return Extraction(claims, METHOD_LLM)


def claims_from_rows(rows: list[dict[str, Any]], text: str, query: str = "") -> list[ClaimDraft]:
    """ClaimDrafts for validated LLM rows, renumbered c1..cn, anchored to the answer's sentences.

    A row sharing less than MIN_GROUNDING of its content words with the answer is dropped: the
    extractor must split the answer, not add to it.
    """
    spans = offline.split_sentences_with_spans(text) or [(0, len(text))]
    sentence_stems = [set(content_stems(text[s:e])) for s, e in spans]
    answer_stems = set().union(*sentence_stems)
    claims: list[ClaimDraft] = []
    seen: set[str] = set()
    first_span = None
    for row in rows:
        claim_text = offline.strip_citations(" ".join(row["text"].split()))
        if not claim_text or claim_text.lower() in seen:
            continue
        seen.add(claim_text.lower())
        stems = set(content_stems(claim_text))
        if len(stems & answer_stems) < MIN_GROUNDING * len(stems):
            continue
        overlaps = [len(stems & s) / (len(stems) or 1) for s in sentence_stems]
        best = max(range(len(spans)), key=lambda i: (overlaps[i], -i))
        start, end = spans[best]
        first_span = first_span if first_span is not None else best
        ctype = offline.claim_type(claim_text)
        claims.append(
            ClaimDraft(
                claim_id=f"c{len(claims) + 1}",
                text=claim_text,
                span=(start, end),
                type=ctype,
                importance=offline.importance(claim_text, query, ctype=ctype, first=best == first_span),
                citations=offline.citation_anchors(text[start:end]),
                sentence=offline.clean_sentence(text[start:end]),
            )
        )
    return claims
