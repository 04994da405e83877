"""The LLM client against a real OpenAI-compatible server on 127.0.0.1, through the openai package."""

from __future__ import annotations

import time

import pytest

from audit.pipeline.llm import LLMError
from audit.pipeline.llm.prompts import EXTRACT_SYSTEM, messages
from tests.llm.fake_llm import Reply, ok

MSG = messages(EXTRACT_SYSTEM, "Answer:\nThe hippocampus supports memory.")
CLAIMS = {"claims": [{"text": "The hippocampus supports memory."}]}


def test_it_returns_valid_json_and_counts_tokens_and_latency(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=40, completion_tokens=12))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG, task="extract_claims") == CLAIMS
    acc = client.accounting
    assert (acc.calls, acc.prompt_tokens, acc.completion_tokens) == (1, 40, 12)
    assert acc.latency_ms > 0 and acc.failures == []
    sent = llm_server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["model"] == "test-model" and sent["body"]["temperature"] == 0.0


def test_it_repairs_malformed_json_once(llm_server, make_client):
    llm_server.route("That reply was not valid", ok(CLAIMS))
    llm_server.route("extract_claims", ok('{"claims": [{"text": "The hippo'))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG, task="extract_claims") == CLAIMS
    assert client.accounting.calls == 2
    assert [f["kind"] for f in client.accounting.failures] == ["invalid_json"]


def test_it_gives_up_after_one_failed_repair(llm_server, make_client):
    llm_server.route("extract_claims", ok("sorry, I cannot do JSON"))
    client = make_client()
    with pytest.raises(LLMError) as err:
        client.complete_json(purpose="extract_claims", messages=MSG, task="extract_claims")
    assert err.value.kind == "invalid_json"
    assert client.accounting.calls == 2  # the call and exactly one repair
    assert client.available  # a bad reply is not a dead server


def test_it_rejects_json_that_breaks_the_schema(llm_server, make_client):
    llm_server.route("extract_claims", ok({"claims": [{"text": "x"}]}))
    client = make_client()
    with pytest.raises(LLMError) as err:
        client.complete_json(purpose="extract_claims", messages=MSG, task="extract_claims")
    assert err.value.kind == "schema"
    assert [f["kind"] for f in client.accounting.failures] == ["schema", "schema"]


def test_it_treats_an_empty_reply_as_a_failure_and_repairs(llm_server, make_client):
    llm_server.route("That reply was not valid", ok(CLAIMS))
    llm_server.route("extract_claims", Reply(content=""))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG, task="extract_claims") == CLAIMS
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
    assert client.available  # one failure alone does not take the LLM methods offline


def test_it_opens_the_endpoints_circuit_after_failures_in_a_row(llm_server, make_client):
    client = make_client(max_retries=1)  # default route: HTTP 500 forever
    for _ in range(3):  # LLM_BREAKER_FAILURES
        with pytest.raises(LLMError) as err:
            client.complete(purpose="judge", messages=MSG)
        assert err.value.kind == "server_error" and err.value.attempts == 2
    with pytest.raises(LLMError) as again:
        make_client().complete(purpose="judge", messages=MSG)  # another run, the same endpoint
    assert again.value.kind == "circuit_open" and "circuit open" in again.value.message
    assert len(llm_server.requests) == 6  # the fourth call never reached the server


def test_it_closes_the_circuit_after_the_cool_down_when_the_trial_call_succeeds():
    from audit.pipeline.llm.client import LLMError as Error
    from audit.pipeline.llm.endpoint import CircuitBreaker

    now = [100.0]
    breaker = CircuitBreaker(failures=2, cooldown_s=30, clock=lambda: now[0])
    breaker.failure(Error("timeout", "slow"))
    assert breaker.refusal() is None  # one timeout: still closed
    breaker.failure(Error("timeout", "slow"))
    assert "timeout" in breaker.refusal()
    now[0] += 31
    assert breaker.refusal() is None  # half-open: the trial call may go
    breaker.failure(Error("timeout", "slow"))
    assert breaker.refusal()  # the trial failed: open again
    now[0] += 31
    breaker.success()
    assert breaker.refusal() is None and breaker.consecutive == 0


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

    client = LLMClient(
        LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", max_retries=1), sleep=lambda s: None
    )
    with pytest.raises(LLMError) as err:
        client.complete(purpose="judge", messages=MSG)
    assert err.value.kind == "connection" and err.value.attempts == 2
    assert not client.available  # a refused connection opens the breaker at once


