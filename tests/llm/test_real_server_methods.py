"""Round two of the LLM methods on a real server (``make test-llm``; skipped unless
THEORIA_TEST_LLM_BASE_URL is set): the MiniCheck reading with logprobs, streaming with usage, a call
abandoned mid-stream, the per-endpoint concurrency limit, the breaker across an outage, and calls
per audit counted on the server's side.

What the server did is read from its own log (THEORIA_TEST_LLM_SERVER_LOG, written by
``tests/llm/real_server.py``): llama-cpp-python's server logs one access line per request
(``POST /v1/chat/completions``) and says when a streaming client went away. The outage test starts
a second server of its own (THEORIA_TEST_LLM_SERVER_COMMAND), kills it mid-audit and starts it again.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from audit.pipeline.audit import audit_answer
from audit.pipeline.llm import LLMClient, LLMConfig, LLMError
from audit.pipeline.llm.judge import judge_claims
from tests.llm.real_server import server_env
from tests.llm.test_real_server import CASES, real_client

BASE_URL = os.environ.get("THEORIA_TEST_LLM_BASE_URL", "")
LOG = os.environ.get("THEORIA_TEST_LLM_SERVER_LOG", "")
COMMAND = json.loads(os.environ.get("THEORIA_TEST_LLM_SERVER_COMMAND") or "null")
FIGURES = os.environ.get("THEORIA_TEST_LLM_FIGURES", "")
pytestmark = pytest.mark.skipif(not BASE_URL, reason="THEORIA_TEST_LLM_BASE_URL is not set (see docs/LLM.md)")
needs_log = pytest.mark.skipif(
    not LOG, reason="THEORIA_TEST_LLM_SERVER_LOG is not set (make test-llm sets it)"
)
CHAT = "POST /v1/chat/completions"
LONG = [{"role": "user", "content": "Write a long story about a lighthouse keeper, in many paragraphs."}]


def log_mark(path: str = LOG) -> int:
    return Path(path).stat().st_size


def log_since(mark: int, path: str = LOG) -> str:
    with open(path, "rb") as f:
        f.seek(mark)
        return f.read().decode("utf-8", errors="replace")


def chat_requests(text: str) -> int:
    """Chat requests in the server's access log (not the "POST /v1/chat/completions" line of the
    traceback it prints for an HTTP 500: the json_schema probe's)."""
    return len(re.findall(r'"' + CHAT + r' HTTP/1\.1" \d{3}', text))


def figure(row: dict) -> None:
    if FIGURES:
        with open(FIGURES, "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")


def test_the_minicheck_reading_asks_for_and_gets_the_first_tokens_logprobs():
    from audit.pipeline.llm.prompts import MINICHECK_SYSTEM, messages

    client = real_client(judge_prompt="minicheck")
    evidence = "Access logs are retained for 90 days. The security team reviews them every month."
    claims = ["Access logs are retained for 90 days.", "Access logs are deleted after one day."]
    # the call the reading makes: one token, not streamed, the first token's 5 candidates come back
    reply = client.complete_reply(
        purpose="judge:minicheck",
        task="minicheck",
        messages=messages(MINICHECK_SYSTEM, f"Document: {evidence}\nClaim: {claims[0]}"),
        extra={"logprobs": True, "top_logprobs": 5},
        stream=False,
    )
    assert len(reply.first_token_logprobs) >= 2, reply
    results = judge_claims(client, [(claim, [evidence]) for claim in claims])
    figure(
        {
            "kind": "minicheck",
            "first_token": sorted(reply.first_token_logprobs, key=reply.first_token_logprobs.get)[-3:],
            "p_yes": [r.details.get("p_yes") for r in results],
            "reasons": [r.details.get("reason", "") for r in results],
        }
    )
    for r in results:  # a reading from the logprobs, or (a model whose candidates hold neither) none
        if r.ran:
            assert r.details["logprobs"] and 0.0 <= r.details["p_yes"] <= 1.0, r.details
        else:
            assert r.details["reason"] == "the LLM answered neither Yes nor No", r.details


