"""One client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Plain Python, no Django: ``audit.services.llm`` builds an :class:`LLMConfig` from the settings
and the workspace, and the pipeline receives a ready :class:`LLMClient` (or None: offline).

What the client guarantees to the methods that use it:

* every call either returns non-empty text or raises :class:`LLMError` (never anything else);
* 429 and 5xx are retried ``max_retries`` times with exponential back-off, honouring
  ``Retry-After`` / ``retry-after-ms`` up to ``LLM_RETRY_MAX_WAIT_S`` (longer: give up now);
* one :class:`~audit.pipeline.llm.endpoint.Endpoint` per server (process-wide) holds the
  connection, the concurrency limit, the circuit breaker (transport failures in a row or a high
  failure rate open it for a cool-down; one malformed reply does not) and the structured-output form probed once; drafting and verification share it;
* a call never waits longer than ``timeout_s`` for the server, nor past the run's time budget
  (``time_budget_s``, counted from the client's creation): with too little time left no call
  starts and the methods say ``budget``;
* every call, failed or not, is counted in :class:`LLMAccounting` (calls, tokens, latency,
  failures, warnings, JSON validity per task), which the run stores on ``VerificationRun``; a
  call that times out is counted with the tokens the server may still spend on it;
* ``max_tokens`` is capped to what is left of ``token_budget``; with too little left the client
  refuses further calls (offline from then on) and records one warning;
* JSON tasks ask the server for the task's schema (:mod:`audit.pipeline.llm.schemas`) in the
  form it honours, and otherwise fall back to the prompt and one repair.
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import jsonschema
import openai

try:  # the openai package's HTTP client: httpx2 from openai 3 on, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx

from audit.constants import (
    LLM_MAX_TOKENS,
    LLM_MAX_TOKENS_CEILING,
    LLM_MIN_CALL_S,
    LLM_MIN_COMPLETION_TOKENS,
    LLM_RETRY_BACKOFF_S,
    LLM_RETRY_MAX_WAIT_S,
    LLM_SEED,
    LLM_TASK_MAX_TOKENS,
    LLM_TEMPERATURE,
)
from audit.pipeline.llm.base import (
    Completion,
    LLMConfig,
    LLMError,
    first_token_logprobs,
    json_candidates,
    parse_json_reply,
)
from audit.pipeline.llm.endpoint import PROBE_PROMPT, PROMPT, Endpoint, endpoint_for, format_kwargs
from audit.pipeline.llm.prompts import echoes_prompt, for_structured_output
from audit.pipeline.llm.schemas import TASKS, wire_schema


@dataclass
class LLMAccounting:
    """What the LLM cost one run: read by the service that stores ``VerificationRun``.

    ``latency_ms`` sums the wall time of every call (in-flight calls overlap, so it can exceed
    the run's duration); ``failures`` lists each failed call; ``warnings`` holds run-level notes
    such as "token budget exceeded".
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    failures: list[dict] = field(default_factory=list)
    warnings: list[dict] = field(default_factory=list)
    calls_by_purpose: dict = field(default_factory=dict)
    json_results: dict = field(default_factory=dict)  # task -> [valid replies, JSON replies read]
    structured: str = ""  # the structured-output form the run's JSON calls used
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add_call(
        self, *, purpose: str, prompt_tokens: int, completion_tokens: int, latency_ms: float
    ) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.latency_ms += latency_ms
            self.calls_by_purpose[purpose] = self.calls_by_purpose.get(purpose, 0) + 1

    def add_failure(self, error: LLMError) -> None:
        with self._lock:
            self.failures.append(
                {
                    "purpose": error.purpose,
                    "kind": error.kind,
                    "message": error.message[:300],
                    "attempts": error.attempts,
                    "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                }
            )

    def add_json_result(self, task: str, valid: bool) -> None:
        with self._lock:
            row = self.json_results.setdefault(task, [0, 0])
            row[0] += int(valid)
            row[1] += 1

    def add_warning(self, code: str, message: str) -> None:
        with self._lock:
            if not any(w["code"] == code for w in self.warnings):
                self.warnings.append({"code": code, "message": message})

    def run_fields(self) -> dict:
        """The ``VerificationRun`` field values for this accounting."""
        return {
            "llm_calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "llm_latency_ms": round(self.latency_ms, 1),
            "llm_failures": list(self.failures),
        }


def retry_after_seconds(headers) -> float | None:
    """Seconds asked by ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date), or None."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def task_max_tokens(task: str, items: int = 1) -> int:
    """The completion cap of ``task`` for ``items`` claims (sentences, questions), per LLM_TASK_MAX_TOKENS."""
    base, per_item = LLM_TASK_MAX_TOKENS.get(task, (LLM_MAX_TOKENS, 0))
    return min(LLM_MAX_TOKENS_CEILING, base + per_item * max(1, items))


def prompt_text(messages: list[dict]) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages)


__all__ = [
    "Completion",
    "LLMAccounting",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "json_candidates",
    "parse_json_reply",
    "task_max_tokens",
]


class _Abandoned(Exception):
    """A call given up (its timeout or the run's budget): the connection is closed."""

    def __init__(self, completion_tokens: int):
        super().__init__("abandoned")
        self.completion_tokens = completion_tokens


def _usage_dict(usage) -> dict:
    if usage is None:
        return {}
    return {
        "prompt_tokens": getattr(usage, "prompt_tokens", None),
        "completion_tokens": getattr(usage, "completion_tokens", None),
    }


class LLMClient:
    """Chat completions through the ``openai`` package with the guarantees of the module doc.

    One client per run (its accounting and budgets are the run's); the :class:`Endpoint` it
    talks through is shared by every run of the process.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        accounting: LLMAccounting | None = None,
        sleep: Callable[[float], None] = time.sleep,
        endpoint: Endpoint | None = None,
    ):
        self.config = config
        self.accounting = accounting or LLMAccounting()
        self._sleep = sleep
        self.endpoint = endpoint or endpoint_for(config)
        self._reserved = 0  # tokens promised to calls in flight (the budget counts them)
        # answers of this run's LLM methods by their input (method, claim text, evidence…): a claim
        # is judged once per text, and a revision pass re-asks only what its edits changed
        self.memo: dict[tuple, Any] = {}
        # held by a method while it asks about claims, so two methods asking about the same claim at
        # once (the support judge "llm" and the llm_judge method run side by side) call once
        self.memo_lock = threading.RLock()
        self._lock = threading.Lock()
        self.restart_clock()

    def restart_clock(self, time_budget_s: float | None = None) -> None:
        """Start the run's time budget now (``time_budget_s`` or the config's)."""
        budget = self.config.time_budget_s if time_budget_s is None else time_budget_s
        self._deadline = None if budget is None else time.monotonic() + budget
        self.started = time.perf_counter()  # the request's start: a drafted audit's duration counts from it

    def time_left(self) -> float | None:
        return None if self._deadline is None else self._deadline - time.monotonic()

    @property
    def available(self) -> bool:
        """False once the breaker is open or a budget is spent: callers go offline at once."""
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> str | None:
        """Why no call will be made now (breaker open, a budget spent), or None; notes budget warnings."""
        breaker = self.endpoint.breaker.refusal()
        if breaker:
            self._warn_circuit(breaker)
            return breaker
        left = self.time_left()
        if left is not None and left < LLM_MIN_CALL_S:
            self._warn_time()
            return f"budget: the audit's LLM time budget of {self.config.time_budget_s:g} s is spent"
        if self._tokens_left() is not None and self._tokens_left() < LLM_MIN_COMPLETION_TOKENS:
            self._warn_budget()
            return "budget: LLM token budget exceeded"
        return None

    def _warn_budget(self) -> None:
        self.accounting.add_warning(
            "llm_budget_exceeded",
            f"LLM token budget of {self.config.token_budget} reached: offline methods used from here on.",
        )

    def _warn_circuit(self, refusal: str) -> None:
        self.accounting.add_warning(
            "llm_circuit_open",
            f"The LLM endpoint's circuit breaker is open ({refusal}): offline methods used from here on.",
        )

    def _warn_time(self) -> None:
        self.accounting.add_warning(
            "llm_time_budget_exceeded",
            f"The audit's LLM time budget of {self.config.time_budget_s:g} s was spent: offline verdicts "
            "stand for the methods not done.",
        )

    def _tokens_left(self) -> int | None:
        budget = self.config.token_budget
        if budget is None:
            return None
        return budget - self.accounting.total_tokens - self._reserved

    def _fail(
        self,
        kind: str,
        message: str,
        purpose: str,
        attempts: int,
        *,
        trip: bool = False,
        hard: bool = False,
        status: int | None = None,
    ) -> LLMError:
        """Record a failed call; ``trip`` counts it against the endpoint's breaker (``hard``: opens it now)."""
        error = LLMError(kind, message, purpose=purpose, attempts=attempts, status=status)
        self.accounting.add_failure(error)
        if trip:
            self.endpoint.breaker.failure(error, hard=hard)
        return error

    def refusal(self, purpose: str, why: str) -> LLMError:
        """A reply its caller cannot use (``why``), recorded as a ``schema`` failure."""
        return self._fail("schema", why, purpose, 1)

    def complete_text(
        self, *, purpose: str, messages: list[dict], instructions: str, max_tokens: int | None = None
    ) -> str:
        """The text of one free-text completion, or LLMError (recorded): a reply cut off at the token
        cap, or one that repeats the prompt (``instructions``, ``prompts.echoes_prompt``), is refused."""
        reply = self.complete_reply(purpose=purpose, messages=messages, max_tokens=max_tokens)
        if reply.truncated:
            raise self.refusal(purpose, "the reply was cut off at the token cap")
        if echoes_prompt(reply.text, instructions):
            raise self.refusal(purpose, "the reply repeats the prompt")
        return reply.text.strip()

    def complete(self, *, purpose: str, messages: list[dict], **kwargs) -> str:
        """Return the reply text of one chat completion, or raise LLMError (recorded)."""
        return self.complete_reply(purpose=purpose, messages=messages, **kwargs).text

    def complete_reply(
        self,
        *,
        purpose: str,
        messages: list[dict],
        temperature: float = LLM_TEMPERATURE,
        max_tokens: int | None = None,
        seed: int | None = LLM_SEED,
        task: str = "",
        items: int = 1,
        extra: dict | None = None,
        probing: bool = False,
        checked_later: bool = False,
        stream: bool | None = None,
    ) -> Completion:
        """One chat completion as a :class:`Completion`, or raise LLMError (recorded).

        ``max_tokens`` defaults to the task's cap and is lowered to what the token budget has
        left; the call's timeout (and the wait for a free slot of the endpoint) is lowered to what
        the time budget has left. ``probing`` (the structured-output probe): no retry, and an HTTP
        error neither counts against the breaker nor is listed as a failure (it only means the
        server refuses that form). ``checked_later``: the caller tells the breaker whether the
        reply was usable (``complete_json`` after validating it). ``stream`` False: one JSON body
        whatever the config (a one-token call gains nothing from a stream, and llama-cpp-python 0.3.36
        loses the logprobs of a streamed reply).
        """
        refusal = self.endpoint.breaker.admit()
        if refusal:
            self._warn_circuit(refusal)
            raise self._fail("circuit_open", refusal, purpose, 0)
        try:
            return self._reserve_and_call(
                purpose,
                messages,
                temperature,
                max_tokens,
                seed,
                task,
                items,
                extra,
                probing,
                checked_later,
                stream,
            )
        except BaseException:
            self.endpoint.breaker.release()  # a trial stopped by a budget frees the half-open slot
            raise

    def _reserve_and_call(
        self,
        purpose,
        messages,
        temperature,
        max_tokens,
        seed,
        task,
        items,
        extra,
        probing,
        checked_later,
        stream,
    ) -> Completion:
        left = self.time_left()
        if left is not None and left < LLM_MIN_CALL_S:
            self._warn_time()
            raise self._fail("budget", "the audit's LLM time budget is spent", purpose, 0)
        wanted = max_tokens or task_max_tokens(task or purpose.split(":")[0], items)
        prompt_estimate = len(prompt_text(messages)) // 4
        with self._lock:
            tokens_left = self._tokens_left()
            if tokens_left is not None:
                wanted = min(wanted, tokens_left - prompt_estimate)
                if wanted < LLM_MIN_COMPLETION_TOKENS:
                    self._warn_budget()
                    raise self._fail("budget", "token budget exceeded", purpose, 0)
            reserved = prompt_estimate + wanted
            self._reserved += reserved
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": wanted,
            **(extra or {}),
        }
        if seed is not None:
            kwargs["seed"] = seed
        try:
            # waiting for a slot of the endpoint (another audit's call in flight) is the audit's time
            left = self.time_left()
            if not self.endpoint.slots.acquire(
                timeout=None if left is None else max(0.0, left - LLM_MIN_CALL_S)
            ):
                self._warn_time()
                raise self._fail(
                    "budget", "the audit's LLM time budget ran out waiting for a free slot", purpose, 0
                )
            try:
                completion = self._call(kwargs, purpose, messages, prompt_estimate, probing, stream)
            finally:
                self.endpoint.slots.release()
        finally:
            with self._lock:
                self._reserved -= reserved
        if not checked_later:
            self.endpoint.breaker.success()
        return completion

    # long: the retry loop: one except branch per kind of failure (abandoned, timeout, refused, HTTP status, malformed), each deciding retry, breaker and record
    def _call(
        self,
        kwargs: dict,
        purpose: str,
        messages: list[dict],
        prompt_estimate: int,
        probing: bool = False,
        stream: bool | None = None,
    ) -> Completion:
        attempt = 0
        retries = 0 if probing else self.config.max_retries
        while True:
            attempt += 1
            left = self.time_left()
            if left is not None and left < LLM_MIN_CALL_S:
                raise self._fail("budget", "the audit's LLM time budget is spent", purpose, attempt - 1)
            timeout = self.config.timeout_s if left is None else min(self.config.timeout_s, left)
            started = time.perf_counter()
            try:
                return self._streamed(kwargs, purpose, messages, started, timeout, attempt, stream)
            except _Abandoned as exc:
                # the connection is closed, so the server stops generating; count what it may have spent
                self._count(purpose, started, prompt_estimate, exc.completion_tokens)
                if timeout < self.config.timeout_s:
                    self._warn_time()
                    raise self._fail(
                        "budget",
                        f"the audit's LLM time budget ran out during the call ({timeout:.1f} s)",
                        purpose,
                        attempt,
                    ) from None
                raise self._fail(
                    "timeout", f"no reply within {timeout:g} s", purpose, attempt, trip=True
                ) from None
            except openai.APIConnectionError as exc:
                self._count(purpose, started)
                if attempt <= retries:
                    self._sleep(LLM_RETRY_BACKOFF_S * 2 ** (attempt - 1))
                    continue
                # a refused connection (nothing listens) opens the breaker at once; a reset counts once
                refused = isinstance(exc.__cause__, httpx.ConnectError)
                raise self._fail("connection", str(exc), purpose, attempt, trip=True, hard=refused) from exc
            except openai.APIStatusError as exc:
                self._count(purpose, started)
                status = exc.status_code
                retriable = status == 429 or status >= 500
                kind = ("rate_limited" if status == 429 else "server_error") if retriable else "client_error"
                if probing:
                    raise LLMError(
                        kind,
                        f"HTTP {status}: {exc.message}"[:300],
                        purpose=purpose,
                        attempts=attempt,
                        status=status,
                    ) from exc
                if not retriable:
                    # 401/403/404 are configuration errors: no later call can succeed.
                    raise self._fail(
                        "client_error",
                        f"HTTP {status}: {exc.message}"[:300],
                        purpose,
                        attempt,
                        trip=status in (401, 403, 404),
                        hard=True,
                        status=status,
                    ) from exc
                wait = retry_after_seconds(exc.response.headers)
                if wait is None:
                    wait = LLM_RETRY_BACKOFF_S * 2 ** (attempt - 1)
                if attempt <= retries and wait <= LLM_RETRY_MAX_WAIT_S:
                    self._sleep(wait)
                    continue
                raise self._fail(
                    kind,
                    f"HTTP {status} after {attempt} attempt(s)",
                    purpose,
                    attempt,
                    trip=True,
                    status=status,
                ) from exc
            except (openai.OpenAIError, httpx.HTTPError, ValueError) as exc:  # malformed body, broken stream
                self._count(purpose, started)
                raise self._fail(
                    "server_error", f"{type(exc).__name__}: {exc}"[:300], purpose, attempt, trip=not probing
                ) from exc

    def _streamed(
        self,
        kwargs: dict,
        purpose: str,
        messages: list[dict],
        started: float,
        timeout: float,
        attempt: int,
        stream: bool | None = None,
    ) -> Completion:
        """One streamed call: the reply is read as it is generated and the connection closed the
        moment the call is given up (the timeout or the run's budget), so the server stops
        generating rather than working on for a caller that left (llama.cpp, vLLM). A server
        that ignores ``stream`` and answers one JSON body is read as such."""
        deadline = time.monotonic() + timeout
        if not (
            self.config.stream if stream is None else stream
        ):  # one JSON body; a call given up leaves the server generating
            try:
                response = self.endpoint.openai.chat.completions.create(timeout=timeout, **kwargs)
            except openai.APITimeoutError:
                raise _Abandoned(kwargs["max_tokens"]) from None
            return self._reply(response.model_dump(), purpose, started, attempt, messages)
        try:
            stream = self.endpoint.openai.chat.completions.create(
                timeout=timeout, stream=True, stream_options={"include_usage": True}, **kwargs
            )
        except openai.APITimeoutError:
            raise _Abandoned(kwargs["max_tokens"]) from None
        parts: list[str] = []
        finish, usage, logprobs = "", None, None
        with stream:
            content_type = stream.response.headers.get("content-type", "")
            if "json" in content_type:
                return self._reply(json.loads(stream.response.read()), purpose, started, attempt, messages)
            try:
                for chunk in stream:
                    if time.monotonic() > deadline:
                        raise _Abandoned(len("".join(parts)) // 4 + 1)
                    usage = getattr(chunk, "usage", None) or usage
                    for choice in getattr(chunk, "choices", None) or []:
                        delta = getattr(choice, "delta", None)
                        if delta is not None and getattr(delta, "content", None):
                            parts.append(delta.content)
                        if logprobs is None and getattr(choice, "logprobs", None) is not None:
                            logprobs = choice.logprobs  # the first token's candidates
                        finish = getattr(choice, "finish_reason", None) or finish
            except httpx.TimeoutException:
                raise _Abandoned(kwargs["max_tokens"]) from None
        text = "".join(parts)
        return self._reply(
            {
                "choices": [
                    {
                        "message": {"content": text},
                        "finish_reason": finish,
                        "logprobs": logprobs.model_dump() if hasattr(logprobs, "model_dump") else logprobs,
                    }
                ],
                "usage": _usage_dict(usage),
            },
            purpose,
            started,
            attempt,
            messages,
        )

    def _count(
        self, purpose: str, started: float, prompt_tokens: int = 0, completion_tokens: int = 0
    ) -> None:
        self.accounting.add_call(
            purpose=purpose,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def _reply(
        self, body: dict, purpose: str, started: float, attempt: int, messages: list[dict]
    ) -> Completion:
        if not isinstance(body, dict):
            raise ValueError("the reply is not a chat completion")
        choices = body.get("choices") or []
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        text = str((first.get("message") or {}).get("content") or "")
        finish = str(first.get("finish_reason") or "")
        usage = body.get("usage") or {}
        if usage.get("prompt_tokens") is not None:
            prompt_tokens, completion_tokens = (
                int(usage["prompt_tokens"] or 0),
                int(usage.get("completion_tokens") or 0),
            )
        else:
            # No usage reported (some servers): estimate at 4 characters a token so the budget still holds.
            prompt_tokens = len(prompt_text(messages)) // 4
            completion_tokens = len(text) // 4
        self._count(purpose, started, prompt_tokens, completion_tokens)
        if not text.strip():
            raise self._fail("empty", "the server returned an empty reply", purpose, attempt, trip=True)
        return Completion(text, finish, first_token_logprobs(first.get("logprobs")))

    def structured_form(self) -> str:
        """The structured-output form this run's JSON calls use (probing the endpoint the first time)."""
        if self.config.structured != "auto":
            form = self.config.structured
        else:
            form = self.endpoint.structured_form(
                lambda extra: self.complete(
                    purpose="probe",
                    messages=[{"role": "user", "content": PROBE_PROMPT}],
                    task="probe",
                    extra=extra,
                    probing=True,
                )
            )
        self.accounting.structured = form
        return form

    def complete_json(
        self,
        *,
        purpose: str,
        messages: list[dict],
        task: str = "",
        schema: dict | None = None,
        items: int = 1,
        **kwargs,
    ) -> Any:
        """Return the reply parsed as JSON and valid against the task's schema.

        ``task`` names the schema in :data:`audit.pipeline.llm.schemas.TASKS` (default: the
        purpose); the server is asked for it in the structured-output form it honours. An
        unparseable or invalid reply (or an empty one) gets exactly one repair attempt: the reply
        and the error are sent back with the schema; a reply cut off at the token cap gets none (the
        same cap would cut it again). A second failure raises LLMError.
        """
        task = task or purpose.split(":")[0]
        if schema is None:
            schema = TASKS[task]
        form = self.structured_form() if task in TASKS else PROMPT
        extra = format_kwargs(form, task, items) if task in TASKS else {}
        if extra:
            messages = for_structured_output(messages, wire_schema(task, items))
        kwargs = {"task": task, "items": items, "extra": extra, "checked_later": True, **kwargs}
        reply, completion = "", Completion("")
        try:
            completion = self.complete_reply(purpose=purpose, messages=messages, **kwargs)
            reply = completion.text
            return self._validated(reply, schema, purpose, task, messages, completion.truncated)
        except LLMError as first:
            if first.kind not in ("empty", "invalid_json", "schema") or completion.truncated:
                raise  # a reply cut off at the cap would be cut off again: no repair call
            shape = wire_schema(task, items) if task in TASKS else schema
            repair = messages + [
                {"role": "assistant", "content": reply or "(empty reply)"},
                {
                    "role": "user",
                    "content": (
                        f"That reply was not valid ({first.message}). Reply again with ONLY the JSON value, "
                        f"no prose and no code fence, valid against this JSON schema:\n{json.dumps(shape)}"
                    ),
                },
            ]
            completion = self.complete_reply(purpose=f"{purpose}:repair", messages=repair, **kwargs)
            return self._validated(
                completion.text, schema, f"{purpose}:repair", task, messages, completion.truncated
            )

    def _validated(
        self, reply: str, schema: dict, purpose: str, task: str, messages: list[dict], truncated: bool = False
    ) -> Any:
        """Parse and check a reply; a bad one is recorded as a failed call and raised."""
        try:
            value = parse_json_reply(reply, schema, prompt_text(messages))
        except (ValueError, jsonschema.ValidationError) as exc:
            message = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
            if truncated:  # the reply's own value was cut off: say so, not what a fragment of it broke
                error = LLMError(
                    "invalid_json",
                    "the reply was cut off at the token cap",
                    purpose=purpose,
                    attempts=1,
                    truncated=True,
                )
            else:
                kind = "schema" if isinstance(exc, jsonschema.ValidationError) else "invalid_json"
                error = LLMError(kind, message[:200], purpose=purpose, attempts=1)
        else:
            self.accounting.add_json_result(task, True)
            self.endpoint.breaker.success()
            return value
        self.accounting.add_json_result(task, False)
        self.accounting.add_failure(error)
        # an unusable reply is the task's failure (repaired once, then the task falls back); the
        # breaker counts it only in its failure rate: a server answering nothing but garbage is cut off
        self.endpoint.breaker.failure(error)
        raise error
