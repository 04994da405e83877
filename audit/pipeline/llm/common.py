"""Helpers every LLM method shares: why it cannot call the LLM, and its "did not run" result."""

from __future__ import annotations

from audit.pipeline.llm.client import LLMClient
from audit.pipeline.types import MethodResult

NO_LLM = "no LLM configured"


def not_run(method: str, reason: str) -> MethodResult:
    """The result of an LLM method that did not run; the offline methods decide alone."""
    return MethodResult(method=method, ran=False, details={"reason": reason})


def unavailable_reason(client: LLMClient | None) -> str | None:
    """Why no LLM call can be made now (none configured, circuit open, budget spent), or None."""
    if client is None:
        return NO_LLM
    return client.unavailable_reason()
