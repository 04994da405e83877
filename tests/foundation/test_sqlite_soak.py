"""The embedded default (one SQLite file for the web server, the task cluster's ORM broker and the cache
table) stays intact under bursts of cases and notifications (issue 46: corruption seen once, on
SQLite 3.40.1 in WAL mode, which has SQLite's WAL-reset bug)."""

from __future__ import annotations

import sqlite3

import pytest

from theoria.settings.base import sqlite_wal_is_safe
from tools.soak import soak


@pytest.mark.parametrize(
    ("version", "safe"),
    [
        ((3, 40, 1), False),
        ((3, 46, 1), False),
        ((3, 51, 2), False),
        ((3, 51, 3), True),
        ((3, 52, 0), True),
        ((3, 50, 7), True),
        ((3, 50, 6), False),
        ((3, 44, 6), True),
        ((3, 45, 0), False),
    ],
)
def test_wal_is_used_only_with_an_sqlite_that_has_the_wal_reset_fix(version, safe):
    assert sqlite_wal_is_safe(version) is safe


@pytest.mark.django_db
def test_the_sqlite_default_runs_the_journal_its_library_makes_safe_with_a_busy_timeout(settings):
    from django.db import connection

    if connection.vendor != "sqlite":
        pytest.skip("the embedded default only")
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (busy_ms,) = cursor.fetchone()
    assert busy_ms == 20_000
    mode = settings.DATABASES["default"]["OPTIONS"]["init_command"]
    assert ("journal_mode=WAL" in mode) is sqlite_wal_is_safe(sqlite3.sqlite_version_info)


@pytest.mark.slow
def test_a_soak_of_the_web_server_the_cluster_and_bursts_of_cases_leaves_the_file_intact(tmp_path):
    result = soak(30, writers=2, burst=100, folder=tmp_path)

    assert result["bursts"] >= 2 and result["cases"] >= 200 and result["notifications"] >= 200
    assert result["tasks_done"] > 0, "the cluster delivered nothing"
    assert result["requests"].get("2xx", 0) > 0 and "5xx" not in result["requests"], result
    assert result["writer_errors"] == [] and result["integrity_check"] == ["ok"], result
