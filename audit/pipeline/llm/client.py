"""One client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server).

Plain Python, no Django: ``audit.services.llm`` builds an :class:`LLMConfig` from the settings
and the workspace, and the pipeline receives a ready :class:`LLMClient` (or None: offline).

What the client guarantees to the methods that use it:

* every call either returns non-empty text or raises :class:`LLMError` (never anything else);
* 429 and 5xx are retried ``max_retries`` times with exponential back-off, honouring
  ``Retry-After`` / ``retry-after-ms`` up to ``LLM_RETRY_MAX_WAIT_S`` (longer: give up now);
* a call never waits longer than ``timeout_s`` for the server; a timeout, a refused connection,
  an auth error or exhausted retries *open the circuit*: later calls of the same run fail at
  once, so a dead or slow server costs one timeout per run, not one per claim;
* at most ``concurrency`` calls are in flight (a semaphore shared by the run's threads);
* every call, failed or not, is counted in :class:`LLMAccounting` (calls, tokens, latency,
  failures, warnings), which the run stores on ``VerificationRun``;
* past ``token_budget`` tokens the client refuses further calls (offline from then on) and
  records one warning.
"""

from __future__ import annotations

import email.utils
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import jsonschema
import openai

from audit.constants import LLM_MAX_TOKENS, LLM_RETRY_BACKOFF_S, LLM_RETRY_MAX_WAIT_S, LLM_SEED, LLM_TEMPERATURE

