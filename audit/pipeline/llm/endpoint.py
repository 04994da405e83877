"""What Theoria knows about one LLM server, shared by every run of the process (docs/LLM.md).

An :class:`Endpoint` (one per base URL, model and key) holds

* the ``openai`` client (connection pool) and a semaphore of ``concurrency`` slots: the limit on
  calls in flight to that server from all runs together;
* a :class:`CircuitBreaker`: ``LLM_BREAKER_FAILURES`` failures in a row (timeouts, connection
  resets and 5xx after retries, and unusable replies: empty, non-JSON, breaking the schema) open it
  for ``LLM_BREAKER_COOLDOWN_S``; a refused connection or a 401/403/404 opens it at once. While it
  is open no run calls the server (drafting and verification alike); after the cool-down one call
  at a time is a trial (half-open): success closes it, failure opens it again. One timeout or one
  connection reset therefore does not take the LLM methods offline;
* the structured-output form the server honours, probed once (:meth:`Endpoint.structured_form`)
  and cached: OpenAI ``response_format: json_schema`` (strict), llama.cpp's
  ``json_object`` + ``schema``, vLLM's ``guided_json``, Ollama's ``format``, plain
  ``json_object``; ``prompt`` when none works (the prompt describes the JSON and one repair
  follows a bad reply). A form chosen while the server answered 429/502/503/504 is kept for one
  cool-down only, and a breaker recovery forgets the form: the server is probed again.

It imports nothing of the client: the probe is a callable the client passes in.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

import jsonschema
import openai

from audit.constants import LLM_BREAKER_COOLDOWN_S, LLM_BREAKER_FAILURES, LLM_CONCURRENCY
from audit.pipeline.llm.base import LLMConfig, LLMError, parse_json_reply
from audit.pipeline.llm.schemas import TASKS, wire_schema

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
    schema = wire_schema(task, items, lengths=form != "json_schema")
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
    """Failures in a row open it for a cool-down; then one trial call at a time (half-open).

    A failure is anything that gave no usable answer: transport errors, 5xx after retries, and
    content (an empty, non-JSON or schema-breaking reply: a server returning fast garbage is as
    unusable as one that is down). ``refusal()`` only looks; ``admit()`` is asked right before a
    call and, once the cool-down is over, lets exactly one trial through until it ends
    (``success``, ``failure`` or ``release``). A success after the breaker opened is a recovery:
    the ``on_recovery`` callbacks run (the endpoint forgets its probed structured-output form).
    """

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
        self._trial: int | None = None  # the thread whose call is the half-open trial
        self.on_recovery: list[Callable[[], None]] = []

    def _refusal(self) -> str | None:
        if self.opened_at is None:
            return None
        waited = self._clock() - self.opened_at
        kind = self.last_error.kind if self.last_error else "failure"
        if waited < self.cooldown_s:
            return (
                f"LLM unavailable after an earlier failure ({kind}); circuit open for "
                f"{self.cooldown_s - waited:.0f} s more"
            )
        if self._trial is not None and self._trial != threading.get_ident():
            return f"LLM unavailable after an earlier failure ({kind}); a trial call is in flight"
        return None

    def refusal(self) -> str | None:
        """Why no call may start now (open and cooling down, or a trial in flight), or None."""
        with self._lock:
            return self._refusal()

    def admit(self) -> str | None:
        """Like :meth:`refusal`, but a call admitted while half-open becomes the trial."""
        with self._lock:
            refusal = self._refusal()
            if refusal is None and self.opened_at is not None:
                self._trial = threading.get_ident()
            return refusal

    def release(self) -> None:
        """The calling thread's call ended without a verdict on the server (a budget stop)."""
        with self._lock:
            if self._trial == threading.get_ident():
                self._trial = None

    def success(self) -> None:
        with self._lock:
            recovered = self.opened_at is not None
            self.consecutive, self.opened_at, self._trial = 0, None, None
            callbacks = list(self.on_recovery) if recovered else []
        for callback in callbacks:
            callback()

    def failure(self, error: LLMError, *, hard: bool = False) -> None:
        with self._lock:
            self.consecutive += 1
            self.last_error = error
            trial = self._trial is not None
            self._trial = None
            if hard or trial or self.consecutive >= self.failures_to_open:
                self.opened_at = self._clock()

    @property
    def is_open(self) -> bool:
        return self.refusal() is not None


class Endpoint:
    """One server's connection, concurrency slots, breaker and structured-output form."""

    def __init__(self, base_url: str, api_key: str = "", concurrency: int = LLM_CONCURRENCY):
        self.base_url = base_url
        self.openai = openai.OpenAI(
            base_url=base_url, api_key=api_key or PLACEHOLDER_API_KEY, max_retries=0
        )  # retries are the client's: counted and bounded
        self.slots = threading.BoundedSemaphore(max(1, concurrency))
        self.breaker = CircuitBreaker()
        self.breaker.on_recovery.append(self.forget_form)
        self.form: str | None = None  # None until probed
        self.form_until: float | None = None  # a form chosen while the server was in trouble expires
        self._probe_lock = threading.Lock()

    def forget_form(self) -> None:
        """Probe again on next use (the server recovered: what it honours may have been hidden)."""
        self.form, self.form_until = None, None

    def _cached_form(self) -> str | None:
        if self.form is not None and self.form_until is not None and time.monotonic() >= self.form_until:
            self.forget_form()
        return self.form

    def structured_form(self, ask: Callable[[dict], str]) -> str:
        """The form to ask for, probing the server on first use.

        ``ask(extra)`` makes one probe call with the keyword arguments of a form and returns the
        reply text or raises LLMError (the client's ``probe`` call: it goes on that run's account).
        A probe that cannot reach the server (timeout, refused, breaker open) is not cached: the
        run uses the prompt and a later run probes again. A 429 or 502/503/504 on a form means a
        server in trouble, not a refusal: the form then chosen holds for one breaker cool-down only
        (so does the prompt when no form got any reply), and a recovery of the breaker forgets it too.
        """
        if self._cached_form() is not None:
            return self.form
        with self._probe_lock:
            if self._cached_form() is not None:
                return self.form
            troubled, answered = False, False
            for form in FORMS:
                try:
                    reply = ask(format_kwargs(form, "probe"))
                    answered = True
                except LLMError as exc:
                    if exc.transient and exc.kind != "rate_limited" and exc.status is None:
                        return PROMPT  # unreachable: nothing learnt, a later run probes again
                    troubled = troubled or exc.transient
                    if exc.kind in ("client_error", "server_error", "rate_limited", "empty"):
                        continue  # the server refuses this form (llama-cpp-python answers 500): try the next
                    return PROMPT
                try:
                    parse_json_reply(reply, TASKS["probe"])
                except (ValueError, jsonschema.ValidationError):
                    continue  # any unusable reply means the form is not honoured
                return self._keep(form, troubled)
            # no form got a reply at all (every one an HTTP error): a server in trouble, not one
            # refusing every form; the prompt holds for one cool-down, then the server is probed again
            return self._keep(PROMPT, troubled or not answered)

    def _keep(self, form: str, troubled: bool) -> str:
        self.form = form
        self.form_until = time.monotonic() + self.breaker.cooldown_s if troubled else None
        return form


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
