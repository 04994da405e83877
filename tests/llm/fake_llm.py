"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted replies.

Routes pick a reply by substrings of the request (the ``TASK: ...`` line of each prompt, a
claim's text): the first route whose markers all occur wins; each route's replies are consumed
in order and the last one repeats. A reply's ``content`` may be a function of the request body
(batched prompts: answer per claim listed). Unrouted requests get the default reply (HTTP 500
unless set). Every request is recorded.

A request with ``"stream": true`` is answered with server-sent events, piece by piece
(``chunk_delay_s`` between pieces), the ``usage`` last when ``stream_options.include_usage`` asks
for it; a client that hangs up mid-reply is counted in ``cancelled`` and the generation stops.

Structured outputs: ``honours`` names the forms (``audit.pipeline.llm.endpoint.FORMS``) the
server obeys, ``rejects`` those it answers with HTTP 500 (llama-cpp-python's ``json_schema``);
a probe in any other form gets prose, as from a server that ignores the field.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """One scripted answer: chat content, or an HTTP status, after an optional delay."""

    content: object = None  # the assistant message (a JSON string for JSON prompts), or body -> str
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    usage: bool = True
    raw_body: bytes | None = None  # a body sent as is (broken payloads)
    finish_reason: str = "stop"
    chunk_delay_s: float = 0.0  # streamed replies: the pause before each piece (a slow generation)
    chunk_chars: int = 16  # streamed replies: characters a piece
    drop: bool = False  # close the connection without a reply (a connection reset)
    # the first token's candidates and their log-probabilities ({"Yes": -0.1, "No": -2.4}), sent
    # when the request asks for ``logprobs`` (or a function of the request body giving them)
    logprobs: object = None


def ok(value, **kw) -> Reply:
    """A 200 whose content is ``value`` (dumped to JSON unless already a string)."""
    return Reply(content=value if isinstance(value, str) else json.dumps(value), **kw)


class FakeLLMServer:
    def __init__(self):
        self.routes: list[tuple[tuple[str, ...], list[Reply]]] = []
        self.default = Reply(status=500, content=None)
        self.requests: list[dict] = []
        self.cancelled = 0  # streamed replies the client hung up on before the end
        self.finished = 0  # streamed replies sent to the end
        self.honours: set[str] = set()
        self.probe_status: int | None = None  # an HTTP status every probe gets (a server in trouble)
        self.rejects: set[str] = set()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = server._pick(body, self.path)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(2)  # socket.SHUT_RDWR
                    return
                if reply.status != 200:
                    payload = json.dumps(
                        {"error": {"message": f"scripted {reply.status}", "type": "server_error"}}
                    ).encode()
                elif body.get("stream") and reply.raw_body is None:
                    server._stream(self, body, reply)
                    return
                else:
                    payload = (
                        reply.raw_body
                        if reply.raw_body is not None
                        else json.dumps(server._completion(body, reply)).encode()
                    )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): nothing to answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> "FakeLLMServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def route(self, marker: str | tuple[str, ...], *replies: Reply) -> "FakeLLMServer":
        markers = (marker,) if isinstance(marker, str) else tuple(marker)
        self.routes.append((tuple(json.dumps(m)[1:-1] for m in markers), list(replies)))
        return self

    def calls(self, marker: str = "") -> list[dict]:
        """Requests whose messages contain ``marker``."""
        needle = json.dumps(marker)[1:-1]
        return [r for r in self.requests if needle in json.dumps(r["body"].get("messages", []))]

    @staticmethod
    def form_of(body: dict) -> str:
        """The structured-output form a request asks for ("" for none)."""
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return "json_schema"
        if fmt.get("type") == "json_object":
            return "llama_json_object" if "schema" in fmt else "json_object"
        if "guided_json" in body:
            return "vllm_guided_json"
        if "format" in body:
            return "ollama_format"
        return ""

    def _pick(self, body: dict, path: str) -> Reply:
        text = json.dumps(body.get("messages", []))
        with self._lock:
            self.requests.append({"body": body, "path": path, "at": time.monotonic()})
            form = self.form_of(body)
            if "TASK: probe" in text:
                if self.probe_status:
                    return Reply(status=self.probe_status)
                if form in self.rejects:
                    return Reply(status=500)
                return ok({"probe": "theoria"}) if form in self.honours else ok("Hello!")
            for markers, replies in self.routes:
                if all(m in text for m in markers):
                    return replies.pop(0) if len(replies) > 1 else replies[0]
            return self.default

    def _stream(self, handler, body: dict, reply: Reply) -> None:
        """Send the reply as server-sent events, piece by piece; stop when the client hangs up."""
        content = reply.content(body) if callable(reply.content) else reply.content
        content = content or ""
        size = max(1, reply.chunk_chars)
        pieces = [content[i : i + size] for i in range(0, len(content), size)] or [""]

        def event(choices: list, usage: dict | None = None) -> bytes:
            data = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model", "test-model"),
                "choices": choices,
            }
            if usage is not None:
                data["usage"] = usage
            return f"data: {json.dumps(data)}\n\n".encode()

        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Connection", "close")
            for k, v in reply.headers.items():
                handler.send_header(k, v)
            handler.end_headers()
            logprobs = self._logprobs(body, reply)
            for k, piece in enumerate(pieces):
                if reply.chunk_delay_s:
                    time.sleep(reply.chunk_delay_s)
                choice = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                if k == 0 and logprobs is not None:
                    choice["logprobs"] = logprobs
                handler.wfile.write(event([choice]))
                handler.wfile.flush()
            handler.wfile.write(event([{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]))
            if reply.usage and (body.get("stream_options") or {}).get("include_usage"):
                usage = {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                }
                handler.wfile.write(event([], usage))
            handler.wfile.write(b"data: [DONE]\n\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with self._lock:
                self.cancelled += 1
            return
        finally:
            handler.close_connection = True
        with self._lock:
            self.finished += 1

    @staticmethod
    def _logprobs(body: dict, reply: Reply) -> dict | None:
        """The OpenAI ``logprobs`` block of the first token, when asked for and scripted."""
        top = reply.logprobs(body) if callable(reply.logprobs) else reply.logprobs
        if not body.get("logprobs") or not top:
            return None
        ranked = sorted(top.items(), key=lambda kv: -kv[1])[: int(body.get("top_logprobs") or 1)]
        token, logprob = ranked[0]
        return {
            "content": [
                {
                    "token": token,
                    "logprob": logprob,
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in ranked],
                }
            ]
        }

    @staticmethod
    def _completion(body: dict, reply: Reply) -> dict:
        out = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": reply.finish_reason,
                    "message": {
                        "role": "assistant",
                        "content": reply.content(body) if callable(reply.content) else reply.content,
                    },
                }
            ],
        }
        logprobs = FakeLLMServer._logprobs(body, reply)
        if logprobs is not None:
            out["choices"][0]["logprobs"] = logprobs
        if reply.usage:
            out["usage"] = {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
            }
        return out


_CLAIM_LINE = re.compile(r"^\s*(?:Claim )?(c\d+): (.+)$", re.MULTILINE)


def claims_in(body: dict) -> dict[str, str]:
    """{claim id: claim text} of the claims a batched prompt lists ("Claim c1: ..." or "c1: ...")."""
    text = body["messages"][-1]["content"]
    return {cid: claim.strip() for cid, claim in _CLAIM_LINE.findall(text)}


def per_claim(key: str, row, **kw) -> Reply:
    """A reply to a batched prompt: ``{key: [{"claim_id": id, **row(claim_text)}, ...]}`` for every claim listed."""

    def content(body: dict) -> str:
        return json.dumps({key: [{"claim_id": cid, **row(text)} for cid, text in claims_in(body).items()]})

    return Reply(content=content, **kw)
