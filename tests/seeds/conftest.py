"""Fixtures of the seed-capability tests (issue 18): API clients per role and a small knowledge base."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.api.conftest import client_for, embedder  # noqa: F401  (shared fixtures)
from tests.llm.conftest import llm_server  # noqa: F401  (the scripted OpenAI-compatible server)


@pytest.fixture
def ingest(workspace, embedder):  # noqa: F811
    """Return a factory: ingest(title, text, domain=..., published_at=..., into=workspace) -> Document."""
    from audit.services.ingestion import DocumentInput, document_ingest

    def factory(
        title: str,
        text: str,
        *,
        domain: str = "general",
        published_at: dt.date | None = None,
        into=None,
        sensitive: bool = False,
    ):
        doc = DocumentInput(
            uri=f"kb://{title.lower().replace(' ', '-')}",
            title=title,
            text=text,
            domain=domain,
            published_at=published_at,
            sensitive=sensitive,
            source_path="test",
        )
        document, _ = document_ingest(workspace=into or workspace, doc=doc, actor=None)
        return document

    return factory
