"""Load test on loopback: N parallel Audit-Local clients (locust) against gunicorn, memory sampled.

    python loadtest/run.py --users 4 --duration 600      (make loadtest USERS=4 DURATION=600)

Prepares a database (a local pgvector PostgreSQL under var/pgvector-load by default, or
``--database-url``): migrations, the demo knowledge base, a submitter and its API token. Starts
gunicorn with ``theoria/gunicorn.conf.py`` on a free 127.0.0.1 port, runs locust headless for the
given time, samples the resident memory of every gunicorn worker every few seconds, then stops
everything it started. Bounded: at most 64 clients and one hour; only 127.0.0.1 is contacted.
The last line is one JSON object: audits/s, p50/p95, errors, whether p95 met the target, and the
workers' memory at the start and end of the run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
MAX_USERS, MAX_DURATION_S = 64, 3600


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manage(env: dict, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, input=stdin, text=True, capture_output=True
    )
    if done.returncode:
        raise SystemExit(
            f"loadtest: manage.py {args[0]} failed: {(done.stderr or done.stdout).strip()[-500:]}"
        )
    return done.stdout


TOKEN_SCRIPT = """
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from audit import roles
from audit.models import UserProfile
from audit.services.workspaces import workspace_get_default
ws = workspace_get_default()
ws.allow_external_calls = False
ws.save(update_fields=["allow_external_calls"])
user, _ = User.objects.get_or_create(username="loadtest")
user.groups.add(Group.objects.get_or_create(name=roles.SUBMITTER)[0])
UserProfile.objects.get_or_create(user=user, defaults={"workspace": ws})
print(Token.objects.get_or_create(user=user)[0].key)
"""


class MemorySampler(threading.Thread):
    """Every few seconds, the resident memory (MB) of each child of the gunicorn master."""

    def __init__(self, master_pid: int, every_s: float = 5.0):
        super().__init__(daemon=True)
        self.master_pid, self.every_s = master_pid, every_s
        self.samples: list[tuple[float, list[float]]] = []
        self.stop = threading.Event()

    def run(self):
        import psutil

        start = time.monotonic()
        while not self.stop.wait(self.every_s):
            try:
                children = psutil.Process(self.master_pid).children()
                rss = sorted(round(c.memory_info().rss / 2**20, 1) for c in children)
            except psutil.Error:
                continue
            self.samples.append((round(time.monotonic() - start, 1), rss))


def _wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"loadtest: gunicorn exited with {proc.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise SystemExit(f"loadtest: gunicorn did not answer {url} within {timeout_s:.0f} s")


def _locust_totals(prefix: Path) -> dict:
    with open(f"{prefix}_stats.csv", newline="") as fh:
        rows = {row["Name"]: row for row in csv.DictReader(fh)}
    row = rows["Aggregated"]
    return {
        "requests": int(row["Request Count"]),
        "failures": int(row["Failure Count"]),
        "p50_ms": float(row["50%"]),
        "p95_ms": float(row["95%"]),
        "max_ms": float(row["Max Response Time"]),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=4, help=f"parallel clients (1-{MAX_USERS})")
    parser.add_argument("--duration", type=int, default=120, help=f"seconds of load (10-{MAX_DURATION_S})")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="gunicorn workers")
    parser.add_argument(
        "--p95-target-ms", type=float, default=10_000.0, help="the p95 the run is judged against"
    )
    parser.add_argument("--database-url", default="", help="default: a local pgvector PostgreSQL under var/")
    args = parser.parse_args(argv)
    if not 1 <= args.users <= MAX_USERS or not 10 <= args.duration <= MAX_DURATION_S or args.workers < 1:
        parser.error(f"--users must be 1-{MAX_USERS}, --duration 10-{MAX_DURATION_S} s, --workers at least 1")

    out_dir = ROOT / "var" / "loadtest"
    out_dir.mkdir(parents=True, exist_ok=True)
    server = None
    url = args.database_url
    if not url:
        from theoria.pgserver import TEST_OPTIONS, pgvector_server

        server = pgvector_server(ROOT / "var" / "pgvector-load", {**TEST_OPTIONS, "max_connections": "100"})
        url = server.url("theoria")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "theoria.settings.base",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(40),
        "DJANGO_DEBUG": "0",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "THEORIA_THROTTLE_AUDITS": "1000000/min",
        "THEORIA_BIND": f"127.0.0.1:{port}",
        "THEORIA_WEB_WORKERS": str(args.workers),
        "THEORIA_ACCESS_LOG": str(out_dir / "access.log"),
        "OPENBLAS_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    gunicorn = sampler = None
    log = (out_dir / "gunicorn.log").open("w")  # closed in the finally below
    try:
        print(f"loadtest: preparing {url} (migrations, demo knowledge base, API token)", file=sys.stderr)
        _manage(env, "migrate", "--noinput", "-v0")
        _manage(env, "ingest_kb", "demo/kb")
        token = _manage(env, "shell", "-c", TOKEN_SCRIPT).strip().splitlines()[-1]
        print(f"loadtest: gunicorn with {args.workers} workers on 127.0.0.1:{port}", file=sys.stderr)
        gunicorn = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "theoria/gunicorn.conf.py", "theoria.wsgi:application"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        _wait_healthy(f"http://127.0.0.1:{port}/healthz", gunicorn)
        sampler = MemorySampler(gunicorn.pid)
        sampler.start()
        prefix = out_dir / "locust"
        print(f"loadtest: {args.users} Audit-Local clients for {args.duration} s", file=sys.stderr)
        started = time.monotonic()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(ROOT / "loadtest" / "locustfile.py"),
                "--headless",
                "-u",
                str(args.users),
                "-r",
                str(args.users),
                "-t",
                f"{args.duration}s",
                "--stop-timeout",
                "600",
                "--host",
                f"http://127.0.0.1:{port}",
                "--csv",
                str(prefix),
                "--only-summary",
                "--loglevel",
                "WARNING",
            ],
            cwd=ROOT,
            env={**env, "THEORIA_LOAD_TOKEN": token},
            check=False,
        )
        elapsed = time.monotonic() - started
        sampler.stop.set()
        totals = _locust_totals(prefix)
    finally:
        if sampler is not None:
            sampler.stop.set()
        if gunicorn is not None and gunicorn.poll() is None:
            gunicorn.send_signal(signal.SIGTERM)
            try:
                gunicorn.wait(60)
            except subprocess.TimeoutExpired:
                gunicorn.kill()
        if server is not None:
            server.stop()
        log.close()

    samples = sampler.samples
    first = samples[min(2, len(samples) - 1)][1] if samples else []  # after the workers' warm-up
    last = samples[-1][1] if samples else []
    peak = max((max(s[1]) for s in samples if s[1]), default=0.0)
    ok = totals["requests"] - totals["failures"]
    summary = {
        "users": args.users,
        "workers": args.workers,
        "duration_s": round(elapsed, 1),
        **totals,
        "audits_per_s": round(ok / elapsed, 3),
        "p95_target_ms": args.p95_target_ms,
        "meets_p95_target": totals["p95_ms"] <= args.p95_target_ms and totals["failures"] == 0,
        "worker_rss_start_mb": max(first, default=0.0),
        "worker_rss_end_mb": max(last, default=0.0),
        "worker_rss_peak_mb": peak,
        "memory_samples": len(samples),
        "load_average": round(os.getloadavg()[0], 1),
        "cores": os.cpu_count(),
    }
    (out_dir / "memory.json").write_text(json.dumps(samples))
    print(
        f"{ok} audits in {elapsed:.0f} s = {summary['audits_per_s']} audits/s with {args.users} clients and "
        f"{args.workers} workers; p50 {totals['p50_ms']:.0f} ms, p95 {totals['p95_ms']:.0f} ms "
        f"(target {args.p95_target_ms:.0f} ms), {totals['failures']} errors; worker memory "
        f"{summary['worker_rss_start_mb']} MB -> {summary['worker_rss_end_mb']} MB (peak {peak} MB)"
    )
    print(json.dumps(summary))
    return 0 if summary["meets_p95_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