def test_a_streamed_call_counts_the_servers_usage_or_says_it_estimated():
    import openai

    from audit.pipeline.llm.client import prompt_text

    client = real_client()
    said = [{"role": "user", "content": "Name a colour."}]
    try:
        text = client.complete(purpose="probe_stream", messages=said, max_tokens=12)
    except LLMError as exc:  # a tiny model may stop at once: the call and its tokens still count
        assert exc.kind == "empty"
        text = ""
    raw = openai.OpenAI(base_url=BASE_URL, api_key="x").chat.completions.create(
        model="default",
        messages=said,
        max_tokens=12,
        temperature=0.0,
        seed=7,
        stream=True,
        stream_options={"include_usage": True},
    )
    usage = None
    for chunk in raw:
        usage = getattr(chunk, "usage", None) or usage
    acc = client.accounting
    figure({"kind": "stream_usage", "server_usage": bool(usage)})
    if usage is not None:  # vLLM, OpenAI, llama.cpp's llama-server: the server's own counts
        assert (acc.prompt_tokens, acc.completion_tokens) == (usage.prompt_tokens, usage.completion_tokens)
    else:  # llama-cpp-python 0.3.36 ignores stream_options: 4 characters a token (docs/LLM.md)
        assert (acc.prompt_tokens, acc.completion_tokens) == (len(prompt_text(said)) // 4, len(text) // 4)
    assert acc.calls == 1


def seconds_per_token(text: str) -> float:
    """The server's latest generation speed, from llama.cpp's own timings ("eval time = … ms per token")."""
    speeds = re.findall(r"\s{2,}eval time =.*?\(\s*([\d.]+) ms per token", text)
    return float(speeds[-1]) / 1000 if speeds else 0.05


@needs_log
def test_a_call_abandoned_mid_stream_stops_the_servers_generation():
    client = real_client(timeout_s=1.5, max_retries=0)
    mark = log_mark()
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        client.complete(purpose="probe_abandon", messages=LONG, max_tokens=1500, temperature=0.7)
    # given up at its timeout; a pooled connection the server closed reads as "connection" (no retry here)
    assert err.value.kind in ("timeout", "connection") and time.monotonic() - started < 10, err.value
    # the server noticed the client went away and stopped: it says so in its log, and the next call
    # is answered long before the abandoned generation (1,500 tokens at the server's own speed) could end
    deadline = time.monotonic() + 60
    while "Disconnected from client" not in log_since(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "Disconnected from client" in log_since(mark), log_since(mark)[-2000:]
    started = time.monotonic()
    try:
        real_client().complete(
            purpose="probe_after", messages=[{"role": "user", "content": "Say hi."}], max_tokens=4
        )
    except LLMError as exc:  # a tiny model may answer nothing: the server answered all the same
        assert exc.kind == "empty", exc
    after = time.monotonic() - started
    would_take = 1500 * seconds_per_token(log_since(mark))
    figure({"kind": "abandon", "next_call_s": round(after, 2), "abandoned_would_take_s": round(would_take)})
    assert after < would_take / 2, f"the next call waited {after:.1f} s: the abandoned generation went on"


@needs_log
def test_the_endpoints_concurrency_limit_holds_calls_back_before_they_reach_the_server():
    busy = real_client(concurrency=1, timeout_s=120, max_retries=0)
    mark = log_mark()
    long_call = threading.Thread(
        target=lambda: busy.complete(purpose="probe_busy", messages=LONG, max_tokens=120, temperature=0.7)
    )
    long_call.start()
    time.sleep(0.5)
    waiting = real_client(concurrency=1, time_budget_s=1.5, max_retries=0)  # the same endpoint: one slot
    with pytest.raises(LLMError) as err:
        waiting.complete(
            purpose="probe_wait", messages=[{"role": "user", "content": "Say hi."}], max_tokens=4
        )
    long_call.join()
    assert err.value.kind == "budget" and "free slot" in err.value.message
    assert chat_requests(log_since(mark)) == 1  # the second call never reached the server


@needs_log
def test_calls_per_audit_counted_on_the_servers_side_match_the_run():
    query, answer, contexts = CASES[0]
    client = real_client()
    mark = log_mark()
    started = time.perf_counter()
    result = audit_answer(query, answer, contexts, llm=client)
    seconds = time.perf_counter() - started
    served = chat_requests(log_since(mark))
    acc = client.accounting
    figure({"kind": "server_calls", "served": served, "counted": acc.calls, "seconds": round(seconds, 1)})
    assert result.claims and served > 0
    assert served == acc.calls, f"the server saw {served} requests, the run counted {acc.calls}"
    assert "llm_circuit_open" not in {w["code"] for w in acc.warnings}, acc.failures


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(port: int, log_path: Path) -> subprocess.Popen:
    with open(log_path, "a") as log:
        server = subprocess.Popen(
            [*COMMAND, "--port", str(port)], stdout=log, stderr=subprocess.STDOUT, env=server_env()
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, f"the second server exited: {log_path.read_text()[-2000:]}"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise AssertionError("the second server did not start in 120 s")


@pytest.mark.skipif(not COMMAND, reason="THEORIA_TEST_LLM_SERVER_COMMAND is not set (make test-llm sets it)")
def test_the_breaker_opens_when_the_server_dies_mid_audit_and_closes_when_it_returns(tmp_path):
    port = _free_port()
    log_path = tmp_path / "second-server.log"
    server = _start(port, log_path)
    config = {
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model": "default",
        "timeout_s": 60.0,
        "max_retries": 1,
        "concurrency": 1,
    }
    client = LLMClient(LLMConfig(**config), sleep=lambda s: None)
    query, answer, contexts = CASES[1]

    def kill_after_first_calls():
        while client.accounting.calls < 3 and server.poll() is None:
            time.sleep(0.05)
        server.kill()

    killer = threading.Thread(target=kill_after_first_calls)
    killer.start()
    try:
        result = audit_answer(query, answer, contexts, llm=client)
    finally:
        killer.join()
        server.wait(timeout=10)
    state = client.endpoint.breaker.state()
    assert result.claims  # the audit completed offline for what was left
    assert state["state"] == "open" and state["opened_by"] == "outage", state
    assert state["last_failure"]["kind"] in ("connection", "server_error"), state
    assert "llm_circuit_open" in {w["code"] for w in client.accounting.warnings}
    down_calls = client.accounting.calls

    server = _start(port, log_path)  # the server returns on the same port
    try:
        client.endpoint.breaker.opened_at -= client.endpoint.breaker.cooldown_s  # the cool-down is over
        assert client.endpoint.breaker.state()["state"] == "half_open"
        later = LLMClient(LLMConfig(**config))  # a later run, the same endpoint and breaker
        try:
            later.complete(
                purpose="probe_back", messages=[{"role": "user", "content": "Say hi."}], max_tokens=8
            )
        except LLMError as exc:  # a tiny model may answer nothing: a reply all the same, the server is back
            assert exc.kind == "empty", exc
        assert later.endpoint is client.endpoint
        assert later.endpoint.breaker.state()["state"] == "closed"
        figure({"kind": "outage", "calls_before_kill": down_calls, "openings": state["openings"]})
    finally:
        server.kill()
        server.wait(timeout=10)