def test_it_stops_calling_past_the_token_budget_and_warns_once(llm_server, make_client):
    short = messages("TASK: extract_claims", "x")
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=60, completion_tokens=50))
    client = make_client(token_budget=100)
    client.complete(purpose="extract_claims", messages=short)
    for _ in range(2):
        with pytest.raises(LLMError) as err:
            client.complete(purpose="extract_claims", messages=short)
        assert err.value.kind == "budget"
    assert len(llm_server.requests) == 1
    assert [w["code"] for w in client.accounting.warnings] == ["llm_budget_exceeded"]
    assert client.unavailable_reason().startswith("budget")


def test_it_caps_max_tokens_to_what_is_left_of_the_token_budget(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=20, completion_tokens=30))
    client = make_client(token_budget=120)
    client.complete(purpose="extract_claims", messages=messages("TASK: extract_claims", "x"), max_tokens=800)
    client.complete(purpose="extract_claims", messages=messages("TASK: extract_claims", "x"), max_tokens=800)
    first, second = (r["body"]["max_tokens"] for r in llm_server.requests)
    assert first < 120 and second < 120 - 50  # never more than the budget has left
    assert client.accounting.total_tokens <= 120


def test_it_counts_a_timed_out_call_with_the_tokens_the_server_may_still_spend(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, delay_s=2.0))
    client = make_client(timeout_s=0.3)
    with pytest.raises(LLMError):
        client.complete(purpose="extract_claims", messages=MSG, max_tokens=200)
    acc = client.accounting
    assert acc.calls == 1 and acc.completion_tokens == 200 and acc.prompt_tokens > 0


def test_it_stops_a_call_at_the_runs_time_budget_and_starts_no_other(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, delay_s=3.0))
    client = make_client(timeout_s=10, time_budget_s=0.8)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        client.complete(purpose="extract_claims", messages=MSG)
    assert err.value.kind == "budget" and time.monotonic() - started < 1.5
    assert client.unavailable_reason().startswith("budget")
    assert client.endpoint.breaker.consecutive == 0  # our budget, not the server's fault
    assert "llm_time_budget_exceeded" in {w["code"] for w in client.accounting.warnings}


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
    assert parse_json_reply("Here you go: [1, 2] hope it helps") == [1, 2]
    with pytest.raises(ValueError):
        parse_json_reply("no json here")


def test_it_reads_only_the_replys_json_value_never_a_citation_or_echoed_template():
    import jsonschema

    from audit.pipeline.llm.client import parse_json_reply
    from audit.pipeline.llm.prompts import COVE_PLAN_SYSTEM
    from audit.pipeline.llm.schemas import TASKS

    schema = TASKS["cove_questions"]
    real = {"results": [{"claim_id": "c1", "questions": ["When was the hippocampus named?"]}]}
    cited = f"As passage [1] says, here it is: {__import__('json').dumps(real)}"
    assert parse_json_reply(cited, schema) == real  # [1] is a citation, not the answer
    echo = '{"results": [{"claim_id": "<id>", "questions": ["<question>"]}]}'
    with pytest.raises(jsonschema.ValidationError):
        parse_json_reply(echo, schema, prompt=COVE_PLAN_SYSTEM)
    dots = '{"results": [{"claim_id": "c1", "questions": ["...", "..."]}]}'
    with pytest.raises(jsonschema.ValidationError):
        parse_json_reply(dots, schema)
    assert (
        parse_json_reply(
            COVE_PLAN_SYSTEM + "\n" + __import__("json").dumps(real), schema, prompt=COVE_PLAN_SYSTEM
        )
        == real
    )  # the prompt repeated, then the answer


