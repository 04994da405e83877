"""The LLM client against a real OpenAI-compatible server on 127.0.0.1, through the openai package."""

from __future__ import annotations

import time

import pytest

from audit.pipeline.llm import LLMError
from audit.pipeline.llm.prompts import CLAIMS_SCHEMA, EXTRACT_SYSTEM, messages
from tests.llm.fake_llm import Reply, ok

MSG = messages(EXTRACT_SYSTEM, "Answer:\nThe hippocampus supports memory.")
CLAIMS = [{"claim_id": "c1", "text": "The hippocampus supports memory."}]


def test_it_returns_valid_json_and_counts_tokens_and_latency(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=40, completion_tokens=12))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG, schema=CLAIMS_SCHEMA) == CLAIMS
    acc = client.accounting
    assert (acc.calls, acc.prompt_tokens, acc.completion_tokens) == (1, 40, 12)
    assert acc.latency_ms > 0 and acc.failures == []
    sent = llm_server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["model"] == "test-model" and sent["body"]["temperature"] == 0.0


def test_it_repairs_malformed_json_once(llm_server, make_client):
    llm_server.route("That reply was not valid", ok(CLAIMS))
    llm_server.route("extract_claims", ok('[{"claim_id": "c1", "text": "The hippo'))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG, schema=CLAIMS_SCHEMA) == CLAIMS
    assert client.accounting.calls == 2
    assert [f["kind"] for f in client.accounting.failures] == ["invalid_json"]


def test_it_gives_up_after_one_failed_repair(llm_server, make_client):
    llm_server.route("extract_claims", ok("sorry, I cannot do JSON"))
    client = make_client()
    with pytest.raises(LLMError) as err:
        client.complete_json(purpose="extract_claims", messages=MSG, schema=CLAIMS_SCHEMA)
    assert err.value.kind == "invalid_json"
    assert client.accounting.calls == 2  # the call and exactly one repair
    assert client.available  # a bad reply is not a dead server


def test_it_rejects_json_that_breaks_the_schema(llm_server, make_client):
    llm_server.route("extract_claims", ok([{"claim_id": "claim-one", "text": "x"}]))
    client = make_client()
    with pytest.raises(LLMError) as err:
        client.complete_json(purpose="extract_claims", messages=MSG, schema=CLAIMS_SCHEMA)
    assert err.value.kind == "schema"
    assert [f["kind"] for f in client.accounting.failures] == ["schema", "schema"]


def test_it_treats_an_empty_reply_as_a_failure_and_repairs(llm_server, make_client):
    llm_server.route("That reply was not valid", ok(CLAIMS))
    llm_server.route("extract_claims", Reply(content=""))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG, schema=CLAIMS_SCHEMA) == CLAIMS
    assert client.accounting.failures[0]["kind"] == "empty"


def test_it_retries_http_500_with_backoff_then_succeeds(llm_server, make_client):
    llm_server.route("extract_claims", Reply(status=500), Reply(status=500), ok(CLAIMS))
    client = make_client(max_retries=2)
    assert client.complete(purpose="extract_claims", messages=MSG)
    assert len(llm_server.requests) == 3
    assert client.sleeps == [0.5, 1.0]  # LLM_RETRY_BACKOFF_S, doubled
    assert client.accounting.calls == 3 and client.accounting.failures == []


def test_it_honours_retry_after_on_429(llm_server, make_client):
    llm_server.route("extract_claims", Reply(status=429, headers={"Retry-After": "1"}), ok(CLAIMS))
    client = make_client()
    started = time.monotonic()
    client.complete(purpose="extract_claims", messages=MSG)
    assert client.sleeps == [1.0]
    gap = llm_server.requests[1]["at"] - llm_server.requests[0]["at"]
    assert gap >= 0.95 and time.monotonic() - started >= 0.95


def test_it_does_not_wait_for_a_retry_after_beyond_the_cap(llm_server, make_client):
    llm_server.route("extract_claims", Reply(status=429, headers={"Retry-After": "3600"}))
    client = make_client()
    with pytest.raises(LLMError) as err:
        client.complete(purpose="extract_claims", messages=MSG)
    assert err.value.kind == "rate_limited" and client.sleeps == []
    assert not client.available  # circuit open: the rest of the run goes offline


def test_it_opens_the_circuit_after_exhausted_retries(llm_server, make_client):
    client = make_client(max_retries=1)  # default route: HTTP 500 forever
    with pytest.raises(LLMError) as err:
        client.complete(purpose="judge", messages=MSG)
    assert err.value.kind == "server_error" and err.value.attempts == 2
    with pytest.raises(LLMError) as again:
        client.complete(purpose="judge", messages=MSG)
    assert again.value.kind == "circuit_open"
    assert len(llm_server.requests) == 2  # the second call never reached the server
    assert [f["kind"] for f in client.accounting.failures] == ["server_error", "circuit_open"]


def test_it_bounds_a_slow_call_by_the_timeout_without_retrying(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, delay_s=3.0))
    client = make_client(timeout_s=0.5, max_retries=2)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        client.complete(purpose="extract_claims", messages=MSG)
    elapsed = time.monotonic() - started
    assert err.value.kind == "timeout"
    assert 0.4 <= elapsed < 1.5
    assert len(llm_server.requests) == 1


def test_it_reports_a_refused_connection(make_client):
    from audit.pipeline.llm import LLMClient, LLMConfig

    client = LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=1), sleep=lambda s: None)
    with pytest.raises(LLMError) as err:
        client.complete(purpose="judge", messages=MSG)
    assert err.value.kind == "connection" and err.value.attempts == 2


def test_it_stops_calling_past_the_token_budget_and_warns_once(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=60, completion_tokens=50))
    client = make_client(token_budget=100)
    client.complete(purpose="extract_claims", messages=MSG)
    for _ in range(2):
        with pytest.raises(LLMError) as err:
            client.complete(purpose="extract_claims", messages=MSG)
        assert err.value.kind == "budget"
    assert len(llm_server.requests) == 1
    assert [w["code"] for w in client.accounting.warnings] == ["llm_budget_exceeded"]


def test_it_estimates_tokens_when_the_server_reports_no_usage(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, usage=False))
    client = make_client()
    client.complete(purpose="extract_claims", messages=MSG)
    assert client.accounting.prompt_tokens > 10 and client.accounting.completion_tokens > 5


def test_it_keeps_at_most_the_configured_number_of_calls_in_flight(llm_server, make_client):
    from concurrent.futures import ThreadPoolExecutor

    llm_server.route("extract_claims", ok(CLAIMS, delay_s=0.3))
    client = make_client(concurrency=2)
    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(lambda _: client.complete(purpose="extract_claims", messages=MSG), range(6)))
    starts = sorted(r["at"] for r in llm_server.requests)
    # with 2 slots, 6 calls of 0.3 s arrive in 3 waves
    assert starts[-1] - starts[0] >= 0.55
    assert client.accounting.calls == 6


def test_it_parses_json_inside_a_code_fence():
    from audit.pipeline.llm.client import parse_json_reply

    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('Here you go: [1, 2] hope it helps') == [1, 2]
    with pytest.raises(ValueError):
        parse_json_reply("no json here")
