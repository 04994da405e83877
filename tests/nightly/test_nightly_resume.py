"""A real ``nightly_audit`` process killed with SIGKILL halfway, then restarted: each claim once.

Runs the command as separate processes against a scratch database of the same engine as the
suite (a SQLite file, or a throwaway PostgreSQL database when DATABASE_URL is PostgreSQL),
because the suite's own test database lives inside this process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DAY = "2026-11-20"
# Small on purpose (the test runs twice in CI, SQLite and PostgreSQL): 60 claims in batches of 5
# on a 20-chunk knowledge base at the fast depth, killed as soon as 2 batches have committed.
CLAIMS = 60
BATCH = 5
KILL_AFTER_BATCHES = 2
CHUNKS = 20
DEPTH = "fast"


class ScratchDB:
    """A database outside the test runner's, reachable by subprocesses and by plain SQL here."""

    def __init__(self, tmp_path: Path):
        base = os.environ.get("DATABASE_URL", "")
        self.postgres = base.startswith(("postgres://", "postgresql://"))
        if self.postgres:
            server = base.rsplit("/", 1)[0]
            self.name = f"theoria_nightly_kill_{uuid.uuid4().hex[:8]}"
            self.admin_url = f"{server}/postgres"
            self.url = f"{server}/{self.name}"
            self._admin(f'CREATE DATABASE "{self.name}"')
        else:
            self.path = tmp_path / "scratch.sqlite3"
            self.url = f"sqlite:///{self.path}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def query(self, sql: str) -> list[tuple]:
        if self.postgres:
            import psycopg

            with psycopg.connect(self.url) as conn:
                return list(conn.execute(sql).fetchall())
        import sqlite3

        conn = sqlite3.connect(self.path, timeout=20)
        try:
            return list(conn.execute(sql).fetchall())
        finally:
            conn.close()

    def drop(self) -> None:
        if self.postgres:
            self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


@pytest.fixture
def scratch(tmp_path):
    db = ScratchDB(tmp_path)
    yield db
    db.drop()


def _env(db: ScratchDB) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": db.url,
        "DJANGO_SETTINGS_MODULE": "theoria.settings.test",
        "PYTHONUNBUFFERED": "1",
        "THEORIA_LOG_LEVEL": "WARNING",
    }


def _manage(db: ScratchDB, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(db),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _items(db: ScratchDB) -> dict[int, tuple]:
    rows = db.query("SELECT claim_id, processed, processed_at, attempt, new_label FROM audit_nightlyitem")
    return {r[0]: tuple(r[1:]) for r in rows}


def _processed(db: ScratchDB) -> int:
    try:
        return db.query("SELECT COUNT(*) FROM audit_nightlyitem WHERE processed")[0][0]
    except Exception:  # the run has not created its tables' rows yet (or SQLite is busy)
        return 0


def test_a_run_killed_halfway_and_restarted_processes_every_claim_exactly_once(scratch):
    # One process migrates, seeds and starts the run (each start of Django with the embedding model
    # costs seconds); it is killed as soon as KILL_AFTER_BATCHES batches have committed.
    run = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "import datetime as dt; from django.core.management import call_command; "
            "from audit.evaluation.nightly_bench import bench_seed; call_command('migrate', '--noinput', verbosity=0); "
            f"bench_seed(claims={CLAIMS}, chunks={CHUNKS}, day=dt.date.fromisoformat('{DAY}')); "
            f"call_command('nightly_audit', workspace='nightly-bench', date='{DAY}', batch_size={BATCH}, "
            f"depth='{DEPTH}', verbosity=0)",
        ],
        cwd=ROOT,
        env=_env(scratch),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 300
    while _processed(scratch) < KILL_AFTER_BATCHES * BATCH:
        assert run.poll() is None, (
            f"the run ended before it could be killed: {run.stderr.read().decode()[-2000:]}"
        )
        assert time.monotonic() < deadline, "the run did not commit two batches in 300 s"
        time.sleep(0.01)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    run.stdout.close()
    run.stderr.close()
    assert run.returncode == -signal.SIGKILL

    before = _items(scratch)
    done_before = {cid: row for cid, row in before.items() if row[0]}
    assert len(before) == CLAIMS
    assert BATCH * KILL_AFTER_BATCHES <= len(done_before) < CLAIMS, "killed too late to test a resume"
    assert len(done_before) % BATCH == 0  # whole batches only: a batch commits all or nothing
    assert scratch.query("SELECT status, attempts FROM audit_nightlyreport") == [("running", 1)]

    resumed = _manage(
        scratch,
        "nightly_audit",
        "--workspace",
        "nightly-bench",
        "--date",
        DAY,
        "--batch-size",
        str(BATCH),
        "--depth",
        DEPTH,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{CLAIMS - len(done_before)} processed now ({CLAIMS} in total)" in resumed.stdout

    after = _items(scratch)
    assert len(after) == CLAIMS and all(row[0] for row in after.values())
    # what the killed run committed was not redone; the rest was done by the second attempt
    assert {cid: after[cid] for cid in done_before} == done_before
    assert {row[2] for cid, row in after.items() if cid not in done_before} == {2}
    status, attempts, processed, changed = scratch.query(
        "SELECT status, attempts, claims_processed, labels_changed FROM audit_nightlyreport"
    )[0]
    assert (status, attempts, processed) == ("done", 2, CLAIMS)
    # one drift event per changed claim, never two for the same claim
    drift = scratch.query(
        "SELECT object_id, COUNT(*) FROM audit_auditevent WHERE action = 'claim.label_drifted' "
        "GROUP BY object_id"
    )
    assert all(n == 1 for _, n in drift)
    changed_items = scratch.query("SELECT COUNT(*) FROM audit_nightlyitem WHERE changed")[0][0]
    assert len(drift) == changed == changed_items > 0

    again = _manage(scratch, "nightly_audit", "--workspace", "nightly-bench", "--date", DAY)
    assert again.returncode == 0 and "already done" in again.stdout
    assert _items(scratch) == after
