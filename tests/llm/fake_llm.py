"""A real OpenAI-compatible HTTP server on 127.0.0.1 that replays scripted replies.

Routes pick a reply by substrings of the request (the ``TASK: ...`` line of each system
prompt, a claim's text): the first route whose markers all occur wins; each route's replies are consumed in order and the last one repeats. Unrouted
requests get the default reply (HTTP 500 unless set). Every request is recorded.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """One scripted answer: chat content, or an HTTP status, after an optional delay."""

    content: str | None = None  # the assistant message (a JSON string for JSON prompts)
    status: int = 200
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    usage: bool = True
    raw_body: bytes | None = None  # a body sent as is (broken payloads)


def ok(value, **kw) -> Reply:
    """A 200 whose content is ``value`` (dumped to JSON unless already a string)."""
    return Reply(content=value if isinstance(value, str) else json.dumps(value), **kw)


class FakeLLMServer:
    def __init__(self):
        self.routes: list[tuple[tuple[str, ...], list[Reply]]] = []
        self.default = Reply(status=500, content=None)
        self.requests: list[dict] = []
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
                if reply.status != 200:
                    payload = json.dumps({"error": {"message": f"scripted {reply.status}", "type": "server_error"}}).encode()
                else:
                    payload = reply.raw_body if reply.raw_body is not None else json.dumps(server._completion(body, reply)).encode()
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
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

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

    def _pick(self, body: dict, path: str) -> Reply:
        text = json.dumps(body.get("messages", []))
        with self._lock:
            self.requests.append({"body": body, "path": path, "at": time.monotonic()})
            for markers, replies in self.routes:
                if all(m in text for m in markers):
                    return replies.pop(0) if len(replies) > 1 else replies[0]
            return self.default

    @staticmethod
    def _completion(body: dict, reply: Reply) -> dict:
        out = {
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply.content}}],
        }
        if reply.usage:
            out["usage"] = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                            "total_tokens": reply.prompt_tokens + reply.completion_tokens}
        return out
