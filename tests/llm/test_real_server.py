"""The LLM methods against a real OpenAI-compatible server (``make test-llm``: llama-cpp-python's
server with a tiny GGUF model on 127.0.0.1). Skipped unless THEORIA_TEST_LLM_BASE_URL is set.

A tiny model's verdicts are weak, so these check what the client and the pipeline owe whatever
the model: structured outputs asked for and honoured (valid JSON), the prompt-and-repair
fallback, the time budget, the asynchronous path and the accounting. Each audit's figures (JSON
validity per task, calls, latency) are appended to THEORIA_TEST_LLM_FIGURES (a JSON-lines file)
for ``tests/llm/real_server.py`` to print.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from audit.pipeline.audit import audit_answer
from audit.pipeline.llm import LLMClient, LLMConfig, LLMError
from audit.pipeline.llm.endpoint import endpoints_reset

BASE_URL = os.environ.get("THEORIA_TEST_LLM_BASE_URL", "")
FIGURES = os.environ.get("THEORIA_TEST_LLM_FIGURES", "")
pytestmark = pytest.mark.skipif(not BASE_URL, reason="THEORIA_TEST_LLM_BASE_URL is not set (see docs/LLM.md)")
LLM_METHODS = {"llm_judge", "llm_cove", "selfcheck"}

CASES = [
    (
        "How long are access logs retained?",
        "Access logs are retained for 180 days [1]. They are reviewed every month by the security team [1].",
        [
            {
                "id": "p1",
                "text": "Access logs are retained for 90 days. The security team reviews them every month.",
            }
        ],
    ),
    (
        "What does the hippocampus do and who named it?",
        "The hippocampus consolidates declarative memories into long-term storage [1]. "
        "Arantius named the hippocampus in 1587 [2].",
        [
            {
                "id": "p1",
                "text": "The hippocampus is a structure of the medial temporal lobe that consolidates "
                "declarative memories from short-term to long-term storage.",
            },
            {
                "id": "p2",
                "text": "The anatomist Giulio Cesare Aranzi (Arantius) named the hippocampus in 1564, "
                "after its resemblance to a seahorse.",
            },
        ],
    ),
    (
        "When is the annual fee charged?",
        "The annual fee for the Gold card is $150 [1]. It is charged every January [1].",
        [{"id": "p1", "text": "The annual fee for the Gold card is $150. The fee is charged every January."}],
    ),
]


def real_client(**overrides) -> LLMClient:
    options = {
        "base_url": BASE_URL,
        "model": os.environ.get("THEORIA_TEST_LLM_MODEL", "default"),
        "timeout_s": float(os.environ.get("THEORIA_TEST_LLM_TIMEOUT_S", "60")),
        "max_retries": 1,
        "concurrency": int(os.environ.get("THEORIA_TEST_LLM_CONCURRENCY", "1")),
        **overrides,
    }
    return LLMClient(LLMConfig(**options))


def record(kind: str, client: LLMClient, seconds: float, result=None) -> None:
    if not FIGURES:
        return
    acc = client.accounting
    row = {
        "kind": kind,
        "structured": acc.structured,
        "calls": acc.calls,
        "by_task": acc.calls_by_purpose,
        "json": acc.json_results,
        "seconds": round(seconds, 2),
        "llm_ms": round(acc.latency_ms),
        "tokens": acc.total_tokens,
        "failures": [f["kind"] for f in acc.failures],
        "ran": sorted({m for c in result.claims for m in c.method_names} & LLM_METHODS) if result else [],
        "labels": [c.label for c in result.claims] if result else [],
    }
    with open(FIGURES, "a", encoding="utf-8") as out:
        out.write(json.dumps(row) + "\n")


@pytest.mark.parametrize("query, answer, contexts", CASES[:2])
def test_structured_outputs_are_asked_for_honoured_and_valid(query, answer, contexts):
    client = real_client()
    started = time.perf_counter()
    result = audit_answer(query, answer, contexts, llm=client)
    record("structured", client, time.perf_counter() - started, result)
    acc = client.accounting
    assert acc.structured not in ("", "prompt"), "the server's structured-output form was not found"
    # the grammar guarantees JSON of the schema's shape; a tiny model's content may still break the
    # local checks (placeholders, echoes, lengths): the rates are printed, at least one must pass
    valid, total = map(sum, zip(*acc.json_results.values()))
    assert total and valid > 0, f"no valid JSON under a grammar: {acc.json_results}"
    ran = {m for c in result.claims for m in c.method_names}
    assert ran & LLM_METHODS, f"no LLM method ran: {result.methods_not_run}"
    if "180 days" in answer:  # a numeric contradiction stands whatever the model says
        assert [c.label for c in result.claims if "180" in c.claim.text] == ["REFUTED"]


@pytest.mark.parametrize("query, answer, contexts", CASES[:1])
def test_the_prompt_and_repair_fallback_completes_every_audit(query, answer, contexts):
    client = real_client(structured="prompt")
    started = time.perf_counter()
    result = audit_answer(query, answer, contexts, llm=client)
    record("prompt", client, time.perf_counter() - started, result)
    assert result.claims and all(c.label in ("SUPPORTED", "REFUTED", "NEI") for c in result.claims)
    assert client.accounting.calls > 0
    for name in LLM_METHODS:
        assert name in {m for c in result.claims for m in c.method_names} or name in result.methods_not_run


def test_the_time_budget_bounds_the_audit_and_says_budget():
    query, answer, contexts = CASES[1]
    audit_answer(query, answer, contexts)  # warm the embedder
    client = real_client(time_budget_s=1.5)
    started = time.perf_counter()
    result = audit_answer(query, answer, contexts, llm=client)
    elapsed = time.perf_counter() - started
    record("budget", client, elapsed, result)
    assert elapsed < 1.5 + 3.0, f"{elapsed:.1f} s with a 1.5 s budget"
    assert any(why.startswith("budget") for why in result.methods_not_run.values()), result.methods_not_run
    assert not client.endpoint.breaker.is_open


def test_accounting_matches_the_servers_usage():
    import openai

    client = real_client(stream=False)  # one JSON body with its usage (llama-cpp-python streams none)
    try:
        client.complete(
            purpose="probe_accounting", messages=[{"role": "user", "content": "Say hello."}], max_tokens=16
        )
    except LLMError as exc:  # a tiny model may stop at once: the call and its tokens still count
        assert exc.kind == "empty"
    raw = openai.OpenAI(base_url=BASE_URL, api_key="x").chat.completions.create(
        model="default",
        messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=16,
        temperature=0.0,
        seed=7,
    )
    assert client.accounting.calls == 1 and raw.usage.prompt_tokens > 0
    assert client.accounting.prompt_tokens == raw.usage.prompt_tokens
    assert client.accounting.completion_tokens == raw.usage.completion_tokens


@pytest.mark.django_db
def test_the_asynchronous_deep_check_runs_against_the_real_server(
    submitter, settings, django_capture_on_commit_callbacks
):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from audit.models import VerificationRun

    endpoints_reset()
    settings.THEORIA = {
        **settings.THEORIA,
        "LLM_BASE_URL": BASE_URL,
        "LLM_MODEL": "default",
        "LLM_TIMEOUT_S": 60.0,
        "LLM_CONCURRENCY": 1,
    }
    from tests.llm.test_real_server_methods import LOG, chat_requests, log_mark, log_since

    query, answer, contexts = CASES[2]
    # pytest-django runs this test first: load the offline models before the clock starts, so the
    # 15 s bound times the request (it answers without waiting for the LLM), not the process's start
    audit_answer(query, answer, contexts)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=submitter)[0].key}")
    mark = log_mark() if LOG else 0
    started = time.perf_counter()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api.post(
            "/api/v1/audits",
            {"query": query, "answer": answer, "contexts": contexts, "mode": "audit-local", "deep": "async"},
            format="json",
        )
    answered = time.perf_counter() - started
    assert response.status_code == 201, response.content
    assert response.json()["audit"]["llm_calls"] == 0 and answered < 15, answered
    if LOG:  # and the server agrees: no chat request reached it before the answer
        assert chat_requests(log_since(mark)) == 0
    run_id = response.json()["audit"]["run_id"]
    for callback in callbacks:  # the django-q2 task (synchronous in tests)
        callback()
    run = VerificationRun.objects.get(pk=run_id)
    assert run.deep_checks["status"] == "done" and run.llm_calls > 0
    assert LLM_METHODS & set(run.methods), run.warnings
    if FIGURES:
        with open(FIGURES, "a", encoding="utf-8") as out:
            out.write(
                json.dumps(
                    {
                        "kind": "async",
                        "answered_s": round(answered, 2),
                        "deep_s": round(time.perf_counter() - started - answered, 2),
                        "calls": run.llm_calls,
                        "relabels": run.deep_checks.get("relabels", []),
                    }
                )
                + "\n"
            )
