"""A production-like Theoria on loopback for `make fuzz` and `make load`: a fresh SQLite file
database under var/, one workspace with a user per role and the demo knowledge base, served by
gunicorn with DEBUG off. Used as a context manager; the server is stopped on exit."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SETUP = """
from django.contrib.auth.models import Group, User
from rest_framework.authtoken.models import Token
from audit import roles
from audit.models import UserProfile
from audit.services.workspaces import workspace_get_default
ws = workspace_get_default()
ws.allow_external_calls = False  # loopback only: nothing leaves the machine
ws.save()
for name, role in (("admin", roles.ADMIN), ("frontend", roles.SUBMITTER), ("lead", roles.L3_LEAD)):
    user = User.objects.create_user(name, password="x", is_staff=role == roles.ADMIN)
    user.groups.add(Group.objects.get(name=role))
    UserProfile.objects.create(user=user, workspace=ws)
    print(name, Token.objects.create(user=user).key)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loopback_production_env(folder: Path) -> dict[str, str]:
    """The production settings (DEBUG off) served on 127.0.0.1 without TLS, on a SQLite file and a
    var/ in ``folder``, the models loaded offline: the variables a served stack sets over its own."""
    return {
        "DJANGO_SETTINGS_MODULE": "theoria.settings.base",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "served-on-loopback-only-" + "k" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_SECURE_HSTS_SECONDS": "0",
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "THEORIA_VAR_DIR": str(folder),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


@contextmanager
def served(
    name: str,
    *,
    workers: int = 2,
    threads: int | None = None,
    seed_kb: bool = True,
    extra_env: dict | None = None,
):
    """Yield (base URL, {username: token}) of a gunicorn serving a fresh database under var/<name>/;
    ``threads`` per worker, by default the configuration's own (``THEORIA_WEB_THREADS``)."""
    folder = ROOT / "var" / name
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("db.sqlite3*"):
        stale.unlink()
    env = {
        **os.environ,
        **loopback_production_env(folder),
        "THEORIA_THROTTLE_AUDITS": "",
        "THEORIA_THROTTLE_TOKEN": "",
        "THEORIA_SIGNIN_LOCKOUT": "",
        "THEORIA_SIGNIN_ACCOUNT_DELAY_MAX": "0",
        "THEORIA_SIGNIN_ADDRESS_LOCKOUT": "",
        "THEORIA_LLM_BASE_URL": "",
        "THEORIA_SLACK_WEBHOOK_URL": "",
        "THEORIA_ONCALL_EMAIL": "",
        "OPENBLAS_NUM_THREADS": "1",
        # the workers and their threads through the settings' own variables, so the configuration's
        # derived settings (one connection per thread, the torch threads per worker) follow them
        "THEORIA_WEB_WORKERS": str(workers),
        **({"THEORIA_WEB_THREADS": str(threads)} if threads else {}),
        **(extra_env or {}),
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], env=env, cwd=ROOT, check=True)
    out = subprocess.run(
        [*manage, "shell", "-v0", "-c", SETUP], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    tokens = dict(re.findall(r"^(\w+) ([0-9a-f]{40})$", out, re.M))
    if seed_kb:
        subprocess.run(
            [*manage, "ingest_kb", str(ROOT / "demo" / "kb")],
            env=env,
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    port = free_port()
    log = (folder / "access.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            # the production settings (models loaded before the fork, each worker's first inference
            # after it: without them the first search of a worker took 8.9 s), then these
            "-c",
            str(ROOT / "theoria" / "gunicorn.conf.py"),
            "theoria.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--timeout",
            "300",
            "--access-logfile",
            "-",
            "--access-logformat",
            "%(m)s %(U)s %(s)s %(M)s",
        ],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=(folder / "server.log").open("w"),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)
        yield base, tokens, folder
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a worker still in a long request past the graceful timeout
            server.kill()
            server.wait(timeout=30)
        log.close()


# the requests that run an audit (their time is the pipeline's); every other one answers within SLOW_MS
AUDIT_REQUESTS = (("POST", "/api/v1/audits"),)
SLOW_MS = 8_000


def access_counts(folder: Path) -> dict:
    """Requests and responses by class from the access log (method path status ms per line), the
    slowest request other than an audit, and those of them over SLOW_MS ("slow": [(ms, method path)])."""
    counts: dict = {"requests": 0, "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, "max_ms_not_audit": 0, "slow": []}
    for line in (folder / "access.log").read_text().splitlines():
        parts = line.split()  # the path may hold spaces: the status is the next-to-last field
        if len(parts) >= 4 and parts[-2].isdigit() and len(parts[-2]) == 3:
            counts["requests"] += 1
            counts[f"{parts[-2][0]}xx"] = counts.get(f"{parts[-2][0]}xx", 0) + 1
            method, path, ms = parts[0], " ".join(parts[1:-2]), int(parts[-1]) if parts[-1].isdigit() else 0
            if (method, path) in AUDIT_REQUESTS:
                continue
            counts["max_ms_not_audit"] = max(counts["max_ms_not_audit"], ms)
            if ms > SLOW_MS:
                counts["slow"].append((ms, f"{method} {path}"))
    return counts
