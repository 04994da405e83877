"""Through the HTTP API: an Audit-Local request while the LLM fails every call, then the run's cost."""

from __future__ import annotations

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.llm.test_pipeline import ANSWER, CONTEXTS, QUERY


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def test_it_answers_an_audit_while_the_llm_fails_and_shows_the_failures_on_the_run(
        submitter, auditor, settings, llm_server):
    settings.THEORIA = {**settings.THEORIA, "LLM_BASE_URL": llm_server.base_url, "LLM_MODEL": "test-model",
                        "LLM_MAX_RETRIES": 0}  # default route: HTTP 500 for every call
    response = client_for(submitter).post("/api/v1/audits", {"query": QUERY, "answer": ANSWER, "contexts": CONTEXTS,
                                                             "mode": "audit-local"}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["claims"] and all(c["verification_methods"] for c in data["claims"])
    assert all(not {"llm_judge", "llm_cove", "selfcheck"} & set(c["verification_methods"]) for c in data["claims"])
    not_run = {w["method"] for w in data["audit"]["warnings"] if w.get("code") == "method_not_run"}
    assert {"llm_judge", "llm_cove", "selfcheck", "llm_extraction"} <= not_run
    assert data["audit"]["llm_calls"] == 1

    runs = client_for(auditor).get("/api/v1/runs").json()
    run = runs["results"][0] if isinstance(runs, dict) else runs[0]
    assert run["llm_calls"] == 1 and run["llm_failures"][0]["kind"] == "server_error"
    assert run["llm_failures"][0]["purpose"] == "extract_claims"
