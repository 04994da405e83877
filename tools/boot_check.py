"""gunicorn booting with the production configuration (``theoria/gunicorn.conf.py``): for each count
of web workers and torch threads, a fresh SQLite file, the server started, and the seconds until every
worker could answer (``/healthz`` asked three times per worker, each within 2 s), or "not within
--limit s". Prints one line per setting and a last JSON line. A figure, never a test (the suite's
slow test starts one worker at two torch threads through :func:`healthz_after_boot`).

    python -m tools.boot_check                          # 1, 2 and 4 workers x 1 and 2 torch threads
    python -m tools.boot_check --workers 2 --torch-threads 2 --limit 60
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.served import free_port, loopback_production_env  # noqa: E402


def _answers(base: str, times: int) -> bool:
    try:
        return all(urllib.request.urlopen(base + "/healthz", timeout=2).status == 200 for _ in range(times))
    except OSError:
        return False


def healthz_after_boot(
    folder: Path, *, workers: int, torch_threads: int, limit: float
) -> tuple[float | None, str]:
    """(seconds from gunicorn's start until ``/healthz`` answered three times per worker, or None past
    ``limit``; the server's log), for a gunicorn with the production configuration on a fresh SQLite
    file in ``folder``. The server and its workers are killed afterwards."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("THEORIA_", "DJANGO_", "DATABASE_URL", "OPENBLAS_", "OMP_"))
    }
    port = free_port()
    env = {
        **clean,
        **loopback_production_env(folder),
        "THEORIA_WEB_WORKERS": str(workers),
        "THEORIA_TORCH_THREADS": str(torch_threads),
        "THEORIA_BIND": f"127.0.0.1:{port}",
    }
    log_path = folder / "gunicorn.log"
    with log_path.open("w") as log:
        started = time.monotonic()
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "theoria/gunicorn.conf.py", "theoria.wsgi:application"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its workers are stopped with it
        )
        answered: float | None = None
        try:
            while time.monotonic() - started < limit:
                if _answers(f"http://127.0.0.1:{port}", 3 * workers):
                    answered = round(time.monotonic() - started, 1)
                    break
                time.sleep(0.5)
        finally:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
    return answered, log_path.read_text()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--torch-threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds to wait for every worker")
    args = parser.parse_args()
    rows = []
    for workers in args.workers:
        for threads in args.torch_threads:
            with tempfile.TemporaryDirectory(prefix="theoria-boot-") as folder:
                seconds, _log = healthz_after_boot(
                    Path(folder), workers=workers, torch_threads=threads, limit=args.limit
                )
            rows.append({"workers": workers, "torch_threads": threads, "seconds": seconds})
            shown = f"in {seconds} s" if seconds is not None else f"not within {args.limit:g} s"
            print(
                f"workers {workers}, torch threads {threads}: every worker answered /healthz {shown}",
                flush=True,
            )
    print(json.dumps({"load_average": [round(x, 1) for x in os.getloadavg()], "rows": rows}))
    return 0 if all(r["seconds"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
