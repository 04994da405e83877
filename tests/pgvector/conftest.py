"""The pgvector tests run with ``--pgvector`` (``make test`` does): a local PostgreSQL with pgvector."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedder():
    from audit.pipeline.embedding import get_embedder

    return get_embedder()


@pytest.fixture
def ingest(workspace, embedder):
    """Return a factory: ingest(title, text, workspace=...) -> Document, through the ingestion service."""
    from audit.services.ingestion import DocumentInput, document_ingest

    def factory(title: str, text: str, *, into=None):
        slug = title.lower().replace(" ", "-")
        document, _ = document_ingest(
            workspace=into or workspace, doc=DocumentInput(uri=f"kb://{slug}", title=title, text=text)
        )
        return document

    return factory
