"""Red-team fixtures: the API client of a RAG front end, with or without the demo knowledge base.

Every case goes through ``POST /api/v1/audits`` on the real pipeline (the embedding model and
the entailment judge), as a front end would send it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import client_for, embedder  # noqa: F401 - shared API fixtures

DEMO_KB = Path(__file__).resolve().parents[2] / "demo" / "kb"


@pytest.fixture
def front_end(client_for, submitter, embedder, workspace):  # noqa: F811 - fixtures imported above
    workspace.allow_external_calls = False  # nothing leaves the test machine
    workspace.save(update_fields=["allow_external_calls"])
    return client_for(submitter)


@pytest.fixture
def demo_kb(workspace, embedder):  # noqa: F811 - fixture imported above
    from audit.services.ingestion import ingest_paths

    report = ingest_paths(workspace=workspace, paths=[DEMO_KB])
    assert not report.failures
    return workspace


def post_audit(
    client, answer: str, contexts=None, *, query: str = "What does the policy say?", **extra
) -> dict:
    body = {"query": query, "answer": answer, "contexts": contexts or [], "mode": "audit-local", **extra}
    response = client.post("/api/v1/audits", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()