PLACEHOLDER_API_KEY = "not-needed"  # local servers ignore the key; the openai package wants one


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the LLM. ``token_budget`` None means unlimited for this run."""

    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 20.0
    max_retries: int = 2
    concurrency: int = 4
    token_budget: int | None = None


class LLMError(Exception):
    """A call that gave no usable answer. ``kind`` is one of KINDS."""

    KINDS = ("timeout", "connection", "rate_limited", "server_error", "client_error", "empty",
             "invalid_json", "schema", "budget", "circuit_open")

    def __init__(self, kind: str, message: str, *, purpose: str = "", attempts: int = 0):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.purpose = purpose
        self.attempts = attempts


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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add_call(self, *, purpose: str, prompt_tokens: int, completion_tokens: int, latency_ms: float) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.latency_ms += latency_ms
            self.calls_by_purpose[purpose] = self.calls_by_purpose.get(purpose, 0) + 1

    def add_failure(self, error: LLMError) -> None:
        with self._lock:
            self.failures.append({
                "purpose": error.purpose, "kind": error.kind, "message": error.message[:300],
                "attempts": error.attempts, "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            })

    def add_warning(self, code: str, message: str) -> None:
        with self._lock:
            if not any(w["code"] == code for w in self.warnings):
                self.warnings.append({"code": code, "message": message})

    def run_fields(self) -> dict:
        """The ``VerificationRun`` field values for this accounting."""
        return {"llm_calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "llm_latency_ms": round(self.latency_ms, 1),
                "llm_failures": list(self.failures)}


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


_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """Parse the JSON value in a reply, tolerating a code fence and chatter around it."""
    text = (text or "").strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except ValueError:
        pass
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if not starts:
        raise ValueError("no JSON value in the reply")
    return json.JSONDecoder().raw_decode(text[min(starts):])[0]


class LLMClient:
    """Chat completions through the ``openai`` package with the guarantees of the module doc."""

    def __init__(self, config: LLMConfig, *, accounting: LLMAccounting | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.accounting = accounting or LLMAccounting()
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(max(1, config.concurrency))
        self._circuit: LLMError | None = None
        self._openai = openai.OpenAI(
            base_url=config.base_url, api_key=config.api_key or PLACEHOLDER_API_KEY,
            timeout=config.timeout_s, max_retries=0,  # retries are ours: counted and bounded
        )

    @property
    def available(self) -> bool:
        """False once the circuit is open or the budget is spent: callers go offline at once."""
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> str | None:
        """Why no call will be made now (circuit open, budget spent), or None; notes the budget warning."""
        if self._circuit is not None:
            return f"LLM unavailable after an earlier failure ({self._circuit.kind})"
        if self._budget_spent():
            self._warn_budget()
            return "LLM token budget exceeded"
        return None

    def _warn_budget(self) -> None:
        self.accounting.add_warning(
            "llm_budget_exceeded",
            f"LLM token budget of {self.config.token_budget} reached: offline methods used from here on.")

    def _budget_spent(self) -> bool:
        budget = self.config.token_budget
        return budget is not None and self.accounting.total_tokens >= budget

    def _fail(self, kind: str, message: str, purpose: str, attempts: int, *, trip: bool = False) -> LLMError:
        error = LLMError(kind, message, purpose=purpose, attempts=attempts)
        self.accounting.add_failure(error)
        if trip and self._circuit is None:
            self._circuit = error
        return error

    def complete(self, *, purpose: str, messages: list[dict], temperature: float = LLM_TEMPERATURE,
                 max_tokens: int = LLM_MAX_TOKENS, seed: int | None = LLM_SEED) -> str:
        """Return the reply text of one chat completion, or raise LLMError (recorded)."""
        if self._circuit is not None:
            raise self._fail("circuit_open", f"skipped after an earlier {self._circuit.kind}", purpose, 0)
        if self._budget_spent():
            self._warn_budget()
            raise self._fail("budget", "token budget exceeded", purpose, 0)
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                  "temperature": temperature, "max_tokens": max_tokens}
        if seed is not None:
            kwargs["seed"] = seed
        attempt = 0
        with self._slots:
            while True:
                attempt += 1
                started = time.perf_counter()
                try:
                    response = self._openai.chat.completions.create(**kwargs)
                except openai.APITimeoutError:
                    self._count(purpose, started)
                    raise self._fail("timeout", f"no reply within {self.config.timeout_s:g} s", purpose, attempt, trip=True)
                except openai.APIConnectionError as exc:
                    self._count(purpose, started)
                    if attempt <= self.config.max_retries:
                        self._sleep(LLM_RETRY_BACKOFF_S * 2 ** (attempt - 1))
                        continue
                    raise self._fail("connection", str(exc), purpose, attempt, trip=True)
                except openai.APIStatusError as exc:
                    self._count(purpose, started)
                    status = exc.status_code
                    retriable = status == 429 or status >= 500
                    if not retriable:
                        # 401/403/404 are configuration errors: no later call can succeed.
                        raise self._fail("client_error", f"HTTP {status}: {exc.message}"[:300], purpose, attempt,
                                         trip=status in (401, 403, 404))
                    kind = "rate_limited" if status == 429 else "server_error"
                    wait = retry_after_seconds(exc.response.headers)
                    if wait is None:
                        wait = LLM_RETRY_BACKOFF_S * 2 ** (attempt - 1)
                    if attempt <= self.config.max_retries and wait <= LLM_RETRY_MAX_WAIT_S:
                        self._sleep(wait)
                        continue
                    raise self._fail(kind, f"HTTP {status} after {attempt} attempt(s)", purpose, attempt, trip=True)
                except openai.OpenAIError as exc:  # malformed body, unexpected payload
                    self._count(purpose, started)
                    raise self._fail("server_error", f"{type(exc).__name__}: {exc}"[:300], purpose, attempt)
                return self._reply_text(response, purpose, started, attempt, messages)

    def _count(self, purpose: str, started: float, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        self.accounting.add_call(purpose=purpose, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                 latency_ms=(time.perf_counter() - started) * 1000)

    def _reply_text(self, response, purpose: str, started: float, attempt: int, messages: list[dict]) -> str:
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content or "") if choices and choices[0].message else ""
        usage = getattr(response, "usage", None)
        if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
            prompt_tokens, completion_tokens = int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)
        else:
            # No usage reported (some servers): estimate at 4 characters a token so the budget still holds.
            prompt_tokens = sum(len(str(m.get("content", ""))) for m in messages) // 4
            completion_tokens = len(text) // 4
        self._count(purpose, started, prompt_tokens, completion_tokens)
        if not text.strip():
            raise self._fail("empty", "the server returned an empty reply", purpose, attempt)
        return text

    def complete_json(self, *, purpose: str, messages: list[dict], schema: dict, **kwargs) -> Any:
        """Return the reply parsed as JSON and valid against ``schema``.

        An unparseable or invalid reply (or an empty one) gets exactly one repair attempt: the
        reply and the error are sent back with the schema. A second failure raises LLMError.
        """
        reply = ""
        try:
            reply = self.complete(purpose=purpose, messages=messages, **kwargs)
            return self._validated(reply, schema, purpose)
        except LLMError as first:
            if first.kind not in ("empty", "invalid_json", "schema"):
                raise
            repair = messages + [
                {"role": "assistant", "content": reply or "(empty reply)"},
                {"role": "user", "content": (
                    f"That reply was not valid ({first.message}). Reply again with ONLY the JSON value, "
                    f"no prose and no code fence, valid against this JSON schema:\n{json.dumps(schema)}")},
            ]
            reply = self.complete(purpose=f"{purpose}:repair", messages=repair, **kwargs)
            return self._validated(reply, schema, f"{purpose}:repair")

    def _validated(self, reply: str, schema: dict, purpose: str) -> Any:
        """Parse and check a reply; a bad one is recorded as a failed call and raised."""
        try:
            value = parse_json_reply(reply)
        except ValueError as exc:
            error = LLMError("invalid_json", str(exc)[:200], purpose=purpose, attempts=1)
            self.accounting.add_failure(error)
            raise error
        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError as exc:
            error = LLMError("schema", exc.message[:200], purpose=purpose, attempts=1)
            self.accounting.add_failure(error)
            raise error
        return value
