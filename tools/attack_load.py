"""Normal audits under attack: ``--clients`` clients audit short demo answers while ``--attackers``
clients send the heaviest answer families (tools/cost_probe.py) at 100 KB and 400 KB, against gunicorn
on loopback (tools/served.py) with the task cluster beside it (``manage.py qcluster``, the queue of
audits over the inline cost budget). Prints the normal audits' p50/p95 and every attacking request's
status and latency, then one JSON line. A figure, never a test.

    python -m tools.attack_load --seconds 60
    python -m tools.attack_load --seconds 60 --database-url postgres://postgres@127.0.0.1:5432/theoria_attack \
        --redis-url redis://127.0.0.1:6379/7

By default the embedded stack (a fresh SQLite file, the cache table and the ORM broker in it); with
``--database-url`` a PostgreSQL database (dropped and created again first) and with ``--redis-url`` the
cache and the task broker in Redis (that database emptied first), as a production deployment runs.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.cost_probe import families  # noqa: E402
from tools.load_test import _answers, _post  # noqa: E402
from tools.served import served  # noqa: E402


def _qcluster(folder: Path, extra_env: dict[str, str]) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "theoria.settings.base",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "served-on-loopback-only-" + "k" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "THEORIA_VAR_DIR": str(folder),
        "THEORIA_LLM_BASE_URL": "",
        "OPENBLAS_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        **extra_env,
    }
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "qcluster"],
        env=env,
        cwd=ROOT,
        stdout=(folder / "qcluster.log").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its workers are stopped with it (_stop)
    )


def _stop(cluster: subprocess.Popen) -> None:
    """Stop the cluster and its workers: a worker in the middle of a long audit does not stop on
    the polite signal within seconds, so the whole group is killed after ten."""
    cluster.terminate()
    try:
        cluster.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(cluster.pid, signal.SIGKILL)
        cluster.wait(timeout=30)


def _stack(database_url: str, redis_url: str) -> dict[str, str]:
    """The environment of the stack asked for, made fresh: the PostgreSQL database dropped and
    created again, the Redis database emptied."""
    extra: dict[str, str] = {}
    if database_url:
        from urllib.parse import urlsplit

        import psycopg

        name = urlsplit(database_url).path.lstrip("/")
        admin = database_url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        extra["DATABASE_URL"] = database_url
    if redis_url:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
        extra["THEORIA_REDIS_URL"] = redis_url
    return extra


def _p(values: list[float], q: int) -> float | None:
    if len(values) < 2:
        return round(values[0], 2) if values else None
    return round(statistics.quantiles(values, n=100)[q - 1], 2)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--attackers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--threads", type=int, default=None, help="threads per worker (default: the configuration's)"
    )
    parser.add_argument("--database-url", default="", help="a PostgreSQL URL (default: a fresh SQLite file)")
    parser.add_argument("--redis-url", default="", help="the cache and the task broker in Redis")
    args = parser.parse_args()
    extra_env = _stack(args.database_url, args.redis_url)
    normal_bodies = _answers()
    built = families(100)
    attacks = [
        {"query": "What does the cortex do?", "mode": "audit-local", **built[name]}
        for name in ("hyphens", "digits", "digits_490", "ones_490", "binding", "tiny")
    ]
    big = families(400)
    attacks += [{"query": "q", "mode": "audit-local", **big[name]} for name in ("digits", "words_490")]
    normal: list[tuple[int, float]] = []
    attacked: list[tuple[str, int, float]] = []
    lock = threading.Lock()
    with served("attack", workers=args.workers, threads=args.threads, extra_env=extra_env) as (
        base,
        tokens,
        folder,
    ):
        cluster = _qcluster(folder, extra_env)
        try:
            for body in normal_bodies[:2]:
                _post(base, tokens["frontend"], body)
            stop = time.monotonic() + args.seconds

            def client(n: int) -> None:
                k = n
                while time.monotonic() < stop:
                    outcome = _post(base, tokens["frontend"], normal_bodies[k % len(normal_bodies)])
                    with lock:
                        normal.append(outcome)
                    k += args.clients

            def attacker(n: int) -> None:
                token = tokens["admin" if n % 2 == 0 else "lead"]
                k = n
                while time.monotonic() < stop:
                    body = attacks[k % len(attacks)]
                    status, seconds = _post(base, token, body)
                    with lock:
                        attacked.append(
                            (f"{len(body['answer']) // 1000} KB #{k % len(attacks)}", status, seconds)
                        )
                    k += 1

            threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
            threads += [threading.Thread(target=attacker, args=(n,)) for n in range(args.attackers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            _stop(cluster)
    ok = sorted(t for status, t in normal if status == 201)
    summary = {
        "seconds": args.seconds,
        "stack": {"database": "postgresql" if args.database_url else "sqlite", "redis": bool(args.redis_url)},
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "normal": {
            "requests": len(normal),
            "ok": len(ok),
            "statuses": sorted({s for s, _ in normal}),
            "p50_s": _p(ok, 50),
            "p95_s": _p(ok, 95),
        },
        "attacks": {
            "requests": len(attacked),
            "statuses": {
                str(s): sum(1 for _, x, _ in attacked if x == s) for s in sorted({x for _, x, _ in attacked})
            },
            "max_s": round(max((t for _, _, t in attacked), default=0.0), 2),
            "over_2_s": sum(1 for _, _, t in attacked if t > 2),
        },
    }
    for name, status, seconds in attacked:
        print(f"attack {name}: {status} in {seconds:.2f} s")
    print(
        f"normal audits: {len(ok)} of {len(normal)} answered 201, p50 {summary['normal']['p50_s']} s, "
        f"p95 {summary['normal']['p95_s']} s; attacks: {len(attacked)}, slowest {summary['attacks']['max_s']} s"
    )
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
