"""`make load`: 50 parallel clients submit Audit-Local answers to gunicorn on loopback
(tools/served.py, demo knowledge base) and the latencies are printed: p50, p95, max, errors.

Each client sends ``--per-client`` audits of a short answer (3 claims) drawn from the demo set,
one after the other; all clients start together. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.served import ROOT, served


def _answers() -> list[dict]:
    rows = [
        json.loads(line)
        for line in (ROOT / "demo" / "answers.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return [
        {
            "query": r.get("query", "q"),
            "answer": r.get("answer", ""),
            "contexts": r.get("contexts", []),
            "mode": "audit-local",
        }
        for r in rows
        if r.get("answer")
    ]


def _post(base: str, token: str, body: dict) -> tuple[int, float]:
    request = urllib.request.Request(
        base + "/api/v1/audits",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError:
        status = 0
    return status, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--per-client", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument(
        "--threads", type=int, default=None, help="threads per worker (default: the configuration's)"
    )
    parser.add_argument(
        "--database-url", default="", help="serve this (empty) database instead of a fresh SQLite file"
    )
    args = parser.parse_args()
    answers = _answers()
    extra = {"DATABASE_URL": args.database_url} if args.database_url else {}
    with served("load", workers=args.workers, threads=args.threads, extra_env=extra) as (base, tokens, _):
        for body in answers[:2]:  # warm each worker: the embedding model loads on first use
            _post(base, tokens["frontend"], body)
        results: list[tuple[int, float]] = []
        lock = threading.Lock()
        barrier = threading.Barrier(args.clients)

        def client(n: int) -> None:
            barrier.wait()
            for k in range(args.per_client):
                outcome = _post(base, tokens["frontend"], answers[(n * args.per_client + k) % len(answers)])
                with lock:
                    results.append(outcome)

        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.monotonic() - started
    ok = sorted(t for status, t in results if status == 201)
    errors = len(results) - len(ok)
    p = statistics.quantiles(ok, n=100) if len(ok) >= 2 else [float("nan")] * 99
    summary = {
        "database": (args.database_url or "sqlite").split(":", 1)[0],
        "clients": args.clients,
        "requests": len(results),
        "errors": errors,
        "workers": args.workers,
        "threads": args.threads or "configured (THEORIA_WEB_THREADS, default 2)",
        "wall_s": round(wall, 1),
        "throughput_rps": round(len(results) / wall, 2),
        "p50_s": round(p[49], 2),
        "p95_s": round(p[94], 2),
        "max_s": round(max(ok), 2) if ok else None,
        "statuses": sorted({status for status, _ in results}),
    }
    print(
        f"{len(results)} Audit-Local requests from {args.clients} parallel clients in {wall:.0f} s: "
        f"p50 {summary['p50_s']} s, p95 {summary['p95_s']} s, errors {errors}"
    )
    print(json.dumps(summary))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
