"""Asynchronous deep checks (issue 20): the offline result at once, the LLM methods in a django-q2
task (synchronous in tests) that relabels the claim cards, opens cases, shows progress on the run
and announces completion."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import Claim, VerificationRun
from tests.llm.fake_llm import FakeLLMServer, per_claim
from tests.llm.test_pipeline import ANSWER, CONTEXTS, QUERY, script_a_working_llm

LLM_METHODS = {"llm_judge", "llm_cove", "selfcheck"}


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def llm_for_audits(settings, llm_server):
    script_a_working_llm(llm_server)
    # the judge contradicts the first claim, which the offline methods support: a relabel
    llm_server.routes.insert(
        0,
        (
            ("TASK: isolated_verification",),
            [
                per_claim(
                    "results",
                    lambda text: {"verdict": "CONTRADICTED", "reasoning": "Passage [1] says otherwise."},
                )
            ],
        ),
    )
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": llm_server.base_url,
        "LLM_MODEL": "test-model",
        "LLM_STRUCTURED": "prompt",
        "LLM_TIME_BUDGET_S": 300.0,
    }
    return llm_server


def post_audit(user, django_capture_on_commit_callbacks, **extra):
    body = {"query": QUERY, "answer": ANSWER, "contexts": CONTEXTS, "mode": "audit-local", **extra}
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client_for(user).post("/api/v1/audits", body, format="json")
    assert response.status_code == 201, response.content
    return response.json(), callbacks


def test_it_answers_offline_at_once_and_relabels_the_cards_in_the_deep_check(
    submitter, auditor, llm_for_audits, django_capture_on_commit_callbacks
):
    requests_before = len(llm_for_audits.requests)
    data, callbacks = post_audit(submitter, django_capture_on_commit_callbacks, deep="async")
    # the response: offline verdicts, the LLM methods deferred, the deep check queued
    assert all(not LLM_METHODS & set(c["verification_methods"]) for c in data["claims"])
    deferred = {
        w["method"]: w["message"] for w in data["audit"]["warnings"] if w.get("code") == "method_not_run"
    }
    assert all(deferred[m].startswith("deferred") for m in LLM_METHODS)
    assert data["audit"]["deep_checks"]["status"] == "queued" and data["audit"]["llm_calls"] == 0
    offline_labels = {c["claim_id"]: c["label"] for c in data["claims"]}
    assert offline_labels["c1"] == "SUPPORTED"
    # the task ran after the commit (django-q2 synchronous in tests)
    assert len(callbacks) >= 1 and len(llm_for_audits.requests) > requests_before
    run = client_for(auditor).get(f"/api/v1/runs/{data['audit']['run_id']}").json()
    assert run["deep_checks"]["status"] == "done" and run["deep_checks"]["progress"] == {
        "done": 3,
        "total": 3,
    }
    # the LLM's CONTRADICTED against a confident offline SUPPORTED: not flipped, sent to review
    # (docs/LLM.md#weighing-the-llm-judge)
    assert run["deep_checks"]["relabels"] == []
    assert (
        set(run["methods"]) >= LLM_METHODS
        and run["llm_calls"] == len(llm_for_audits.requests) - requests_before
    )
    assert not any(
        w.get("method") in LLM_METHODS for w in run["warnings"] if w.get("code") == "method_not_run"
    )
    c1 = Claim.objects.get(answer__public_id=data["answer_id"], claim_id="c1")
    assert c1.label == "SUPPORTED" and set(c1.methods) >= LLM_METHODS
    assert "llm_disagreement" in c1.risk_flags
    assert c1.method_results["llm_judge"]["details"]["reasoning"] == "Passage [1] says otherwise."
    assert c1.review_cases.get().reasons == ["llm_disagreement"]


def test_the_workspace_default_makes_deep_checks_asynchronous(
    submitter, workspace, llm_for_audits, django_capture_on_commit_callbacks
):
    workspace.threshold_overrides = {**workspace.threshold_overrides, "deep_checks": "async"}
    workspace.save(update_fields=["threshold_overrides"])
    data, _ = post_audit(submitter, django_capture_on_commit_callbacks)
    assert VerificationRun.objects.get(pk=data["audit"]["run_id"]).deep_checks["status"] == "done"
    data, _ = post_audit(submitter, django_capture_on_commit_callbacks, deep="sync")  # the request wins
    assert data["audit"]["deep_checks"] == {} and data["audit"]["llm_calls"] > 0


def test_it_announces_the_finished_deep_check_to_the_webhook(
    submitter, settings, llm_for_audits, django_capture_on_commit_callbacks
):
    from tests.llm.fake_llm import ok

    hook = FakeLLMServer().start()
    try:
        hook.default = ok("received")
        settings.THEORIA = {
            **settings.THEORIA,
            "DEEP_CHECK_WEBHOOK_URL": hook.base_url + "/hook",
            "WEB_ALLOW_PRIVATE_ADDRESSES": True,  # the stand-in listens on loopback, which the guard refuses otherwise
        }
        data, _ = post_audit(submitter, django_capture_on_commit_callbacks, deep="async")
    finally:
        hook.stop()
    (sent,) = hook.requests
    assert sent["path"] == "/v1/hook" and sent["body"]["event"] == "deep_check.finished"
    assert sent["body"]["answer_id"] == data["answer_id"] and sent["body"]["status"] == "done"
    assert VerificationRun.objects.get(pk=data["audit"]["run_id"]).deep_checks["webhook"] == "HTTP 200"


def test_without_an_llm_async_is_an_ordinary_offline_audit(
    submitter, settings, django_capture_on_commit_callbacks
):
    settings.THEORIA = {**settings.THEORIA, "LLM_BASE_URL": ""}
    data, _ = post_audit(submitter, django_capture_on_commit_callbacks, deep="async")
    assert data["audit"]["deep_checks"] == {}


def test_it_refuses_an_unknown_deep_value_naming_the_field(submitter):
    response = client_for(submitter).post(
        "/api/v1/audits", {"query": QUERY, "answer": ANSWER, "deep": "later"}, format="json"
    )
    assert response.status_code == 400 and "deep" in response.json().get("errors", response.json())
