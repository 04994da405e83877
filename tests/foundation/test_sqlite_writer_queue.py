"""The embedded SQLite default queues its writers on a file lock beside the database
(``theoria/db/sqlite3/base.py``): a transaction holds it from ``BEGIN`` to its commit, rollback or
close, a second one waits for it, and an in-memory database has none."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest
from django.db import connections, transaction

ALIAS = "writer_queue_probe"


@pytest.fixture
def file_database(tmp_path, django_db_blocker):
    """A second alias on a fresh SQLite file, through the project's back end."""
    connections.settings[ALIAS] = {
        **connections.settings["default"],
        "ENGINE": "theoria.db.sqlite3",
        "NAME": str(tmp_path / "probe.sqlite3"),
        "OPTIONS": {"timeout": 5, "transaction_mode": "IMMEDIATE"},
        "TEST": {},
    }
    with django_db_blocker.unblock():
        with connections[ALIAS].cursor() as cursor:
            cursor.execute("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)")
        yield tmp_path / "probe.sqlite3-writer.lock"
        connections[ALIAS].close()
    del connections[ALIAS]
    del connections.settings[ALIAS]


def _held(lock: Path) -> bool:
    with lock.open("ab") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


def test_a_transaction_holds_the_writer_lock_until_it_commits(file_database):
    with transaction.atomic(using=ALIAS):
        connections[ALIAS].cursor().execute("INSERT INTO note (body) VALUES ('one')")
        assert _held(file_database)
    assert not _held(file_database)


def test_a_rolled_back_or_closed_transaction_gives_the_writer_lock_back(file_database):
    with pytest.raises(ZeroDivisionError), transaction.atomic(using=ALIAS):
        assert _held(file_database)
        _ = 1 / 0
    assert not _held(file_database)
    with transaction.atomic(using=ALIAS):
        assert _held(file_database)
        connections[ALIAS].close()
        assert not _held(file_database)
        connections[ALIAS].needs_rollback = True  # the closed connection ends the block without a commit


def test_a_second_writer_waits_for_the_first_and_then_writes(file_database):
    order: list[str] = []
    started = threading.Event()

    def second() -> None:
        started.wait()
        with transaction.atomic(using=ALIAS):
            connections[ALIAS].cursor().execute("INSERT INTO note (body) VALUES ('second')")
            order.append("second")
        connections[ALIAS].close()

    thread = threading.Thread(target=second)
    thread.start()
    with transaction.atomic(using=ALIAS):
        connections[ALIAS].cursor().execute("INSERT INTO note (body) VALUES ('first')")
        started.set()
        time.sleep(0.3)  # the second writer is waiting on the lock meanwhile
        order.append("first")
    thread.join(timeout=10)
    assert order == ["first", "second"]
    with connections[ALIAS].cursor() as cursor:
        cursor.execute("SELECT body FROM note ORDER BY id")
        assert [row[0] for row in cursor.fetchall()] == ["first", "second"]


@pytest.mark.django_db
def test_the_default_database_uses_the_writer_queue_and_memory_has_no_lock_file():
    default = connections["default"]
    if default.vendor != "sqlite":
        pytest.skip("the embedded default only")
    assert type(default).__module__ == "theoria.db.sqlite3.base"
    assert default.is_in_memory_db() and default._writer_path() is None
