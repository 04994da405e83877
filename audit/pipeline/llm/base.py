"""What the client and the endpoint share, with no import of either: the configuration, the error,
one reply, and reading a reply's JSON value (docs/LLM.md)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from audit.constants import LLM_CONCURRENCY, LLM_JUDGE_WEIGHT, LLM_OFFLINE_CONFIDENT_MARGIN


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to call the LLM. ``token_budget`` None means unlimited for this run."""

    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 20.0
    max_retries: int = 2
    concurrency: int = LLM_CONCURRENCY  # calls in flight to the endpoint, all runs together
    token_budget: int | None = None
    time_budget_s: float | None = None  # the run's LLM time, from the client's creation; None: unbounded
    stream: bool = True  # stream replies, so a call given up closes its connection and the server stops
    structured: str = "auto"  # "auto" (probe the endpoint once), a form of endpoint.FORMS, or "prompt"
    # how the LLM judge reads a claim: "batched" (claims in batches, four verdicts, one JSON reply) or
    # "minicheck" (one claim against one chunk of evidence, Yes/No, with logprobs: llm/minicheck.py)
    judge_prompt: str = "batched"
    # the LLM judge's weight and margin in force (llm.combine.weigh) and where they came from: a fit
    # of this endpoint and model for the workspace ("fit v3"), or "unfitted" (it moves no verdict)
    judge_weight: float = LLM_JUDGE_WEIGHT
    judge_margin: float = LLM_OFFLINE_CONFIDENT_MARGIN
    weight_source: str = "unfitted"


class LLMError(Exception):
    """A call that gave no usable answer. ``kind`` is one of KINDS."""

    KINDS = (
        "timeout",
        "connection",
        "rate_limited",
        "server_error",
        "client_error",
        "empty",
        "invalid_json",
        "schema",
        "budget",
        "circuit_open",
        "echo",
    )

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        purpose: str = "",
        attempts: int = 0,
        status: int | None = None,
        truncated: bool = False,
    ):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.purpose = purpose
        self.attempts = attempts
        self.status = status  # the HTTP status of an HTTP error
        self.truncated = truncated  # the reply was cut off at the token cap (a smaller batch may fit)

    @property
    def transient(self) -> bool:
        """A server in trouble (overloaded, restarting, unreachable), not one refusing the request."""
        return self.kind in ("timeout", "connection", "rate_limited") or self.status in (429, 502, 503, 504)


_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)
_PLACEHOLDER_RE = re.compile(r"[\s.\u2026_|?-]*|<[^<>]*>")
_SPACE_RE = re.compile(r"\s+")


def json_candidates(text: str) -> list[tuple[Any, str]]:
    """Every top-level JSON object or array in ``text`` (fenced blocks first), with its source text."""
    text = (text or "").strip()
    sources = [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]
    # control characters inside strings are allowed: grammar engines (llama.cpp) let a model write a
    # raw line break in a string, and the value is still the reply's own JSON
    decoder = json.JSONDecoder(strict=False)
    found: list[tuple[Any, str]] = []
    for source in sources:
        i = 0
        while True:
            starts = [j for j in (source.find("{", i), source.find("[", i)) if j >= 0]
            if not starts:
                break
            j = min(starts)
            try:
                value, end = decoder.raw_decode(source, j)
            except ValueError:
                i = j + 1
                continue
            found.append((value, source[j:end]))
            i = end
    return found


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _squash(text: str) -> str:
    return _SPACE_RE.sub("", text or "")


def parse_json_reply(text: str, schema: dict[str, Any] | None = None, prompt: str = "") -> Any:
    """The reply's JSON value: the first object or array in it that is neither echoed from the
    prompt nor template filler and (with ``schema``) valid against it.

    A citation like ``[1]`` in prose, the example ``{"questions": ["...", "..."]}`` copied from
    the prompt, or a value whose strings are placeholders (``...``, ``<one or two sentences>``)
    is never taken for the answer. Raises ValueError (no JSON value at all) or
    jsonschema.ValidationError (JSON, but none valid).
    """
    candidates = json_candidates(text)
    if not candidates:
        raise ValueError("no JSON value in the reply")
    echoed = _squash(prompt)
    first_error: jsonschema.ValidationError | None = None
    for value, source in candidates:
        if echoed and len(source) > 4 and _squash(source) in echoed:
            continue
        if any(_PLACEHOLDER_RE.fullmatch(s.strip()) for s in _strings(value)):
            first_error = first_error or jsonschema.ValidationError("the reply holds template placeholders")
            continue
        if schema is None:
            return value
        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError as exc:
            first_error = first_error or exc
            continue
        return value
    raise first_error or jsonschema.ValidationError("the reply only repeats the prompt")


@dataclass
class Completion:
    """One reply: its text and why the server stopped (``length``: cut off at ``max_tokens``)."""

    text: str
    finish_reason: str = ""
    # the first generated token's candidates and their log-probabilities, where the server gave them
    # (a request with ``logprobs``): {"Yes": -0.05, "No": -3.1}
    first_token_logprobs: dict[str, float] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


def first_token_logprobs(logprobs: Any) -> dict[str, float]:
    """{candidate token: log-probability} of the first generated token from an OpenAI ``logprobs``
    block (a dict or the ``openai`` package's object); {} when the server gave none."""
    if logprobs is None:
        return {}
    if hasattr(logprobs, "model_dump"):
        logprobs = logprobs.model_dump()
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    if not content or not isinstance(content[0], dict):
        return {}
    first = content[0]
    out: dict[str, float] = {}
    for cand in first.get("top_logprobs") or [first]:
        try:
            token, lp = str(cand["token"]), float(cand["logprob"])
        except (KeyError, TypeError, ValueError):
            continue
        out[token] = max(lp, out.get(token, -math.inf))
    return out
