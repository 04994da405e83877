"""The evidence rows a verified claim is stored with (unsaved ``Evidence``), built from the audit's
hits as soon as it is computed: the web step of a request reads them before the answer is stored,
and ``audit.services.audit.answer_store`` writes them."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from django.utils import timezone

from audit.models import Chunk, Claim, Evidence
from audit.pipeline.redaction import stored_snippet
from audit.pipeline.types import AuditResult, EvidenceHit

SNIPPET_CHARS = 1200


def _unit(x: float | None) -> float:
    return min(1.0, max(0.0, float(x or 0.0)))


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def _evidence_row(
    claim: Claim | None, rank: int, hit: EvidenceHit, kb_meta: dict[str, Any], now: dt.datetime
) -> Evidence:
    p = hit.passage
    meta = kb_meta.get(p.id)
    sensitive = bool(meta and meta.sensitive)
    chunk_id = meta.chunk_pk if meta is not None else None
    source_type = (
        p.source_type if p.source_type in Evidence.SourceType.values else Evidence.SourceType.CONTEXT
    )
    return Evidence(
        claim=claim,
        rank=rank,
        source_type=source_type,
        source_id=str(p.id)[:200],
        chunk_id=chunk_id,
        title=(p.title or "")[:500],
        uri=(p.uri or "")[:2000],
        snippet=stored_snippet(p.text[:SNIPPET_CHARS], sensitive=sensitive),
        hash=_sha256(p.text),
        relevance=_unit(hit.relevance),
        entailment=_unit(hit.entailment),
        published_at=p.published,
        provenance={
            "method": "cited" if hit.cited else "hybrid_search",
            "cited": hit.cited,
            "similarity": round(float(hit.similarity), 4),
            "best_sentence": stored_snippet(hit.best_sentence[:300], sensitive=sensitive),
        },
        retrieved_at=now,
    )


def evidence_rows_of(
    result: AuditResult, kb_meta: dict[str, Any] | None, now: dt.datetime | None = None
) -> dict[str, list[Evidence]]:
    """The evidence rows each claim of ``result`` gets when it is stored, by claim id, in rank order
    (unsaved, their claim not set; only knowledge-base chunks that still exist are linked). The web
    step of a request reads them before the answer is stored."""
    now = now or timezone.now()
    chunk_pks = [m.chunk_pk for m in (kb_meta or {}).values()]
    valid_chunks = (
        set(Chunk.objects.filter(pk__in=chunk_pks).values_list("pk", flat=True)) if kb_meta else set()
    )
    meta = {k: m for k, m in (kb_meta or {}).items() if m.chunk_pk in valid_chunks}
    return {
        v.claim.claim_id: [_evidence_row(None, rank, hit, meta, now) for rank, hit in enumerate(v.evidence)]
        for v in result.claims
    }
