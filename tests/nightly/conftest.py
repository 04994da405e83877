"""Fixtures of the nightly auditor and retention tests: stored answers and a small KB."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.factories import AnswerFactory, ClaimFactory, EvidenceFactory, VerificationRunFactory, sha


@pytest.fixture(autouse=True)
def _fresh_kb_indexes():
    """Each test builds its own KB; forget indexes cached by workspace id between tests."""
    from audit.kb.search import kb_index_reset

    kb_index_reset()
    yield
    kb_index_reset()


@pytest.fixture
def store_answer(db):
    """Return a factory storing an answer received at ``at`` with claims (and evidence and a run).

    ``claims`` is a list of (text, label, confidence) or dicts with Claim fields.
    """

    def factory(workspace, at: dt.datetime, claims=(("Some claim text.", "NEI", 0.3),), domain: str = ""):
        answer = AnswerFactory(
            workspace=workspace,
            query="q",
            original_text="",
            created_at=at,
            domain=domain,
            text=" ".join(c[0] if not isinstance(c, dict) else c["text"] for c in claims),
        )
        for n, spec in enumerate(claims, start=1):
            fields = (
                spec if isinstance(spec, dict) else {"text": spec[0], "label": spec[1], "confidence": spec[2]}
            )
            claim = ClaimFactory(answer=answer, claim_id=f"c{n}", **fields)
            EvidenceFactory(
                claim=claim,
                source_type="context",
                source_id="ctx-1",
                snippet="s",
                hash=sha(claim.text),
                title="",
                uri="",
                relevance=0.0,
                entailment=0.0,
            )
        VerificationRunFactory(answer=answer, started_at=at, claim_count=len(claims))
        return answer

    return factory


@pytest.fixture
def ingest(db):
    """Return a factory ingesting one KB document through the ingestion service."""
    from audit.services.ingestion import DocumentInput, document_ingest

    def factory(
        workspace,
        uri: str,
        text: str,
        *,
        title: str = "",
        domain: str = "general",
        published_at: dt.date | None = None,
    ):
        doc, _ = document_ingest(
            workspace=workspace,
            doc=DocumentInput(
                uri=uri, title=title or uri, text=text, domain=domain, published_at=published_at
            ),
        )
        return doc

    return factory
