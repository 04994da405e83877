"""`make fuzz`: schemathesis against /api/v1/schema/ of a gunicorn on loopback (tools/served.py).

Generated requests for every operation of the schema, as an admin (every endpoint reachable),
bounded by --max-examples per operation and a wall-clock limit. Checks: no 5xx
(not_a_server_error) and schema conformance (response_schema_conformance,
content_type_conformance). Prints schemathesis' summary, then the request counts from the
server's own access log; exits non-zero on any failure or any 5xx.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.served import ROOT, access_counts, served


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--max-examples", type=int, default=60, help="generated cases per operation and phase"
    )
    parser.add_argument("--time-limit", type=int, default=1800, help="seconds before the run is stopped")
    parser.add_argument("--schemathesis", default=str(ROOT / "var" / "fuzz-venv" / "bin" / "schemathesis"))
    args = parser.parse_args()
    started = time.monotonic()
    with served("fuzz") as (base, tokens, folder):
        command = [
            args.schemathesis,
            "run",
            f"{base}/api/v1/schema/",
            "--url",
            base,
            "-H",
            f"Authorization: Token {tokens['admin']}",
            "--checks",
            "not_a_server_error,response_schema_conformance,content_type_conformance",
            "--max-examples",
            str(args.max_examples),
            "--workers",
            "1",
            "--seed",
            "15",
            "--request-timeout",
            "120",
            "--continue-on-failure",
            "--generation-allow-x00",
            "true",
            "--exclude-path",
            "/api/v1/auth/token",  # a password form: fuzzing it only exercises the throttle
            "--report",
            "junit",
            "--report-dir",
            str(folder / "report"),
        ]
        try:
            result = subprocess.run(
                command, cwd=ROOT, timeout=args.time_limit, env={**os.environ, "SCHEMATHESIS_HOOKS": ""}
            )
            code = result.returncode
        except subprocess.TimeoutExpired:
            print(f"fuzz: stopped at the {args.time_limit} s limit")
            code = 0
        counts = access_counts(folder)
    elapsed = time.monotonic() - started
    print(
        f"fuzz: {counts['requests']} requests in {elapsed:.0f} s; 2xx {counts['2xx']}, 3xx {counts['3xx']}, "
        f"4xx {counts['4xx']}, 5xx {counts['5xx']} (server access log)"
    )
    return 1 if code or counts["5xx"] else 0


if __name__ == "__main__":
    sys.exit(main())
