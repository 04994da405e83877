"""What Theoria knows about one LLM server, shared by every run of the process (docs/LLM.md).

An :class:`Endpoint` (one per base URL, model and key) holds

* the ``openai`` client (connection pool) and a semaphore of ``concurrency`` slots: the limit on
  calls in flight to that server from all runs together;
* a :class:`CircuitBreaker` that trips on outages, not on one bad answer: ``LLM_BREAKER_FAILURES``
  transport failures in a row (timeouts, connection resets, 5xx after retries) open it for
  ``LLM_BREAKER_COOLDOWN_S``, a refused connection or a 401/403/404 at once; unusable replies
  (empty, non-JSON, breaking the schema) only through the failure rate of the last
  ``LLM_BREAKER_WINDOW`` outcomes. While it is open no run calls the server (drafting and
  verification alike); after the cool-down one call at a time is a trial (half-open). One timeout,
  one connection reset or one malformed reply therefore does not take the LLM methods offline;
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
from collections import deque
from typing import Callable

import jsonschema
import openai

from audit.constants import (
    LLM_BREAKER_COOLDOWN_S,
    LLM_BREAKER_FAILURE_RATE,
    LLM_BREAKER_FAILURES,
    LLM_BREAKER_MIN_OUTCOMES,
    LLM_BREAKER_WINDOW,
    LLM_CONCURRENCY,
)
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


# an unusable reply from a server that answered: the task's failure, not an outage
CONTENT_KINDS = frozenset({"empty", "invalid_json", "schema", "echo"})


class CircuitBreaker:
    """Trips on outages, not on one bad answer (docs/LLM.md#failures-timeouts-and-cost).

    * ``failures`` transport failures in a row (timeouts, connection resets, 5xx or 429 after
      retries) open it for ``cooldown_s``; ``hard`` failures (a refused connection, 401/403/404)
      open it at once. A reply of any kind in between resets the run: the server answered.
    * an unusable reply (:data:`CONTENT_KINDS`: empty, invalid JSON, breaking the schema) is the
      task's failure: it counts only in the window of the last ``window`` outcomes, which opens the
      circuit when at least ``min_outcomes`` of them hold a failure share of ``rate`` or more (a
      server answering fast garbage is cut off; a weak model's occasional bad reply is not).

    ``refusal()`` only looks; ``admit()`` is asked right before a call and, once the cool-down is
    over, lets exactly one trial through until it ends (``success``, ``failure`` or ``release``).
    The trial's failure opens it again, except an unusable reply after an outage (the server is
    back: what it says is the task's business). A success after it opened is a recovery: the window
    is cleared and the ``on_recovery`` callbacks run (the endpoint forgets its probed form).
    """

    def __init__(
        self,
        failures: int = LLM_BREAKER_FAILURES,
        cooldown_s: float = LLM_BREAKER_COOLDOWN_S,
        clock=time.monotonic,
        *,
        window: int = LLM_BREAKER_WINDOW,
        min_outcomes: int = LLM_BREAKER_MIN_OUTCOMES,
        rate: float = LLM_BREAKER_FAILURE_RATE,
    ):
        self.failures_to_open = max(1, failures)
        self.cooldown_s = cooldown_s
        self.min_outcomes = max(1, min(min_outcomes, window))
        self.rate = rate
        self._clock = clock
        self._lock = threading.Lock()
        self.consecutive = 0  # transport failures in a row
        self.outcomes: deque[bool] = deque(maxlen=max(1, window))  # True: a failed call
        self.opened_at: float | None = None
        self.opened_by = ""  # "outage" or "failure rate"
        self.openings = 0
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
                f"LLM unavailable after an earlier failure ({kind}, {self.opened_by}); circuit open for "
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

    def _close(self) -> list[Callable[[], None]]:
        recovered = self.opened_at is not None
        self.consecutive, self.opened_at, self._trial, self.opened_by = 0, None, None, ""
        if recovered:
            self.outcomes.clear()
        return list(self.on_recovery) if recovered else []

    def success(self) -> None:
        with self._lock:
            self.outcomes.append(False)
            callbacks = self._close()
        for callback in callbacks:
            callback()

    def _failure_rate(self) -> float:
        return sum(self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    def failure(self, error: LLMError, *, hard: bool = False) -> None:
        callbacks: list[Callable[[], None]] = []
        with self._lock:
            content = error.kind in CONTENT_KINDS and not hard
            self.last_error = error
            self.outcomes.append(True)
            trial = self._trial is not None
            self._trial = None
            # a reply, even an unusable one, ends a run of transport failures: the server answered
            self.consecutive = 0 if content else self.consecutive + 1
            by_rate = len(self.outcomes) >= self.min_outcomes and self._failure_rate() >= self.rate
            if trial and content and self.opened_by == "outage" and not by_rate:
                callbacks = self._close()  # the server is back; a bad answer is the task's failure
            elif hard or (trial and not content) or self.consecutive >= self.failures_to_open:
                self._open("outage")
            elif by_rate or trial:
                self._open("failure rate")
        for callback in callbacks:
            callback()

    def _open(self, why: str) -> None:
        if self.opened_at is None or self._clock() - self.opened_at >= self.cooldown_s:
            self.openings += 1
        self.opened_at, self.opened_by = self._clock(), why

    @property
    def is_open(self) -> bool:
        return self.refusal() is not None

    def state(self) -> dict:
        """What the workspace settings show: closed, open or half-open, and why."""
        with self._lock:
            if self.opened_at is None:
                state, left = "closed", 0.0
            else:
                left = max(0.0, self.cooldown_s - (self._clock() - self.opened_at))
                state = "open" if left > 0 else "half_open"
            last = self.last_error
            return {
                "state": state,
                "opened_by": self.opened_by,
                "open_for_s": round(left, 1),
                "openings": self.openings,
                "consecutive_transport_failures": self.consecutive,
                "window": {"outcomes": len(self.outcomes), "failures": sum(self.outcomes)},
                "last_failure": {"kind": last.kind, "message": last.message[:200]} if last else None,
                "thresholds": {
                    "transport_failures_in_a_row": self.failures_to_open,
                    "failure_rate": self.rate,
                    "window": self.outcomes.maxlen,
                    "min_outcomes": self.min_outcomes,
                    "cooldown_s": self.cooldown_s,
                },
            }


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


def endpoint_state(config: LLMConfig) -> dict | None:
    """The breaker state of ``config``'s endpoint in this process, or None when no run used it yet."""
    key = (config.base_url.rstrip("/"), config.model, config.api_key)
    with _ENDPOINTS_LOCK:
        endpoint = _ENDPOINTS.get(key)
    return None if endpoint is None else endpoint.breaker.state()