@pytest.mark.parametrize(
    "honours, rejects, expected",
    [
        ({"json_schema"}, set(), "json_schema"),
        (
            {"llama_json_object"},
            {"json_schema"},
            "llama_json_object",
        ),  # llama-cpp-python: json_schema is a 500
        ({"vllm_guided_json"}, set(), "vllm_guided_json"),
        ({"ollama_format"}, set(), "ollama_format"),
        (set(), {"json_schema"}, "prompt"),
    ],
)
def test_it_probes_once_per_endpoint_which_structured_output_form_works(
    llm_server, make_client, honours, rejects, expected
):
    llm_server.honours, llm_server.rejects = honours, rejects
    llm_server.route("extract_claims", ok(CLAIMS))
    first = make_client(structured="auto")
    assert first.complete_json(purpose="extract_claims", messages=MSG) == CLAIMS
    probes = len(llm_server.calls("TASK: probe"))
    assert probes >= 1 and first.accounting.structured == expected
    second = make_client(structured="auto")  # another run of the same endpoint: no new probe
    second.complete_json(purpose="extract_claims", messages=MSG)
    assert len(llm_server.calls("TASK: probe")) == probes
    sent = llm_server.calls("TASK: extract_claims")[-1]["body"]
    assert llm_server.form_of(sent) == ("" if expected == "prompt" else expected)
    assert first.accounting.failures == []  # a refused form is not a failure of the run


def test_it_sends_a_schema_small_enough_for_grammar_engines():
    from audit.pipeline.llm.endpoint import format_kwargs
    from audit.pipeline.llm.schemas import TASKS, WIRE_MAX_ITEMS, WIRE_MAX_LENGTH

    def bounds(node, key):
        if isinstance(node, dict):
            return [v for k, v in node.items() if k == key] + [
                b for v in node.values() for b in bounds(v, key)
            ]
        return [b for v in node for b in bounds(v, key)] if isinstance(node, list) else []

    for task in TASKS:
        sent = format_kwargs("llama_json_object", task)["response_format"]["schema"]
        text = __import__("json").dumps(sent)
        assert not any(k in text for k in ('"pattern"', '"minLength"'))
        assert all(b <= WIRE_MAX_ITEMS for b in bounds(sent, "maxItems"))  # only short repetitions
        assert all(b <= WIRE_MAX_LENGTH for b in bounds(sent, "maxLength"))
        assert sent["type"] == "object" and sent["additionalProperties"] is False
        strict = format_kwargs("json_schema", task)["response_format"]["json_schema"]
        assert strict["strict"] is True and set(strict["schema"]["required"]) == set(
            strict["schema"]["properties"]
        )
        assert '"maxLength"' not in __import__("json").dumps(strict)


def test_every_free_text_field_of_every_schema_is_bounded_and_reasons_are_short():
    from audit.pipeline.llm.schemas import REASON_MAX_CHARS, TASKS, WIRE_MAX_LENGTH, wire_schema

    def strings(node):
        if isinstance(node, dict):
            own = [node] if node.get("type") == "string" else []
            return own + [s for v in node.values() for s in strings(v)]
        return [s for v in node for s in strings(v)] if isinstance(node, list) else []

    for task in TASKS:
        full, wire = strings(TASKS[task]), strings(wire_schema(task))
        assert len(full) == len(wire)
        for f, w in zip(full, wire):
            assert 0 < f["maxLength"] <= WIRE_MAX_LENGTH and w["maxLength"] == f["maxLength"]
    reasoning = TASKS["judge"]["properties"]["results"]["items"]["properties"]["reasoning"]
    assert reasoning["maxLength"] == REASON_MAX_CHARS <= 200


