"""What Theoria knows about one LLM server, shared by every run of the process (docs/LLM.md).

An :class:`Endpoint` (one per base URL, model and key) holds

* the ``openai`` client (connection pool) and a semaphore of ``concurrency`` slots: the limit on
  calls in flight to that server from all runs together;
* a :class:`CircuitBreaker`: ``LLM_BREAKER_FAILURES`` failures in a row (timeouts, 5xx after
  retries) open it for ``LLM_BREAKER_COOLDOWN_S``; a refused connection or a 401/403/404 opens it
  at once. While it is open no run calls the server (drafting and verification alike); after
  the cool-down the next call is a trial: success closes it, failure opens it again. One
  timeout therefore does not take the LLM methods offline;
* the structured-output form the server honours, probed once (:meth:`Endpoint.structured_form`)
  and cached: OpenAI ``response_format: json_schema`` (strict), llama.cpp's
  ``json_object`` + ``schema``, vLLM's ``guided_json``, Ollama's ``format``, plain
  ``json_object``; ``prompt`` when none works (the prompt describes the JSON and one repair
  follows a bad reply).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import openai

from audit.constants import LLM_BREAKER_COOLDOWN_S, LLM_BREAKER_FAILURES
from audit.pipeline.llm.schemas import wire_schema

if TYPE_CHECKING:  # pragma: no cover
    from audit.pipeline.llm.client import LLMClient, LLMConfig, LLMError

PLACEHOLDER_API_KEY = "not-needed"  # local servers ignore the key; the openai package wants one
PROMPT = "prompt"
# tried in this order by the probe; the first whose reply obeys the probe schema is kept
FORMS = ("json_schema", "llama_json_object", "vllm_guided_json", "ollama_format", "json_object")
PROBE_PROMPT = "TASK: probe\nSay hello in one word."


def format_kwargs(form: str, task: str, items: int | None = None) -> dict:
    """The keyword arguments of ``chat.completions.create`` that ask for ``task``'s schema in ``form``
    (``items``: the claims of a batched call, see :func:`~audit.pipeline.llm.schemas.wire_schema`)."""
    if form == PROMPT or not form:
        return {}
    schema = wire_schema(task, items)
    if form == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": task, "strict": True, "schema": schema},
            }
        }
    if form == "llama_json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if form == "vllm_guided_json":
        return {"extra_body": {"guided_json": schema}}
    if form == "ollama_format":
        return {"extra_body": {"format": schema}}
    if form == "json_object":
        return {"response_format": {"type": "json_object"}}
    raise ValueError(f"unknown structured-output form {form!r}")


class CircuitBreaker:
    """Consecutive failures open it for a cool-down; see the module doc."""

    def __init__(
        self,
        failures: int = LLM_BREAKER_FAILURES,
        cooldown_s: float = LLM_BREAKER_COOLDOWN_S,
        clock=time.monotonic,
    ):
        self.failures_to_open = max(1, failures)
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self.consecutive = 0
        self.opened_at: float | None = None
        self.last_error: LLMError | None = None

    def refusal(self) -> str | None:
        """Why no call may start now (the breaker is open and cooling down), or None."""
        with self._lock:
            if self.opened_at is None:
                return None
            waited = self._clock() - self.opened_at
            if waited >= self.cooldown_s:
                return None  # half-open: the next call is the trial
            kind = self.last_error.kind if self.last_error else "failure"
            return (
                f"LLM unavailable after an earlier failure ({kind}); circuit open for "
                f"{self.cooldown_s - waited:.0f} s more"
            )

    def success(self) -> None:
        with self._lock:
            self.consecutive, self.opened_at = 0, None

    def failure(self, error: LLMError, *, hard: bool = False) -> None:
        with self._lock:
            self.consecutive += 1
            self.last_error = error
            if hard or self.consecutive >= self.failures_to_open:
                self.opened_at = self._clock()

    @property
    def is_open(self) -> bool:
        return self.refusal() is not None


class Endpoint:
    """One server's connection, concurrency slots, breaker and structured-output form."""

    def __init__(self, base_url: str, api_key: str = "", concurrency: int = 4):
        self.base_url = base_url
        self.openai = openai.OpenAI(
            base_url=base_url, api_key=api_key or PLACEHOLDER_API_KEY, max_retries=0
        )  # retries are the client's: counted and bounded
        self.slots = threading.BoundedSemaphore(max(1, concurrency))
        self.breaker = CircuitBreaker()
        self.form: str | None = None  # None until probed
        self._probe_lock = threading.Lock()

    def structured_form(self, client: LLMClient) -> str:
        """The form to ask for, probing the server on first use (probe calls go on ``client``'s run).

        A probe that cannot reach the server (timeout, refused, breaker open) is not cached: the
        run uses the prompt and a later run probes again.
        """
        if self.form is not None:
            return self.form
        with self._probe_lock:
            if self.form is not None:
                return self.form
            from audit.pipeline.llm.client import LLMError

            for form in FORMS:
                try:
                    reply = client.complete(
                        purpose="probe",
                        messages=[{"role": "user", "content": PROBE_PROMPT}],
                        task="probe",
                        extra=format_kwargs(form, "probe"),
                        probing=True,
                    )
                except LLMError as exc:
                    if exc.kind in ("client_error", "server_error", "empty"):
                        continue  # the server refuses this form (llama-cpp-python answers 500): try the next
                    return PROMPT
                from audit.pipeline.llm.client import parse_json_reply
                from audit.pipeline.llm.schemas import TASKS

                try:
                    parse_json_reply(reply, TASKS["probe"])
                except Exception:  # noqa: BLE001 - any unusable reply means the form is not honoured
                    continue
                self.form = form
                return form
            self.form = PROMPT
            return PROMPT


_ENDPOINTS: dict[tuple, Endpoint] = {}
_ENDPOINTS_LOCK = threading.Lock()


def endpoint_for(config: LLMConfig) -> Endpoint:
    """The process-wide :class:`Endpoint` of ``config``'s server (created on first use)."""
    key = (config.base_url.rstrip("/"), config.model, config.api_key)
    with _ENDPOINTS_LOCK:
        endpoint = _ENDPOINTS.get(key)
        if endpoint is None:
            endpoint = _ENDPOINTS[key] = Endpoint(config.base_url, config.api_key, config.concurrency)
        return endpoint


def endpoints_reset() -> None:
    """Forget every endpoint (tests; a changed deployment setting)."""
    with _ENDPOINTS_LOCK:
        _ENDPOINTS.clear()
