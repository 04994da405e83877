"""The evidence rows a verified claim is stored with (unsaved ``Evidence``), made from the rows the
pipeline computed with the audit (``audit.pipeline.web.step.EvidenceItem``: its snippet already
masked; its knowledge-base chunk named by the metadata the pipeline read through the knowledge
base's port, ``audit.kb.search``'s ``cited_meta``). ``audit.services.audit.answer_store`` writes them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from audit.models import Evidence
from audit.pipeline.web.step import EvidenceItem


def evidence_rows_of(
    items: Mapping[str, tuple[EvidenceItem, ...]],
    kb_meta: Mapping[str, Any] | None,
    now: dt.datetime | None = None,
) -> dict[str, list[Evidence]]:
    """The evidence rows each claim gets when it is stored, by claim id, in rank order (unsaved,
    their claim not set; knowledge-base chunks linked by ``kb_meta``, those still stored)."""
    now = now or timezone.now()
    meta = kb_meta or {}
    return {claim_id: [_evidence_row(item, meta, now) for item in rows] for claim_id, rows in items.items()}


def _evidence_row(item: EvidenceItem, kb_meta: Mapping[str, Any], now: dt.datetime) -> Evidence:
    chunk = kb_meta.get(item.source_id)
    return Evidence(
        claim=None,
        rank=item.rank,
        source_type=item.source_type,
        source_id=item.source_id,
        chunk_id=chunk.chunk_pk if chunk is not None else None,
        title=item.title,
        uri=item.uri,
        snippet=item.snippet,
        hash=item.hash,
        relevance=item.relevance,
        entailment=item.entailment,
        published_at=item.published,
        provenance=dict(item.provenance),
        retrieved_at=now,
    )
