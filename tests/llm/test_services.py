"""Choosing LLM or offline per run (settings, residency switch, daily budget) and storing the cost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from audit.models import Answer, VerificationRun
from audit.services.llm import endpoint_is_local, llm_setup_for, run_record_llm_usage
from tests.llm.fake_llm import Reply, ok

NOW = datetime(2026, 11, 22, 15, 0, tzinfo=timezone.utc)


@pytest.fixture
def llm_settings(settings):
    def configure(base_url: str, **extra):
        settings.THEORIA = {
            **settings.THEORIA,
            "LLM_BASE_URL": base_url,
            "LLM_MODEL": "test-model",
            "LLM_TIMEOUT_S": 10.0,
            "LLM_MAX_RETRIES": 0,
            "LLM_STRUCTURED": "prompt",
            **extra,
        }

    return configure


def make_run(workspace, *, tokens: int, started_at: datetime) -> VerificationRun:
    answer = Answer.objects.create(workspace=workspace, query="q", text="a", mode="audit-local")
    return VerificationRun.objects.create(
        answer=answer,
        mode="audit-local",
        started_at=started_at,
        prompt_tokens=tokens // 2,
        completion_tokens=tokens - tokens // 2,
    )


def test_it_is_offline_without_a_configured_endpoint(workspace, llm_settings):
    llm_settings("")
    setup = llm_setup_for(workspace=workspace)
    assert setup.client is None and setup.offline_reason == "no LLM configured" and setup.warnings == []


def test_it_builds_a_client_from_the_settings(workspace, llm_settings):
    llm_settings("http://127.0.0.1:8080/v1", LLM_CONCURRENCY=3)
    config = llm_setup_for(workspace=workspace).client.config
    assert (config.base_url, config.model, config.timeout_s, config.max_retries, config.concurrency) == (
        "http://127.0.0.1:8080/v1",
        "test-model",
        10.0,
        0,
        3,
    )
    assert config.token_budget is None  # llm_token_budget 0: unlimited


def test_it_keeps_a_remote_endpoint_away_from_a_residency_bound_workspace(workspace, llm_settings):
    workspace.allow_external_calls = False
    llm_settings("https://api.openai.com/v1")
    setup = llm_setup_for(workspace=workspace)
    assert setup.client is None and setup.warnings[0]["code"] == "llm_residency"
    llm_settings("http://localhost:11434/v1")  # a local server keeps the data on the host
    assert llm_setup_for(workspace=workspace).client is not None
    llm_settings("https://llm.internal.example/v1", LLM_INSIDE_RESIDENCY=True)
    assert llm_setup_for(workspace=workspace).client is not None


def test_it_recognises_loopback_endpoints():
    assert endpoint_is_local("http://127.0.0.1:8080/v1") and endpoint_is_local("http://[::1]:8000/v1")
    assert not endpoint_is_local("http://10.0.0.5/v1") and not endpoint_is_local("https://api.openai.com/v1")


def test_it_gives_the_client_what_is_left_of_todays_budget(workspace, llm_settings):
    llm_settings("http://127.0.0.1:8080/v1")
    workspace.llm_token_budget = 1000
    workspace.save(update_fields=["llm_token_budget"])
    make_run(workspace, tokens=300, started_at=NOW - timedelta(hours=2))
    make_run(workspace, tokens=5000, started_at=NOW - timedelta(days=1))  # yesterday does not count
    assert llm_setup_for(workspace=workspace, now=NOW).client.config.token_budget == 700


def test_it_goes_offline_with_a_warning_once_todays_budget_is_spent(workspace, llm_settings):
    llm_settings("http://127.0.0.1:8080/v1")
    workspace.llm_token_budget = 1000
    workspace.save(update_fields=["llm_token_budget"])
    make_run(workspace, tokens=1000, started_at=NOW.replace(hour=0, minute=1))
    setup = llm_setup_for(workspace=workspace, now=NOW)
    assert setup.client is None and setup.offline_reason == "daily LLM token budget exceeded"
    assert (
        setup.warnings[0]["code"] == "llm_budget_exceeded"
        and "1000 used today" in setup.warnings[0]["message"]
    )


def test_it_stores_calls_tokens_latency_failures_and_warnings_on_the_run(workspace, llm_settings, llm_server):
    from audit.pipeline.llm import LLMError

    llm_server.route("TASK: judge-me", ok("fine", prompt_tokens=30, completion_tokens=20))
    llm_server.route("TASK: refused", Reply(status=400))
    llm_settings(llm_server.base_url)
    workspace.llm_token_budget = 110
    workspace.save(update_fields=["llm_token_budget"])
    setup = llm_setup_for(workspace=workspace)
    messages = [{"role": "user", "content": "TASK: judge-me"}]
    setup.client.complete(purpose="judge", messages=messages)
    with pytest.raises(LLMError):
        setup.client.complete(purpose="judge", messages=[{"role": "user", "content": "TASK: refused"}])
    setup.client.complete(purpose="judge", messages=messages)
    with pytest.raises(
        LLMError
    ):  # 100 tokens used of 110: too few left for a call, the budget stops the run's LLM use
        setup.client.complete(purpose="judge", messages=messages)
    run = make_run(workspace, tokens=0, started_at=NOW)
    run_record_llm_usage(run=run, setup=setup)
    run.refresh_from_db()
    assert (run.llm_calls, run.prompt_tokens, run.completion_tokens) == (3, 60, 40)  # the 400 is a call too
    assert run.llm_latency_ms > 0
    assert [(f["purpose"], f["kind"]) for f in run.llm_failures] == [
        ("judge", "client_error"),
        ("judge", "budget"),
    ]
    assert [w["code"] for w in run.warnings] == ["llm_budget_exceeded"]


def test_it_records_zero_cost_and_the_residency_warning_for_an_offline_run(workspace, llm_settings):
    workspace.allow_external_calls = False
    llm_settings("https://api.openai.com/v1")
    run = make_run(workspace, tokens=0, started_at=NOW)
    run_record_llm_usage(run=run, setup=llm_setup_for(workspace=workspace))
    run.refresh_from_db()
    assert (run.llm_calls, run.llm_failures) == (0, []) and run.warnings[0]["code"] == "llm_residency"


def test_it_stays_offline_with_a_warning_when_the_endpoint_is_not_a_url(workspace, llm_settings):
    llm_settings("127.0.0.1:8080")
    setup = llm_setup_for(workspace=workspace)
    assert setup.client is None and setup.warnings[0]["code"] == "llm_misconfigured"


def test_it_sums_llm_usage_per_day_for_the_dashboard(workspace):
    from audit.selectors.llm import llm_usage_by_day

    first = make_run(workspace, tokens=100, started_at=NOW - timedelta(days=1))
    first.llm_calls, first.llm_failures = 4, [{"kind": "timeout"}]
    first.save(update_fields=["llm_calls", "llm_failures"])
    make_run(workspace, tokens=50, started_at=NOW - timedelta(days=1, hours=1))
    make_run(workspace, tokens=10, started_at=NOW)
    make_run(workspace, tokens=999, started_at=NOW - timedelta(days=9))  # before the range
    rows = llm_usage_by_day(
        workspace=workspace, since=NOW - timedelta(days=2), until=NOW + timedelta(hours=1)
    )
    assert [
        (
            r["day"].isoformat(),
            r["runs"],
            r["llm_calls"],
            r["prompt_tokens"] + r["completion_tokens"],
            r["llm_failures"],
        )
        for r in rows
    ] == [("2026-11-21", 2, 4, 150, 1), ("2026-11-22", 1, 0, 10, 0)]
