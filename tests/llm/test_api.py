"""Through the HTTP API: an Audit-Local request while the LLM fails every call, then the run's cost."""

from __future__ import annotations

import time

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.constants import LLM_BREAKER_FAILURES
from tests.llm.fake_llm import ok
from tests.llm.test_pipeline import ANSWER, CONTEXTS, QUERY


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def test_it_answers_an_audit_while_the_llm_fails_and_shows_the_failures_on_the_run(
    submitter, auditor, settings, llm_server
):
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_MODEL": "test-model",
        "LLM_MAX_RETRIES": 0,
        "LLM_STRUCTURED": "prompt",
    }  # default route: HTTP 500 for every call
    response = client_for(submitter).post(
        "/api/v1/audits",
        {"query": QUERY, "answer": ANSWER, "contexts": CONTEXTS, "mode": "audit-local"},
        format="json",
    )
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["claims"] and all(c["verification_methods"] for c in data["claims"])
    assert all(
        not {"llm_judge", "llm_cove", "selfcheck"} & set(c["verification_methods"]) for c in data["claims"]
    )
    not_run = {w["method"] for w in data["audit"]["warnings"] if w.get("code") == "method_not_run"}
    assert {"llm_judge", "llm_cove", "selfcheck", "llm_extraction"} <= not_run
    # the breaker opens after LLM_BREAKER_FAILURES failures in a row; calls already in flight finish
    assert 1 <= data["audit"]["llm_calls"] <= LLM_BREAKER_FAILURES + 4

    runs = client_for(auditor).get("/api/v1/runs").json()
    run = runs["results"][0] if isinstance(runs, dict) else runs[0]
    assert run["llm_calls"] == data["audit"]["llm_calls"] and run["llm_failures"][0]["kind"] == "server_error"
    assert run["llm_failures"][0]["purpose"] == "extract_claims"


def test_a_drafted_answer_shares_the_audits_llm_client_so_the_draft_is_on_the_run(
    submitter, settings, llm_server
):
    from audit.models import VerificationRun
    from tests.llm.test_pipeline import script_a_working_llm

    script_a_working_llm(llm_server)
    llm_server.route(
        "TASK: draft_answer",
        ok(
            "The hippocampus consolidates long-term memory [1]. Arantius named the hippocampus in 1587 [2].",
            delay_s=2.0,
        ),
    )
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_MODEL": "test-model",
        "LLM_STRUCTURED": "prompt",
        "LLM_TIME_BUDGET_S": 300.0,
    }
    wall_at_monotonic_zero = time.time() - time.monotonic()  # the fake server stamps requests monotonic
    response = client_for(submitter).post(
        "/api/v1/audits", {"query": QUERY, "contexts": CONTEXTS, "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 201, response.content
    run = VerificationRun.objects.get(answer__public_id=response.json()["answer_id"])
    assert run.llm_calls == len(llm_server.requests)  # the draft's call included
    (draft,) = llm_server.calls("TASK: draft_answer")
    whole = (run.finished_at - run.started_at).total_seconds() * 1000
    assert run.duration_ms >= 0.8 * whole  # duration_ms covers the whole audit
    # the draft (2 s at the server) is inside the run: it started before the draft was asked for. Not a
    # margin on the request's wall time, which a busy machine stretches outside the run.
    draft_asked = wall_at_monotonic_zero + draft["at"]
    assert run.started_at.timestamp() <= draft_asked + 0.5
    assert run.duration_ms >= 2000


def test_a_normal_mode_draft_counts_in_the_daily_token_budget(submitter, workspace, settings, llm_server):
    from django.utils import timezone

    from audit.selectors.llm import llm_tokens_used, start_of_day

    llm_server.route(
        "TASK: draft_answer",
        ok("The hippocampus consolidates long-term memory [1].", prompt_tokens=40, completion_tokens=12),
    )
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_MODEL": "test-model",
        "LLM_STRUCTURED": "prompt",
    }
    response = client_for(submitter).post(
        "/api/v1/audits", {"query": QUERY, "contexts": CONTEXTS, "mode": "normal"}, format="json"
    )
    assert response.status_code == 201, response.content
    assert (
        llm_tokens_used(workspace=workspace, since=start_of_day(timezone.now())) == 52
    )  # no run, still counted


def test_the_workspace_settings_show_the_endpoints_breaker_and_the_run_says_it_was_open(
    submitter, auditor, settings, llm_server
):
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_MODEL": "test-model",
        "LLM_MAX_RETRIES": 0,
        "LLM_STRUCTURED": "prompt",
    }  # default route: HTTP 500 for every call, an outage
    before = client_for(auditor).get("/api/v1/settings/workspace").json()["llm"]
    assert before["configured"] and before["model"] == "test-model"
    assert before["breaker"]["state"] == "not used yet"
    response = client_for(submitter).post(
        "/api/v1/audits",
        {"query": QUERY, "answer": ANSWER, "contexts": CONTEXTS, "mode": "audit-local"},
        format="json",
    )
    assert response.status_code == 201, response.content
    warnings = {w["code"] for w in response.json()["audit"]["warnings"]}
    assert "llm_circuit_open" in warnings
    breaker = client_for(auditor).get("/api/v1/settings/workspace").json()["llm"]["breaker"]
    assert breaker["state"] == "open" and breaker["opened_by"] == "outage"
    assert breaker["last_failure"]["kind"] == "server_error"
    assert breaker["thresholds"]["transport_failures_in_a_row"] == LLM_BREAKER_FAILURES
