"""Wiring of the loop to the pipeline, the knowledge base and the LLM: ``revise_audit`` and its retriever
and rewriter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from audit.constants import CORRECTIVE_PASSAGES_PER_QUERY, Thresholds
from audit.pipeline.job import VerificationJob
from audit.pipeline.llm.client import LLMClient
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.revision.loop import revise_answer
from audit.pipeline.revision.model import Retrieve, RevisionOptions, RevisionOutcome, Rewriter
from audit.pipeline.revision.whole import judge_revised_sentences
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, Passage

Embed = Callable[[list[str]], Any]  # texts -> their vectors (the embedder's ``encode``)


# --- wiring to the pipeline, the knowledge base and the LLM ----------------------------------
def kb_retriever(
    kb: KnowledgeBase | None, *, embed: Embed | None = None, k: int = CORRECTIVE_PASSAGES_PER_QUERY
) -> Retrieve:
    """``retrieve(queries)`` over a ``KnowledgeBase``: the best ``k`` chunks of each targeted query."""

    def retrieve(queries: list[str]) -> list[Passage]:
        if kb is None or not len(kb.index) or not queries:
            return []
        encode = embed
        if encode is None:
            from audit.pipeline.embedding import get_embedder

            encode = get_embedder().encode
        results = kb.index.search_many(queries, encode(queries), k=k)
        ids = list(dict.fromkeys(i for res in results for i, _ in res))
        found = kb.lookup(ids) if ids else {}
        return [found[i] for i in ids if i in found]

    return retrieve


def llm_rewriter(client: LLMClient | None) -> Rewriter | None:
    """The LLM's ``rewrite_answer`` (docs/LLM.md) bound to ``client``, or None when no LLM is usable."""
    if client is None or not getattr(client, "available", False):
        return None
    from audit.pipeline.llm.drafting import make_rewriter

    rewriter: Rewriter | None = make_rewriter(client)
    return rewriter


def revise_job(
    job: VerificationJob,
    *,
    initial: AuditResult | None = None,
    kb: KnowledgeBase | None = None,
    options: RevisionOptions = RevisionOptions(),
    given: int | None = None,
) -> RevisionOutcome:
    """Revise the job's answer (:func:`revise_audit` with its query, text, passages, domain, the
    plan's thresholds and the client of its LLM methods)."""
    return revise_audit(
        query=job.query,
        answer=job.answer_text,
        contexts=list(job.passages),
        kb=kb,
        initial=initial,
        domain=job.domain,
        thresholds=job.plan.thresholds,
        llm=job.llm_methods,
        options=options,
        given=given,
    )


def revise_audit(
    *,
    query: str,
    answer: str,
    contexts: Sequence[str | dict[str, Any] | Passage] | None = None,
    kb: KnowledgeBase | None = None,
    initial: AuditResult | None = None,
    domain: str = "",
    thresholds: Thresholds | None = None,
    llm: LLMClient | None = None,
    embed: Embed | None = None,
    options: RevisionOptions = RevisionOptions(),
    given: int | None = None,
) -> RevisionOutcome:
    """Audit and revise one answer with the pipeline's ``audit_answer`` as the verifier.

    Corrective retrieval searches ``kb`` (a ``KnowledgeBase``) when given; the LLM rewrites when
    ``llm`` is a usable client, else the offline strategies do.
    """
    from audit.pipeline.audit import audit_answer, verify_claims
    from audit.pipeline.methods import LLM_METHODS, OFFLINE_METHODS
    from audit.pipeline.retrieval import as_passages

    t = thresholds or Thresholds()  # pure-function API default (tests, evaluation); jobs pass theirs
    # the judge on one passage runs the methods that label claims (with the LLM judge when configured)
    methods = (
        (*OFFLINE_METHODS, "llm_judge") if llm is not None and "llm_judge" in LLM_METHODS else OFFLINE_METHODS
    )

    def verify(
        text: str, pool: list[Passage], reuse: Callable[[ClaimDraft], ClaimVerdict | None] | None = None
    ) -> AuditResult:
        return audit_answer(
            query, text, pool, kb=kb, domain=domain, thresholds=t, embed=embed, llm=llm, reuse=reuse
        )

    def judge(claim_text: str, passage: Passage) -> ClaimVerdict:
        return verify_claims(
            [(claim_text, [passage])], thresholds=t, domain=domain, embed=embed, llm=llm, methods=methods
        )[0]

    def judge_sentence(text: str, passages: list[Passage]) -> ClaimVerdict:
        return verify_claims(
            [(text, passages)], thresholds=t, domain=domain, embed=embed, llm=llm, methods=methods
        )[0]

    retrieve = kb_retriever(kb, embed=embed) if kb is not None else None
    outcome = revise_answer(
        query=query,
        answer=answer,
        passages=as_passages(contexts or []),
        verify=verify,
        retrieve=retrieve,
        rewriter=llm_rewriter(llm),
        thresholds=t,
        options=options,
        initial=initial,
        judge=judge,
        given=given,
        reverify=verify,
    )
    outcome.sentences = judge_revised_sentences(
        outcome, judge=judge_sentence, similarity=_similarity(embed), threshold=t.audit_score_threshold
    )
    return outcome


def _similarity(embed: Embed | None = None) -> Callable[[str, str], float]:
    """Cosine of two short texts with the embedder the pipeline uses (the structural check's own)."""
    from audit.pipeline.embedding import similarity_fn

    return similarity_fn(embed)
