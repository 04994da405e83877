"""Claim-focused retrieval over a workspace's knowledge base (docs/SPEC_NOTES.md#evidence-and-retrieval).

``kb_retrieve`` is what ``POST /api/v1/retrieve`` serves: the same hybrid index the pipeline
searches (``audit.kb.search.kb_index``), the same scoring (fused dense + BM25 score, numeric
boost, ``MIN_SEARCH_RELEVANCE``) and the same freshness rule as the pipeline's freshness method
(a passage is stale when its age in months exceeds the workspace's limit for the request's
domain, else for the document's domain). Filters narrow the candidates before the top ``k``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from audit.models import Workspace
from audit.pipeline.extraction import strip_citations
from audit.pipeline.methods.freshness import age_months
from audit.pipeline.redaction import stored_snippet
from audit.pipeline.retrieval import search_filtered
from audit.selectors import kb_index
from audit.selectors.api import thresholds_for

if TYPE_CHECKING:
    from audit.kb.search import ChunkMeta


@dataclass(frozen=True)
class RetrievalFilters:
    domain: str = ""  # documents of this domain tag only; also the domain whose freshness limit applies
    max_age_months: float | None = None  # dated passages at most this old
    published_after: date | None = None  # dated passages published on or after this day


def kb_retrieve(
    *,
    workspace: Workspace,
    text: str,
    is_claim: bool,
    top_k: int,
    filters: RetrievalFilters,
    now: datetime,
    embed: Callable[[list[str]], Any] | None = None,
) -> list[dict[str, Any]]:
    """The workspace's best knowledge-base passages for a claim or a query, best first."""
    kb = kb_index(workspace)
    if not len(kb):
        return []
    thresholds = thresholds_for(workspace)
    query = strip_citations(text) if is_claim else text
    if embed is None:
        from audit.pipeline.embedding import get_embedder

        embed = get_embedder().encode
    vec = embed([query])[0]
    wanted_domain = filters.domain.lower()

    def age_of(meta: ChunkMeta) -> float | None:
        return None if meta.published is None else age_months(meta.published, now)

    def passes(meta: ChunkMeta) -> bool:
        if wanted_domain and meta.domain.lower() != wanted_domain:
            return False
        if filters.max_age_months is None and filters.published_after is None:
            return True
        if meta.published is None:  # an undated passage cannot show it meets a date filter
            return False
        if filters.published_after is not None and meta.published < filters.published_after:
            return False
        return filters.max_age_months is None or age_months(meta.published, now) <= filters.max_age_months

    hits = search_filtered(
        kb.index,
        query,
        vec,
        k=top_k,
        numeric_boost=thresholds.numeric_boost,
        keep=lambda ids: {i for i, meta in kb.meta_for(ids).items() if passes(meta)},
        texts=lambda ids: {i: p.text for i, p in kb.passages(ids).items()},
    )
    ids = [source_id for source_id, _ in hits]
    metas, passages = kb.meta_for(ids), kb.passages(ids)
    results = []
    for source_id, score in hits:
        meta, passage = metas.get(source_id), passages.get(source_id)
        if meta is None or passage is None:  # deleted between the search and this read
            continue
        limit = thresholds.freshness_for(wanted_domain or meta.domain)
        age = age_of(meta)
        results.append(
            {
                "id": source_id,
                "document_id": meta.document_pk,
                "title": meta.title,
                "uri": meta.uri,
                "domain": meta.domain,
                "published_at": meta.published,
                "age_months": None if age is None else round(age, 1),
                "stale": None if age is None else age > limit,
                "freshness_limit_months": limit,
                "score": round(score, 4),
                "text": stored_snippet(passage.text, sensitive=meta.sensitive),
            }
        )
    return results
