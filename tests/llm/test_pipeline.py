"""Whole audits (``audit.pipeline.audit.audit_answer``) with an LLM that works, fails or is slow."""

from __future__ import annotations

import time

import pytest

from audit.constants import LLM_BREAKER_FAILURES
from audit.pipeline.audit import audit_answer
from tests.llm.fake_llm import Reply, ok, per_claim

QUERY = "What does the hippocampus do?"
ANSWER = "The hippocampus consolidates long-term memory [1]. Arantius named the hippocampus in 1587 [2]."
CONTEXTS = [
    {"id": "p1", "text": "The hippocampus consolidates long-term memory."},
    {"id": "p2", "text": "The anatomist Arantius named the hippocampus in 1564."},
]
LLM_METHODS = {"llm_judge", "llm_cove", "selfcheck"}


def script_a_working_llm(server) -> None:
    server.route(
        "TASK: extract_claims",
        ok(
            {
                "claims": [
                    {"text": "The hippocampus consolidates long-term memory."},
                    {"text": "Arantius named the hippocampus in 1587."},
                ]
            }
        ),
    )
    server.route(
        "TASK: isolated_verification",
        per_claim(
            "results",
            lambda text: (
                {"verdict": "CONTRADICTED", "reasoning": "The evidence gives 1564, not 1587."}
                if "1587" in text
                else {"verdict": "SUPPORTED", "reasoning": "Stated in [1]."}
            ),
        ),
    )
    server.route(
        "TASK: cove_questions",
        per_claim("results", lambda _: {"questions": ["What does the hippocampus do?"]}),
    )
    server.route(
        "TASK: cove_answer",
        ok({"answers": [{"question": 1, "answer": "It consolidates long-term memory.", "found": True}]}),
    )
    server.route(
        "TASK: cove_compare",
        per_claim("results", lambda text: {"verdicts": ["INCONSISTENT" if "1587" in text else "CONSISTENT"]}),
    )
    server.route(
        "TASK: selfcheck_sample",
        ok("The hippocampus consolidates long-term memory; Arantius named it in 1564."),
    )
    server.route(
        "TASK: selfcheck_judge",
        per_claim("results", lambda text: {"verdict": "CONTRADICTS" if "1587" in text else "SUPPORTS"}),
    )


def test_it_runs_every_llm_method_and_lets_the_judge_decide(llm_server, make_client):
    script_a_working_llm(llm_server)
    client = make_client()
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
    c1, c2 = result.claims
    assert set(c1.method_names) >= LLM_METHODS and set(c2.method_names) >= LLM_METHODS
    assert (c1.label, c2.label) == ("SUPPORTED", "REFUTED")
    assert c2.metrics["selfcheck_disagreement"] == 1.0 and c1.metrics["selfcheck_disagreement"] == 0.0
    assert "selfcheck_disagreement" in c2.risk_flags  # above 0.40: feeds escalation
    assert c2.metrics["cove_consistency"] == 0.0
    assert result.metrics["selfcheck_disagreement"] == 0.5
    assert result.methods_not_run == {}
    acc = client.accounting
    assert acc.failures == [] and acc.calls == len(llm_server.requests)
    assert acc.calls_by_purpose["selfcheck_sample"] == 3 and acc.calls_by_purpose["extract_claims"] == 1
    assert acc.prompt_tokens == 11 * acc.calls and acc.completion_tokens == 7 * acc.calls


def test_it_completes_offline_when_every_llm_call_fails(llm_server, make_client):
    offline = audit_answer(QUERY, ANSWER, CONTEXTS)
    client = make_client(max_retries=1)  # default route: HTTP 500 for every call
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
    assert [(c.claim.text, c.label, c.confidence) for c in result.claims] == [
        (c.claim.text, c.label, c.confidence) for c in offline.claims
    ]
    assert not LLM_METHODS & {m for c in result.claims for m in c.method_names}
    assert all("selfcheck_disagreement" not in c.metrics for c in result.claims)
    assert result.metrics["selfcheck_disagreement"] is None
    assert set(result.methods_not_run) == LLM_METHODS | {"llm_extraction"}
    failures = client.accounting.failures
    assert (failures[0]["purpose"], failures[0]["kind"], failures[0]["attempts"]) == (
        "extract_claims",
        "server_error",
        2,
    )
    assert (
        "server_error" in result.methods_not_run["llm_judge"]
        or "unavailable" in result.methods_not_run["llm_judge"]
    )
    assert client.endpoint.breaker.is_open
    # LLM_BREAKER_FAILURES failed calls (each with its retry), plus calls already in flight: the breaker spared the rest
    assert len(llm_server.requests) <= 2 * (LLM_BREAKER_FAILURES + client.config.concurrency)


