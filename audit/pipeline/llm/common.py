"""Helpers every LLM method shares: why it cannot call the LLM, its "did not run" result, batches
of claims (split when a reply is cut off) and concurrent calls bounded by the client's concurrency."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

from audit.constants import LLM_BATCH_CLAIMS
from audit.pipeline.llm.client import LLMClient, LLMError
from audit.pipeline.types import MethodResult

NO_LLM = "no LLM configured"
T = TypeVar("T")
R = TypeVar("R")


def not_run(method: str, reason: str) -> MethodResult:
    """The result of an LLM method that did not run; the offline methods decide alone."""
    return MethodResult(method=method, ran=False, details={"reason": reason})


def unavailable_reason(client: LLMClient | None) -> str | None:
    """Why no LLM call can be made now (none configured, breaker open, a budget spent), or None."""
    if client is None:
        return NO_LLM
    return client.unavailable_reason()


def failure_reason(exc: LLMError, what: str) -> str:
    """The "not run" reason of a failed call: ``budget: ...`` when a budget stopped it."""
    if exc.kind == "budget":
        return f"budget: {exc.message}"
    if exc.kind == "circuit_open":
        return exc.message
    return f"LLM failed ({exc.kind}) {what}"


def batches(items: list[T], size: int = LLM_BATCH_CLAIMS) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)] if items else []


def split_when_cut_off(ask: Callable[[list[T]], list[R]], batch: list[T]) -> list[R]:
    """``ask(batch)`` (one row per item, in order); a reply cut off at the token cap is not dropped:
    the batch is split in two and each half asked again, down to one item. Raises LLMError otherwise."""
    try:
        return ask(batch)
    except LLMError as exc:
        if not exc.truncated or len(batch) < 2:
            raise
    middle = len(batch) // 2
    return split_when_cut_off(ask, batch[:middle]) + split_when_cut_off(ask, batch[middle:])


def concurrently(client: LLMClient, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[fn(item) ...]`` with at most the client's concurrency in flight, in the items' order."""
    items = list(items)
    if len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=max(1, min(len(items), client.config.concurrency))) as pool:
        return list(pool.map(fn, items))
