"""A task worker writes at the web's priority (docs/ARCHITECTURE.md, "The form, the queue's workers
and the admission").

Each task-cluster worker computes below the web workers' priority (``Q_WORKER_NICE``, set on its main
thread as django-q2 starts it). On SQLite a transaction holds the one write lock of the file; a niced
worker holding it while the scheduler runs the web's work first kept the web's own writes waiting
(a queued 200-claim audit's write, 0.25 s of CPU, held for seconds on two busy cores). So a worker
starts one writer thread before it lowers its priority: the thread keeps the web's priority, and a
function marked ``@at_web_priority`` called on the worker's main thread runs on it, the caller
waiting for its result or its exception. Anywhere else (web workers, commands, tests, a call already
inside a transaction, whose rows must stay in it) the function runs where it is called.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from django.db import close_old_connections, connection

P = ParamSpec("P")
R = TypeVar("R")


class _Writer:
    """One thread that runs the calls handed to it, one at a time, in the order they came."""

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]] = (
            queue.SimpleQueue()
        )
        self.thread = threading.Thread(target=self._serve, name="theoria-writer", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            call, box, done = self.calls.get()
            close_old_connections()
            try:
                box.append((True, call()))
            except BaseException as exc:  # handed back to the caller, raised there
                box.append((False, exc))
            finally:
                close_old_connections()
                done.set()

    def run(self, call: Callable[[], R]) -> R:
        box: list[tuple[bool, Any]] = []
        done = threading.Event()
        self.calls.put((call, box, done))
        done.wait()
        ok, value = box[0]
        if ok:
            return value  # type: ignore[no-any-return]
        raise value


_writer: _Writer | None = None


def writer_start() -> None:
    """Start this process's writer thread at the calling thread's priority (a task worker's
    ``post_spawn``, before it lowers its own priority); once per process."""
    global _writer
    if _writer is None:
        _writer = _Writer()


def writer_thread() -> threading.Thread | None:
    """The writer thread, where this process started one."""
    return _writer.thread if _writer is not None else None


def at_web_priority(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` on the writer thread when this process has one and the caller is not on
    it nor inside a transaction; else where it is called."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        writer = _writer
        if writer is None or threading.current_thread() is writer.thread or connection.in_atomic_block:
            return function(*args, **kwargs)
        return writer.run(functools.partial(function, *args, **kwargs))

    return wrapper
