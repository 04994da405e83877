"""How long `make run` takes to be ready, and how long its first and second audits take.

    python -m tools.first_audit                 # after `make setup` (the demo database)
    python -m tools.first_audit --no-warm       # the same server without the start-up warm-up

It copies the development database (the SQLite file `make setup` filled) under var/first-audit/, so
the audits it sends store nothing in the demo, then starts what `make run` starts on a free port:
the task worker (``qcluster``) and ``runserver --nostatic`` with THEORIA_WARM_MODELS=1 and
THEORIA_COMPRESSED_STATIC=1. It reads the server's output until the line that says it is ready (the
line a person sees under `make run`), then signs the admin in (a session made in the copy) and submits
two different answers through the answer form in Audit-Local mode, each followed by its page, as a
browser would. It prints the seconds to ready, then each audit's wall-clock seconds and the CPU seconds
the serving process spent on it, with the load average before and after (the machine's other work
slows every figure: read them beside it).
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import httpx
import psutil

from audit.services.warmup import READY_LINE

ROOT = Path(__file__).resolve().parents[1]
MANAGE = [sys.executable, str(ROOT / "manage.py")]
ANSWERS = (
    (
        "What happened to patient H.M.'s memory?",
        "Patient H.M. had both medial temporal lobes removed in 1953 to treat epilepsy. Afterwards he "
        "could not form new long-term declarative memories, although his working memory was preserved.",
    ),
    (
        "What do dopamine neurons signal?",
        "Dopamine neurons signal reward prediction errors. They fire more when a reward is better than "
        "expected and less when it is worse than expected.",
    ),
)
SESSION = """
from django.contrib.auth import get_user_model
from audit.management.browser import session_cookie
user = get_user_model().objects.filter(is_superuser=True, is_active=True).order_by("pk").first()
print("session", session_cookie(user, "http://127.0.0.1")["value"])
"""


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _copy_database(target: Path) -> str:
    """Copy the development SQLite database to ``target``; return its DATABASE_URL."""
    url = os.environ.get("DATABASE_URL", "")
    source = Path(url.removeprefix("sqlite:///")) if url else ROOT / "var" / "theoria.sqlite3"
    if url and not url.startswith("sqlite:///"):
        sys.exit("tools.first_audit copies a SQLite database; unset DATABASE_URL to use make setup's.")
    if not source.exists():
        sys.exit(f"{source} is missing: run `make setup` first.")
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(target.name + "*"):
        stale.unlink()
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    return f"sqlite:///{target}"


def _tree_cpu(process: psutil.Process) -> float:
    """CPU seconds (user + system) of a process and its children."""
    total = 0.0
    for p in [process, *process.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system
    return total


def _audit(client: httpx.Client, base: str, query: str, answer: str) -> tuple[float, str]:
    """Submit one answer through the form and open its page; return (seconds, the page's path)."""
    started = time.perf_counter()
    form = client.get(f"{base}/answers/new/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    if form.status_code != 200 or token is None:
        sys.exit(f"The answer form answered {form.status_code}.")
    data = {
        "csrfmiddlewaretoken": token.group(1),
        "query": query,
        "answer": answer,
        "mode": "audit-local",
        "domain": "",
        "passage-TOTAL_FORMS": "0",
        "passage-INITIAL_FORMS": "0",
    }
    sent = client.post(f"{base}/answers/new/", data=data, headers={"Referer": f"{base}/answers/new/"})
    if sent.status_code != 302:
        sys.exit(f"The audit answered {sent.status_code}, not a redirect to its page.")
    page = client.get(urllib.parse.urljoin(base, sent.headers["location"]))
    if page.status_code != 200:
        sys.exit(f"The audited answer's page answered {page.status_code}.")
    return time.perf_counter() - started, sent.headers["location"]


def _env(no_warm: bool, port: int) -> dict[str, str]:
    """What `make run` exports, over the copied database (var/first-audit/)."""
    return {
        **os.environ,
        "DATABASE_URL": _copy_database(ROOT / "var" / "first-audit" / "db.sqlite3"),
        "DJANGO_DEBUG": os.environ.get("DJANGO_DEBUG", "1"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "THEORIA_COMPRESSED_STATIC": "1",
        "THEORIA_WARM_MODELS": "0" if no_warm else "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
        "PYTHONUNBUFFERED": "1",
    }


def _session(env: dict[str, str]) -> str:
    """A signed-in session of the copy's first superuser; collectstatic done, as `make run` does it."""
    out = subprocess.run(
        [*MANAGE, "shell", "-v0", "-c", SESSION],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    session = re.search(r"^session (\S+)$", out, re.M)
    if session is None:
        sys.exit("No active superuser in the database: run `make setup` first.")
    subprocess.run([*MANAGE, "collectstatic", "--noinput", "-v0"], env=env, cwd=ROOT, check=True)
    return session.group(1)


class Served:
    """The web server of `make run` (and its task worker) with the lines it printed so far."""

    def __init__(self, env: dict[str, str], port: int, worker: bool):
        self.worker = (
            subprocess.Popen(
                [*MANAGE, "qcluster"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            if worker
            else None
        )
        self.server = subprocess.Popen(
            [*MANAGE, "runserver", f"127.0.0.1:{port}", "--nostatic"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self.ready, self.answering = threading.Event(), threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.server.stdout is not None
        for line in self.server.stdout:
            self.lines.append(line)
            if READY_LINE in line:
                self.ready.set()
            if "Quit the server with" in line:
                self.answering.set()

    def stop(self) -> None:
        for process in (self.server, self.worker):
            if process is None:
                continue
            family = [*psutil.Process(process.pid).children(recursive=True), psutil.Process(process.pid)]
            for member in family:
                member.terminate()
            _, alive = psutil.wait_procs(family, timeout=20)
            for member in alive:  # qcluster's processes may outlast a TERM while they finish a task
                member.kill()


def _wait_for_healthz(base: str, deadline: float) -> None:
    """Until the port answers (with the warm-up, it already did before the ready line)."""
    while True:
        try:
            httpx.get(f"{base}/healthz", timeout=5)
            return
        except httpx.TransportError:
            if time.perf_counter() > deadline:
                sys.exit("The server never answered /healthz.")
            time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-warm", action="store_true", help="start without THEORIA_WARM_MODELS")
    parser.add_argument("--no-worker", action="store_true", help="start the web server without qcluster")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the ready line")
    args = parser.parse_args(argv)

    port = _free_port()
    env = _env(args.no_warm, port)
    session = _session(env)
    load_before = os.getloadavg()
    started = time.perf_counter()
    served = Served(env, port, worker=not args.no_worker)
    try:
        base = f"http://127.0.0.1:{port}"
        waited = (served.answering if args.no_warm else served.ready).wait(args.timeout)
        if not waited:
            sys.exit("The server did not start within --timeout:\n" + "".join(served.lines[-20:]))
        to_ready = time.perf_counter() - started
        _wait_for_healthz(base, started + args.timeout)
        serving = psutil.Process(served.server.pid)
        print(f"load average before start: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
        print(
            f"{'answering (no warm-up)' if args.no_warm else 'ready (the line make run prints)'}: "
            f"{to_ready:.1f} s wall, {_tree_cpu(serving):.1f} s CPU of the web server"
        )
        with httpx.Client(cookies={"sessionid": session}, timeout=args.timeout) as client:
            for n, (query, answer) in enumerate(ANSWERS, start=1):
                cpu = _tree_cpu(serving)
                seconds, path = _audit(client, base, query, answer)
                print(
                    f"audit {n} (form, Audit-Local, then its page {path}): {seconds:.2f} s wall, "
                    f"{_tree_cpu(serving) - cpu:.2f} s CPU of the web server"
                )
        load = os.getloadavg()
        print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)")
    finally:
        served.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