def test_it_bounds_an_audit_with_a_slow_server_by_the_time_budget(llm_server, make_client):
    audit_answer(QUERY, ANSWER, CONTEXTS)  # warm the embedder
    started = time.monotonic()
    offline = audit_answer(QUERY, ANSWER, CONTEXTS)
    offline_s = time.monotonic() - started
    llm_server.route("TASK", ok("[]", delay_s=5.0))
    client = make_client(timeout_s=0.5, time_budget_s=1.0)
    started = time.monotonic()
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
    elapsed = time.monotonic() - started
    assert [c.label for c in result.claims] == [c.label for c in offline.claims]
    assert elapsed - offline_s < 1.5, (
        f"audit took {elapsed:.2f}s (offline {offline_s:.2f}s) with a 1 s budget"
    )
    assert client.accounting.failures[0]["kind"] == "timeout"


def test_it_answers_with_the_offline_verdicts_past_the_time_budget_and_says_budget(llm_server, make_client):
    offline = audit_answer(QUERY, ANSWER, CONTEXTS)
    llm_server.route("TASK", ok("[]", delay_s=5.0))
    client = make_client(timeout_s=10, time_budget_s=0.8)
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
    assert [(c.label, c.confidence) for c in result.claims] == [
        (c.label, c.confidence) for c in offline.claims
    ]
    assert all(result.methods_not_run[m].startswith("budget") for m in LLM_METHODS)
    assert "budget" in result.methods_not_run["llm_extraction"]
    assert not client.endpoint.breaker.is_open  # the budget is ours: the endpoint is not blamed
    assert "llm_time_budget_exceeded" in {w["code"] for w in client.accounting.warnings}


def test_one_timeout_does_not_take_the_llm_methods_offline_for_the_rest_of_the_audit(llm_server, make_client):
    script_a_working_llm(llm_server)
    llm_server.routes.insert(0, (("TASK: extract_claims",), [ok("[]", delay_s=5.0)]))
    client = make_client(timeout_s=1.5)
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
    assert [f["kind"] for f in client.accounting.failures] == ["timeout"]
    assert result.methods_not_run == {"llm_extraction": "claims extracted offline (timeout)"}
    assert all(set(c.method_names) >= LLM_METHODS for c in result.claims)


def test_a_numeric_contradiction_stands_whatever_the_llm_judge_says(llm_server, make_client):
    script_a_working_llm(llm_server)
    llm_server.routes.insert(
        0,
        (
            ("TASK: isolated_verification",),
            [per_claim("results", lambda _: {"verdict": "PARTIAL", "reasoning": "Mostly stated in [1]."})],
        ),
    )
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=make_client())
    _, c2 = result.claims
    assert c2.method_names and "llm_judge" in c2.method_names
    assert c2.label == "REFUTED"  # 1587 against the passage's 1564: the numeric check's finding stands


def test_it_says_which_methods_ran_when_no_llm_is_configured():
    result = audit_answer(QUERY, ANSWER, CONTEXTS)
    assert result.claims and all(
        c.method_names and not LLM_METHODS & set(c.method_names) for c in result.claims
    )
    assert result.methods_not_run["llm_judge"] == "no LLM configured"
    assert "needs an LLM" in result.methods_not_run["selfcheck"]
    assert all("selfcheck_disagreement" not in c.metrics for c in result.claims)


@pytest.mark.parametrize("reply", [Reply(content=""), ok("definitely not json")])
def test_it_extracts_offline_after_a_failed_repair_and_still_verifies_with_the_llm(
    llm_server, make_client, reply
):
    script_a_working_llm(llm_server)
    llm_server.routes.insert(0, (("TASK: extract_claims",), [reply]))
    client = make_client()
    result = audit_answer(QUERY, ANSWER, CONTEXTS, llm=client)
    assert result.methods_not_run["llm_extraction"].startswith("claims extracted offline")
    assert [f["purpose"] for f in client.accounting.failures] == ["extract_claims", "extract_claims:repair"]
    assert all("llm_judge" in c.method_names for c in result.claims)
