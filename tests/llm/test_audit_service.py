"""The stored audit (``audit.services.audit.audit_and_store``) with no LLM, a failing one, a working
one and a spent budget: the run carries the cost and the failures, the claim cards which methods ran."""

from __future__ import annotations

import pytest

from audit.constants import LLM_BREAKER_FAILURES
from audit.models import VerificationRun
from tests.llm.test_pipeline import ANSWER, CONTEXTS, QUERY, script_a_working_llm

LLM_METHODS = {"llm_judge", "llm_cove", "selfcheck"}


@pytest.fixture
def point_llm_at(settings):
    def configure(base_url: str):
        settings.THEORIA = {
            **settings.THEORIA,
            "LLM_BASE_URL": base_url,
            "LLM_MODEL": "test-model",
            "LLM_TIMEOUT_S": 10.0,
            "LLM_MAX_RETRIES": 1,
            "LLM_STRUCTURED": "prompt",
            "LLM_TIME_BUDGET_S": 300.0,
        }  # a cold embedder load must not spend it

    return configure


def run_audit(workspace):
    from audit.services.audit import audit_and_store

    answer = audit_and_store(workspace=workspace, query=QUERY, answer_text=ANSWER, contexts=CONTEXTS)
    return answer, VerificationRun.objects.get(answer=answer)


def not_run(run) -> dict:
    return {w["method"]: w["message"] for w in run.warnings if w.get("code") == "method_not_run"}


def test_it_audits_offline_without_an_llm_and_says_which_methods_ran(workspace, point_llm_at):
    point_llm_at("")
    answer, run = run_audit(workspace)
    claims = list(answer.claims.all())
    assert claims and all(c.methods and not LLM_METHODS & set(c.methods) for c in claims)
    assert all("selfcheck_disagreement" not in c.metrics for c in claims)
    assert not_run(run)["llm_judge"] == "no LLM configured" and "selfcheck" in not_run(run)
    assert (run.llm_calls, run.prompt_tokens, run.llm_failures) == (0, 0, [])


def test_it_stores_an_offline_audit_with_the_failures_when_every_llm_call_fails(
    workspace, point_llm_at, llm_server
):
    point_llm_at(llm_server.base_url)  # default route: HTTP 500
    answer, run = run_audit(workspace)
    claims = list(answer.claims.all())
    assert claims and all(not LLM_METHODS & set(c.methods) for c in claims)
    assert run.llm_failures[0]["kind"] == "server_error" and run.llm_calls >= 2
    assert run.llm_calls <= 2 * (LLM_BREAKER_FAILURES + 4)  # the breaker spared the rest
    assert set(not_run(run)) >= LLM_METHODS | {"llm_extraction"}
    assert run.status == VerificationRun.Status.DONE


def test_it_stores_llm_verdicts_cost_and_selfcheck_disagreement(workspace, point_llm_at, llm_server):
    script_a_working_llm(llm_server)
    point_llm_at(llm_server.base_url)
    answer, run = run_audit(workspace)
    c1, c2 = answer.claims.order_by("claim_id")
    assert set(c1.methods) >= LLM_METHODS and (c1.label, c2.label) == ("SUPPORTED", "REFUTED")
    assert c2.metrics["selfcheck_disagreement"] == 1.0 and "selfcheck_disagreement" in c2.risk_flags
    assert c2.method_results["llm_judge"]["details"]["reasoning"] == "The evidence gives 1564, not 1587."
    assert run.llm_calls == len(llm_server.requests) and run.prompt_tokens == 11 * run.llm_calls
    assert run.llm_latency_ms > 0 and run.llm_failures == []


def test_it_goes_offline_and_warns_once_the_daily_budget_is_spent(workspace, point_llm_at, llm_server):
    script_a_working_llm(llm_server)
    point_llm_at(llm_server.base_url)
    workspace.llm_token_budget = 250  # less than one audit's worth (prompts are estimated before each call)
    workspace.save(update_fields=["llm_token_budget"])
    _, first = run_audit(workspace)
    assert first.prompt_tokens + first.completion_tokens > 0 and "llm_budget_exceeded" in {
        w["code"] for w in first.warnings
    }
    _, second = run_audit(workspace)  # gets what is left of today's budget, and no more
    spent = sum(r.prompt_tokens + r.completion_tokens for r in (first, second))
    assert spent <= 250 and "llm_budget_exceeded" in {w["code"] for w in second.warnings}
    workspace.llm_token_budget = spent  # now spent to the last token: the next run starts offline
    workspace.save(update_fields=["llm_token_budget"])
    calls_before = len(llm_server.requests)
    answer, third = run_audit(workspace)
    assert len(llm_server.requests) == calls_before and third.llm_calls == 0
    assert "llm_budget_exceeded" in {w["code"] for w in third.warnings}
    assert answer.claims.exists()
