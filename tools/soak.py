"""A soak of the embedded default: one SQLite file shared by a web server, the task cluster (django-q2's
ORM broker) and writers that open bursts of cases with their notifications, then ``PRAGMA
integrity_check``.

    python -m tools.soak --seconds 1800        # the 30-minute soak
    python -m tools.soak --seconds 60 --json   # what tests/foundation/test_sqlite_soak.py runs

The web server is gunicorn without the models (``theoria.wsgi`` with plain settings: the soak is about
the database, and every API request goes through the throttles' counts in the cache table). Each
writer process loops: an answer with ``--burst`` REFUTED claims, ``cases_open_for_answer`` (a case and
its notifications per claim, the cluster delivering them), a note on some of the cases, and a sweep of
cache keys. It prints one JSON line: requests by status class, bursts, cases, notifications, the
journal mode and the integrity check's answer; it exits 1 unless there was no 5xx, no writer error
and the check answered ``ok``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.served import free_port, loopback_production_env  # noqa: E402

SETUP = """
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from audit import roles
from audit.models import UserProfile
from audit.services.workspaces import workspace_get_default
ws = workspace_get_default()
user = User.objects.create_user("lead", password="x")
user.groups.add(Group.objects.get(name=roles.L3_LEAD))
UserProfile.objects.create(user=user, workspace=ws)
print("token", Token.objects.create(user=user).key)
"""


def _env(folder: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("THEORIA_", "DJANGO_", "DATABASE_URL"))}
    return {
        **clean,
        **loopback_production_env(folder),
        "THEORIA_THROTTLE_AUDITS": "",
        "THEORIA_SLACK_WEBHOOK_URL": "",
        "THEORIA_ONCALL_EMAIL": "oncall@example.org",  # every case notifies: the cluster delivers
        "THEORIA_EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
        "THEORIA_LLM_BASE_URL": "",
        "OPENBLAS_NUM_THREADS": "1",
    }


def writer(seconds: float, burst: int) -> None:
    """One writer process (``--writer``): bursts of cases and notifications until ``seconds`` pass."""
    import django

    django.setup()
    from django.core.cache import cache

    from audit import constants
    from audit.constants import MODE_AUDIT_LOCAL
    from audit.models import Answer, Claim, Workspace
    from escalation import services
    from escalation.models import ReviewCase

    # a case per claim, as in the bursts the corruption was seen under: grouping a burst into one
    # case per answer (CASES_GROUPED_FROM) would leave the writes this soak is for unmade
    constants.CASES_GROUPED_FROM = burst + 1

    workspace = Workspace.objects.order_by("id").first()
    deadline, bursts, cases, n = time.monotonic() + seconds, 0, 0, 0
    while time.monotonic() < deadline:
        answer = Answer.objects.create(
            workspace=workspace, query="Soak?", text="A soak answer.", original_text="", mode=MODE_AUDIT_LOCAL
        )
        Claim.objects.bulk_create(
            Claim(
                answer=answer,
                claim_id=f"c{i + 1}",
                text=f"Soak claim {i} of burst {bursts} from {os.getpid()}.",
                label="REFUTED",
                machine_label="REFUTED",
                confidence=0.1,
                span_start=i,
                span_end=i + 1,
            )
            for i in range(burst)
        )
        opened = services.cases_open_for_answer(answer=answer)
        cases += len(opened)
        for case in opened[:: max(1, burst // 10)]:
            services.case_note(case=case, actor=None, note="soak note")
        for _ in range(200):  # the throttles' and lockout's traffic on the cache table, culls included
            n += 1
            cache.set(f"soak:{os.getpid()}:{n % 12_000}", n, timeout=60)
            cache.get(f"soak:{os.getpid()}:{(n * 7) % 12_000}")
        bursts += 1
    print(json.dumps({"bursts": bursts, "cases": cases, "open": ReviewCase.objects.count()}))


def _get(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Token {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0  # no answer: counted apart


def soak(seconds: float, *, writers: int = 2, burst: int = 200, folder: Path | None = None) -> dict:
    folder = folder or Path(tempfile.mkdtemp(prefix="theoria-soak-"))
    env = _env(folder)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, cwd=ROOT, check=True)
    out = subprocess.run(
        [*manage, "shell", "-v0", "-c", SETUP], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    )
    token = re.search(r"^token (\w+)$", out.stdout, re.M).group(1)  # type: ignore[union-attr]
    port = free_port()
    logs = (folder / "server.log").open("w")
    started = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "theoria.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
            ],
            env=env,
            cwd=ROOT,
            stdout=logs,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),
        subprocess.Popen(
            [*manage, "qcluster"],
            env=env,
            cwd=ROOT,
            stdout=logs,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),
    ]
    base = f"http://127.0.0.1:{port}"
    statuses: dict[str, int] = {}
    try:
        for _ in range(300):
            if _get(base + "/healthz", token) == 200:
                break
            time.sleep(0.2)
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tools.soak",
                    "--writer",
                    "--seconds",
                    str(seconds),
                    "--burst",
                    str(burst),
                ],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(writers)
        ]
        deadline = time.monotonic() + seconds
        paths = ["/healthz", "/api/v1/cases", "/api/v1/cases?status=open", "/api/v1/answers"]
        n = 0
        while time.monotonic() < deadline:
            status = _get(base + paths[n % len(paths)], token)
            key = f"{status // 100}xx" if status else "no answer"
            statuses[key] = statuses.get(key, 0) + 1
            n += 1
        results = [w.communicate(timeout=seconds + 300) for w in workers]
        time.sleep(3)  # the cluster delivers what the last bursts queued
    finally:
        for process in started:
            os.killpg(process.pid, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        logs.close()
    written = [json.loads(out.strip().splitlines()[-1]) for out, _ in results if out.strip()]
    errors = [err.strip().splitlines()[-1] for (out, err), w in zip(results, workers) if w.returncode]
    db = sqlite3.connect(folder / "db.sqlite3")
    # the schema's check constraints call REGEXP (Django registers it on its own connections)
    db.create_function(
        "REGEXP", 2, lambda pattern, text: text is not None and re.search(pattern, str(text)) is not None
    )
    try:
        check = [row[0] for row in db.execute("PRAGMA integrity_check")]
        journal = db.execute("PRAGMA journal_mode").fetchone()[0]
        notifications = db.execute("SELECT count(*) FROM escalation_notification").fetchone()[0]
        queued = db.execute("SELECT count(*) FROM django_q_ormq").fetchone()[0]
        done = db.execute("SELECT count(*) FROM django_q_task").fetchone()[0]
    finally:
        db.close()
    return {
        "seconds": seconds,
        "sqlite": sqlite3.sqlite_version,
        "journal_mode": journal,
        "requests": statuses,
        "bursts": sum(w["bursts"] for w in written),
        "cases": sum(w["cases"] for w in written),
        "notifications": notifications,
        "tasks_done": done,
        "tasks_queued": queued,
        "writer_errors": errors,
        "integrity_check": check[:5],
        "ok": check == ["ok"] and not errors and not statuses.get("5xx") and len(written) == writers,
        "folder": str(folder),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--burst", type=int, default=200, help="cases opened by one burst")
    parser.add_argument("--writer", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="one JSON line only")
    args = parser.parse_args(argv)
    if args.writer:
        writer(args.seconds, args.burst)
        return 0
    result = soak(args.seconds, writers=args.writers, burst=args.burst)
    print(json.dumps(result) if args.json else json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
