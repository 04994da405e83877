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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-warm", action="store_true", help="start without THEORIA_WARM_MODELS")
    parser.add_argument("--no-worker", action="store_true", help="start the web server without qcluster")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the ready line")
    args = parser.parse_args(argv)

    folder = ROOT / "var" / "first-audit"
    database = _copy_database(folder / "db.sqlite3")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "DJANGO_DEBUG": os.environ.get("DJANGO_DEBUG", "1"),
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "THEORIA_COMPRESSED_STATIC": "1",
        "THEORIA_WARM_MODELS": "0" if args.no_warm else "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
        "PYTHONUNBUFFERED": "1",
    }
    manage = [sys.executable, str(ROOT / "manage.py")]
    out = subprocess.run(
        [*manage, "shell", "-v0", "-c", SESSION],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    session = re.search(r"^session (\S+)$", out, re.M)
    if session is None:
        sys.exit("No active superuser in the database: run `make setup` first.")
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], env=env, cwd=ROOT, check=True)

    load_before = os.getloadavg()
    started = time.perf_counter()
    worker = None
    if not args.no_worker:
        worker = subprocess.Popen(
            [*manage, "qcluster"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    server = subprocess.Popen(
        [*manage, "runserver", f"127.0.0.1:{port}", "--nostatic"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()
    answering = threading.Event()

    def read() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            lines.append(line)
            if READY_LINE in line:
                ready.set()
            if "Quit the server with" in line:
                answering.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{port}"
        if args.no_warm:
            answering.wait(args.timeout)
        elif not ready.wait(args.timeout):
            sys.exit("The server did not say it was ready within --timeout:\n" + "".join(lines[-20:]))
        to_ready = time.perf_counter() - started
        while True:  # the port answers (with the warm-up, it already did before the ready line)
            try:
                httpx.get(f"{base}/healthz", timeout=5)
                break
            except httpx.TransportError:
                if time.perf_counter() - started > args.timeout:
                    sys.exit("The server never answered /healthz.")
                time.sleep(0.2)
        serving = psutil.Process(server.pid)
        print(f"load average before start: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}")
        print(
            f"{'ready (the line make run prints)' if not args.no_warm else 'answering (no warm-up)'}: "
            f"{to_ready:.1f} s wall, {_tree_cpu(serving):.1f} s CPU of the web server"
        )
        with httpx.Client(cookies={"sessionid": session.group(1)}, timeout=args.timeout) as client:
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
        for process in (server, worker):
            if process is None:
                continue
            family = [*psutil.Process(process.pid).children(recursive=True), psutil.Process(process.pid)]
            for member in family:
                member.terminate()
            _, alive = psutil.wait_procs(family, timeout=20)
            for member in alive:  # qcluster's processes may outlast a TERM while they finish a task
                member.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
