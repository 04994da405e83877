"""The suite's guard for "no long work inside a database transaction".

On SQLite a transaction holds the write lock from its first statement, and on PostgreSQL it holds
its row locks and a connection: an embedding, an entailment judgement or an LLM call inside one
keeps every other writer waiting (docs/ARCHITECTURE.md, "Tenancy and hardening"). The rule is
"compute first, then write in one short transaction"; this module makes it checkable.

:func:`install` wraps the embedder's encode methods, every entailment judge's ``judge`` (judges
defined later included) and the LLM client's completion call. Each wrapper looks at the open
atomic blocks of every database connection of its thread and refuses to run inside one the code
opened: the test case's own blocks (pytest-django wraps a ``db`` test in a transaction, marked by
Django with ``_from_testcase``) do not count, so the guard sees only what the code under test did.
A refusal raises :class:`LongWorkInTransaction` and is also recorded, so a test whose code
catches every exception still fails (``tests/conftest.py`` checks :data:`violations` after each
test).
"""

from __future__ import annotations

import contextlib
import functools
import threading

from django.db import connections

violations: list[str] = []
_lock = threading.Lock()
_MARK = "__transaction_guarded__"


class LongWorkInTransaction(AssertionError):
    """Embedding, judging or an LLM call was started inside a database transaction."""


def open_transaction() -> str | None:
    """The alias of a connection of this thread inside an atomic block opened by the code under
    test (not by the test case), else None."""
    for connection in connections.all(initialized_only=True):
        if any(not block._from_testcase for block in connection.atomic_blocks):
            return connection.alias
    return None


def _guarded(what: str, function):
    if getattr(function, _MARK, False):
        return function

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        alias = open_transaction()
        if alias is not None:
            message = (
                f"{what} ran inside a database transaction (atomic() on the {alias!r} database): "
                "compute first, then write in one short transaction."
            )
            with _lock:
                violations.append(message)
            raise LongWorkInTransaction(message)
        return function(*args, **kwargs)

    setattr(wrapper, _MARK, True)
    return wrapper


def _guard_judge_class(cls) -> None:
    if "judge" in vars(cls):
        cls.judge = _guarded(f"the {cls.__name__} entailment judge", vars(cls)["judge"])


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def install() -> None:
    """Wrap the embedder, the judges and the LLM client (idempotent)."""
    from audit.pipeline.embedding import Embedder
    from audit.pipeline.judges import Judge
    from audit.pipeline.llm.client import LLMClient

    for name in ("encode", "encode_with_tokens"):
        setattr(Embedder, name, _guarded(f"Embedder.{name}", vars(Embedder)[name]))
    for cls in [Judge, *_subclasses(Judge)]:
        _guard_judge_class(cls)
    if not getattr(Judge.__init_subclass__, _MARK, False):
        previous = Judge.__init_subclass__

        def init_subclass(cls, **kwargs):  # judges imported later (a new judge module) are guarded too
            previous(**kwargs)
            _guard_judge_class(cls)

        setattr(init_subclass, _MARK, True)
        Judge.__init_subclass__ = classmethod(init_subclass)
    # the one method every completion goes through (complete, complete_json call it)
    LLMClient.complete_reply = _guarded("the LLM client", vars(LLMClient)["complete_reply"])


def take() -> list[str]:
    """The violations recorded since the last call, cleared."""
    with _lock:
        found = list(violations)
        violations.clear()
    return found


@contextlib.contextmanager
def expected():
    """For the guard's own tests: the violations recorded inside the block are expected ones;
    the list yielded holds them once the block is left."""
    before = take()
    seen: list[str] = []
    try:
        yield seen
    finally:
        seen.extend(take())
        with _lock:
            violations.extend(before)