def test_a_batched_call_binds_its_rows_to_the_claims_it_sent():
    from audit.pipeline.llm.schemas import wire_schema

    rows = wire_schema("judge", items=3)["properties"]["results"]
    assert rows["minItems"] == rows["maxItems"] == 3
    assert rows["items"]["properties"]["claim_id"] == {"enum": ["c1", "c2", "c3"]}
    assert (
        wire_schema("cove_questions", 2)["properties"]["results"]["items"]["properties"]["questions"][
            "maxItems"
        ]
        <= 8
    )
    # more claims than a grammar should repeat: no bound, any id (checked locally instead)
    many = wire_schema("selfcheck_judge", items=40)["properties"]["results"]
    assert "maxItems" not in many and many["items"]["properties"]["claim_id"] == {
        "type": "string",
        "maxLength": 8,
    }


def test_it_reads_a_string_with_a_raw_line_break_as_the_replys_own_json():
    from audit.pipeline.llm.client import parse_json_reply

    reply = '{ "claims": [{"text": "Access logs are kept\nfor 90 days."}] }'
    assert parse_json_reply(reply) == {"claims": [{"text": "Access logs are kept\nfor 90 days."}]}


def test_a_reply_cut_off_at_the_cap_gets_no_repair_call(llm_server, make_client):
    llm_server.route(
        "extract_claims", ok('{"claims": [{"text": "Logs are kept for ninety', finish_reason="length")
    )
    client = make_client()
    with pytest.raises(LLMError):
        client.complete_json(purpose="extract_claims", messages=MSG)
    assert len(llm_server.calls("extract_claims")) == 1 and client.accounting.calls == 1


def test_it_says_a_json_reply_was_cut_off_rather_than_read_a_fragment_of_it(llm_server, make_client):
    cut = '{"claims": [{"text": "Logs are kept 90 days [1]. They are revi'
    llm_server.route("extract_claims", ok(cut, finish_reason="length"))
    client = make_client()
    with pytest.raises(LLMError) as err:
        client.complete_json(purpose="extract_claims", messages=MSG)
    assert err.value.kind == "invalid_json" and "cut off" in err.value.message  # not "[1] is not an object"


def test_it_leaves_the_json_example_out_of_the_prompt_under_a_grammar(llm_server, make_client):
    llm_server.honours = {"llama_json_object"}
    llm_server.route("TASK: extract_claims", ok(CLAIMS))
    make_client(structured="auto").complete_json(purpose="extract_claims", messages=MSG)
    sent = llm_server.calls("TASK: extract_claims")[-1]["body"]["messages"][0]["content"]
    assert '{"claims": [{"text": "<claim>"}]}' not in sent  # a small model copies an example verbatim
    assert "claims: list of {text: string}" in sent and sent.endswith("The hippocampus supports memory.")


