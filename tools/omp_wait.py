"""Embedding time with torch's OpenMP threads spinning (the default) and sleeping (OMP_WAIT_POLICY=PASSIVE).

    python tools/omp_wait.py [--rounds 6]

Each policy runs in a fresh process (the variable is read when torch loads), embeds 64 new sentences per
round, and prints the median seconds per round beside the load average. The difference shows when
another process holds a core (docs/PERFORMANCE.md); on an idle machine the two are close.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import os, statistics, time
from audit.pipeline.embedding import get_embedder
e = get_embedder()
texts = [f"Sentence {i} about the audit policy and claims in regulated domains." for i in range(64)]
e.encode(texts[:4])
times = []
for r in range(ROUNDS):
    e.clear_cache()
    t = time.perf_counter()
    e.encode([x + str(r) for x in texts])
    times.append(time.perf_counter() - t)
print(f"{statistics.median(times):.3f}")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    for policy in ("ACTIVE", "PASSIVE"):
        env = {**os.environ, "OMP_WAIT_POLICY": policy, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", CHILD.replace("ROUNDS", str(args.rounds))],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        median = out.stdout.strip().splitlines()[-1]
        print(
            f"OMP_WAIT_POLICY={policy}: median {median} s per 64 sentences; load average {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
