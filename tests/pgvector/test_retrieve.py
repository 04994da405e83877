"""POST /api/v1/retrieve on the pgvector back end: the same filters, freshness and scores as in memory."""

from __future__ import annotations

import datetime as dt

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

pytestmark = [pytest.mark.pgvector, pytest.mark.slow]


def test_it_retrieves_with_filters_and_freshness_from_postgresql(workspace, auditor, embedder):
    from audit.kb.search import PgKnowledgeBase, kb_index
    from audit.services.ingestion import DocumentInput, document_ingest

    for title, text, published in (
        (
            "LTP review",
            "Long-term potentiation requires NMDA receptor activation in CA1.",
            dt.date(2026, 5, 1),
        ),
        (
            "LTP classic",
            "Long-term potentiation depends on NMDA receptors at CA1 synapses.",
            dt.date(2015, 3, 1),
        ),
    ):
        document_ingest(
            workspace=workspace,
            doc=DocumentInput(
                uri=f"kb://{title}", title=title, text=text, domain="neuroscience", published_at=published
            ),
        )
    assert isinstance(kb_index(workspace), PgKnowledgeBase)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=auditor)[0].key}")

    every = client.post(
        "/api/v1/retrieve", {"claim": "LTP requires NMDA receptor activation."}, format="json"
    ).json()
    recent = client.post(
        "/api/v1/retrieve",
        {"claim": "LTP requires NMDA receptor activation.", "published_after": "2020-01-01"},
        format="json",
    ).json()

    assert {r["title"] for r in every["results"]} == {"LTP review", "LTP classic"}
    assert next(r for r in every["results"] if r["title"] == "LTP classic")["stale"] is True
    assert [r["title"] for r in recent["results"]] == ["LTP review"] and recent["results"][0]["score"] > 0.25
