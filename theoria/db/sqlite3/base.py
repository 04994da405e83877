"""Django's SQLite back end with a fair queue for the one write lock.

SQLite lets one writer in at a time. A transaction that finds the lock taken waits in SQLite's busy
handler, which sleeps 1, 2, 5 … then 100 ms between tries: a waiter that has waited a while looks
only ten times a second, and writers arriving meanwhile take the lock first. With the web workers,
the task cluster and the cache on one file, a cheap request (a 202 for a queued audit, a 429) waited
1.5-6 s for the lock this way while normal audits kept writing (`tools.attack_load`).

Here every transaction (``BEGIN IMMEDIATE``, ``atomic()``) first takes an exclusive ``flock`` on a
file beside the database (``<name>-writer.lock``), trying every ``WRITER_POLL_S``, and gives it back
at its commit, rollback or close. Waiters then get the lock within a millisecond or two of its release
(and the kernel drops it with a process that dies). A waiter that has not got it within the
connection's busy timeout goes on to SQLite's own wait, which has its own busy timeout: a writer
held up by another that never finishes fails after twice the timeout, not once. Writes outside a
transaction (autocommit) do not take the file lock and keep SQLite's own wait, as do in-memory
databases, which have no file to lock. The lock file needs the database's folder to be writable
and on a local file system (``flock``).
"""

from __future__ import annotations

import fcntl
import time
from typing import IO

from django.db.backends.sqlite3 import base

WRITER_POLL_S = 0.001  # how often a waiting transaction tries the writer lock


class DatabaseWrapper(base.DatabaseWrapper):
    _writer: IO[bytes] | None = None

    def _writer_path(self) -> str | None:
        name = str(self.settings_dict["NAME"])
        return None if self.is_in_memory_db() else f"{name}-writer.lock"

    def _writer_take(self) -> None:
        path = self._writer_path()
        if path is None or self._writer is not None:
            return
        handle = open(path, "ab")  # noqa: SIM115 — held until the transaction ends
        deadline = time.monotonic() + float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._writer = handle
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    handle.close()  # SQLite's own busy timeout takes over from here
                    return
                time.sleep(WRITER_POLL_S)

    def _writer_give_back(self) -> None:
        handle, self._writer = self._writer, None
        if handle is not None:
            handle.close()  # closing the file gives the flock back

    def _start_transaction_under_autocommit(self):
        self._writer_take()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._writer_give_back()
            raise

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._writer_give_back()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._writer_give_back()

    def _close(self):
        try:
            return super()._close()
        finally:
            self._writer_give_back()


__all__ = ["WRITER_POLL_S", "DatabaseWrapper"]