def test_fast_garbage_opens_the_breaker_through_its_failure_rate(llm_server, make_client):
    # issue 37: content failures no longer open it after 3 in a row, only through the window's rate
    from audit.constants import LLM_BREAKER_MIN_OUTCOMES

    llm_server.route("extract_claims", ok("<html><body>Bad gateway</body></html>"))
    client = make_client()
    for _ in range(LLM_BREAKER_MIN_OUTCOMES // 2):  # each call and its repair: two unusable replies
        with pytest.raises(LLMError):
            client.complete_json(purpose="extract_claims", messages=MSG)
    assert len(llm_server.requests) == LLM_BREAKER_MIN_OUTCOMES
    state = client.endpoint.breaker.state()
    assert state["state"] == "open" and state["opened_by"] == "failure rate"
    with pytest.raises(LLMError) as err:
        make_client().complete_json(purpose="extract_claims", messages=MSG)
    assert err.value.kind == "circuit_open" and len(llm_server.requests) == LLM_BREAKER_MIN_OUTCOMES


def test_a_malformed_reply_is_the_tasks_failure_and_leaves_the_breaker_closed(llm_server, make_client):
    # the weak model of issue 37: one task's replies are unusable, the others are fine
    llm_server.route("TASK: extract_claims", ok("{not json"))
    llm_server.route("TASK: judge", ok(CLAIMS))
    client = make_client()
    for _ in range(3):  # six unusable replies in a row, more than LLM_BREAKER_FAILURES
        with pytest.raises(LLMError) as err:
            client.complete_json(purpose="extract_claims", messages=MSG)
        assert err.value.kind == "invalid_json"
        assert client.endpoint.breaker.refusal() is None
    judged = messages("TASK: judge", "Claim c1: The hippocampus supports memory.")
    assert make_client().complete_json(purpose="judge", messages=judged, schema={"type": "object"}) == CLAIMS
    assert client.endpoint.breaker.state()["consecutive_transport_failures"] == 0
    assert "llm_circuit_open" not in {w["code"] for w in client.accounting.warnings}


def test_transport_failures_open_it_only_in_a_row_a_reply_in_between_resets_the_run():
    from audit.pipeline.llm.endpoint import CircuitBreaker

    # a window too long to fill here: only the run of transport failures can open it
    breaker = CircuitBreaker(failures=3, cooldown_s=30, clock=lambda: 0.0, window=100, min_outcomes=100)
    for _ in range(4):
        breaker.failure(LLMError("timeout", "slow"))
        breaker.failure(LLMError("timeout", "slow"))
        breaker.failure(LLMError("invalid_json", "not JSON"))  # the server answered
    assert breaker.refusal() is None
    breaker.failure(LLMError("timeout", "slow"))
    breaker.failure(LLMError("timeout", "slow"))
    assert breaker.refusal() is None
    breaker.failure(LLMError("connection", "reset"))
    assert "circuit open" in breaker.refusal() and breaker.state()["opened_by"] == "outage"


def test_after_an_outage_the_trial_closes_the_circuit_even_when_the_model_answers_badly():
    from audit.pipeline.llm.endpoint import CircuitBreaker

    now = [0.0]
    breaker = CircuitBreaker(failures=1, cooldown_s=30, clock=lambda: now[0])
    breaker.failure(LLMError("connection", "refused"), hard=True)
    assert breaker.state()["state"] == "open"
    now[0] += 31
    assert breaker.state()["state"] == "half_open" and breaker.admit() is None
    breaker.failure(LLMError("schema", "a weak answer"))  # the server is back; the answer is the task's
    assert breaker.state()["state"] == "closed" and breaker.refusal() is None
    assert breaker.state()["openings"] == 1


def test_a_refused_call_leaves_a_circuit_open_warning_on_the_run(llm_server, make_client):
    client = make_client(max_retries=0)  # default route: HTTP 500
    for _ in range(3):
        with pytest.raises(LLMError):
            client.complete(purpose="judge", messages=MSG)
    with pytest.raises(LLMError):
        client.complete(purpose="judge", messages=MSG)
    (warning,) = [w for w in client.accounting.warnings if w["code"] == "llm_circuit_open"]
    assert "server_error" in warning["message"] and "outage" in warning["message"]


def test_one_connection_reset_does_not_send_the_endpoint_offline(llm_server, make_client):
    llm_server.route("extract_claims", Reply(drop=True), ok(CLAIMS))
    client = make_client(max_retries=0)
    with pytest.raises(LLMError) as err:
        client.complete(purpose="extract_claims", messages=MSG)
    assert err.value.kind == "connection"
    assert client.endpoint.breaker.refusal() is None
    assert make_client().complete_json(purpose="extract_claims", messages=MSG) == CLAIMS


def test_a_half_open_breaker_lets_one_trial_through_at_a_time():
    import threading

    from audit.pipeline.llm.base import LLMError as Error
    from audit.pipeline.llm.endpoint import CircuitBreaker

    now = [0.0]
    breaker = CircuitBreaker(failures=1, cooldown_s=30, clock=lambda: now[0])
    recovered = []
    breaker.on_recovery.append(lambda: recovered.append(True))
    breaker.failure(Error("server_error", "HTTP 503"))
    assert breaker.admit()  # cooling down
    now[0] += 31
    assert breaker.admit() is None  # this thread's call is the trial
    other: list = []
    thread = threading.Thread(target=lambda: other.append(breaker.admit()))
    thread.start()
    thread.join()
    assert "trial call is in flight" in other[0]
    breaker.success()
    assert breaker.refusal() is None and recovered == [True]


def test_a_form_probed_while_the_server_was_in_trouble_is_probed_again_after_recovery(
    llm_server, make_client
):
    llm_server.honours = {"llama_json_object"}
    llm_server.probe_status = 503
    llm_server.route("extract_claims", ok(CLAIMS))
    first = make_client(structured="auto", max_retries=0)
    first.complete_json(purpose="extract_claims", messages=MSG)
    assert first.accounting.structured == "prompt" and first.endpoint.form_until is not None
    llm_server.probe_status = None
    breaker = first.endpoint.breaker
    breaker.failure(LLMError("server_error", "HTTP 503"), hard=True)
    breaker.opened_at -= breaker.cooldown_s + 1  # the cool-down is over
    second = make_client(structured="auto")
    second.complete_json(purpose="extract_claims", messages=MSG)  # the trial succeeds: a recovery
    third = make_client(structured="auto")
    third.complete_json(purpose="extract_claims", messages=MSG)
    assert third.accounting.structured == "llama_json_object"


def test_an_abandoned_call_closes_the_connection_so_the_server_stops_generating(llm_server, make_client):
    llm_server.route("extract_claims", ok("x" * 400, chunk_delay_s=0.05, chunk_chars=4))  # 5 s of tokens
    client = make_client(timeout_s=0.5, max_retries=0)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        client.complete(purpose="extract_claims", messages=MSG)
    assert err.value.kind == "timeout" and time.monotonic() - started < 1.5
    deadline = time.monotonic() + 2.0
    while not llm_server.cancelled and time.monotonic() < deadline:
        time.sleep(0.05)
    assert llm_server.cancelled == 1 and llm_server.finished == 0


def test_the_wait_for_a_free_slot_counts_against_the_audits_time_budget(llm_server, make_client):
    import threading

    llm_server.route("extract_claims", ok(CLAIMS, delay_s=2.0))
    busy = make_client(concurrency=1)
    thread = threading.Thread(target=lambda: busy.complete(purpose="extract_claims", messages=MSG))
    thread.start()
    time.sleep(0.2)
    waiting = make_client(concurrency=1, time_budget_s=1.0)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        waiting.complete(purpose="extract_claims", messages=MSG)
    waited = time.monotonic() - started
    thread.join()
    assert err.value.kind == "budget" and "free slot" in err.value.message
    assert waited < 1.2 and len(llm_server.requests) == 1


def test_with_streaming_off_it_reads_one_json_body_and_the_servers_usage(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=30, completion_tokens=12))
    client = make_client(stream=False)
    assert client.complete_json(purpose="extract_claims", messages=MSG) == CLAIMS
    assert "stream" not in llm_server.requests[0]["body"]
    assert (client.accounting.prompt_tokens, client.accounting.completion_tokens) == (30, 12)


def test_a_streamed_reply_reports_the_servers_usage_when_it_sends_it(llm_server, make_client):
    llm_server.route("extract_claims", ok(CLAIMS, prompt_tokens=30, completion_tokens=12))
    client = make_client()
    assert client.complete_json(purpose="extract_claims", messages=MSG) == CLAIMS
    body = llm_server.requests[0]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (client.accounting.prompt_tokens, client.accounting.completion_tokens) == (30, 12)


def test_a_probe_that_only_ever_got_http_errors_is_not_kept_for_the_life_of_the_process(
    llm_server, make_client
):
    llm_server.probe_status = 500  # every form refused: a broken server, not one that refuses them all
    llm_server.route("extract_claims", ok(CLAIMS))
    client = make_client(structured="auto")
    client.complete_json(purpose="extract_claims", messages=MSG)
    assert client.accounting.structured == "prompt" and client.endpoint.form_until is not None
    llm_server.probe_status = None
    client.endpoint.form_until = 0.0  # the cool-down is over
    llm_server.honours = {"json_schema"}
    later = make_client(structured="auto")
    later.complete_json(purpose="extract_claims", messages=MSG)
    assert later.accounting.structured == "json_schema"
