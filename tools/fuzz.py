"""`make fuzz`: schemathesis against /api/v1/schema/ of a gunicorn on loopback (tools/served.py).

Generated requests for every operation of the schema, as an admin (every endpoint reachable),
bounded by --max-examples per operation and phase and a wall-clock limit, on every phase
(examples, coverage, fuzzing, stateful) and with every check (schemathesis' default: no 5xx, status
codes, response schemas, content types and headers as documented, valid data accepted, invalid
data refused). The suite runs the same command against its live test server with fewer examples
(tests/api/test_schemathesis.py). Prints schemathesis' summary, then the request counts from the
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

from tools.served import ROOT, SLOW_MS, access_counts, served

PHASES = "examples,coverage,fuzzing,stateful"


def schemathesis_command(
    base: str,
    token: str,
    *,
    phases: str = PHASES,
    max_examples: int = 60,
    max_response_time: float = 10.0,
    extra: tuple[str, ...] = (),
) -> list[str]:
    """The one schemathesis command line of `make fuzz` and of the suite."""
    return [
        str(Path(sys.executable).parent / "schemathesis"),
        "--config-file",
        str(ROOT / "tools" / "schemathesis.toml"),
        "run",
        f"{base}/api/v1/schema/",
        "--url",
        base,
        "-H",
        f"Authorization: Token {token}",
        "--phases",
        phases,
        "--max-examples",
        str(max_examples),
        "--workers",
        "1",
        "--seed",
        "15",
        "--generation-deterministic",
        "--max-response-time",
        str(max_response_time),
        "--request-timeout",
        "120",
        "--continue-on-failure",
        # NUL characters and unpaired surrogates are refused in every text (400, docs/API.md): a
        # rule of the parser, not of each field, so the generated strings leave them out
        "--generation-allow-x00",
        "false",
        "--generation-codec",
        "utf-8",
        "--exclude-path",
        "/api/v1/auth/token",  # a password form: fuzzing it only exercises the throttle and the lockout
        *extra,
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--max-examples", type=int, default=60, help="generated cases per operation and phase"
    )
    parser.add_argument("--phases", default=PHASES)
    parser.add_argument("--time-limit", type=int, default=1800, help="seconds before the run is stopped")
    args = parser.parse_args()
    started = time.monotonic()
    with served("fuzz") as (base, tokens, folder):
        command = schemathesis_command(
            base,
            tokens["admin"],
            phases=args.phases,
            max_examples=args.max_examples,
            extra=("--report", "junit", "--report-dir", str(folder / "report")),
        )
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
        f"4xx {counts['4xx']}, 5xx {counts['5xx']} (server access log); slowest request other than an "
        f"audit {counts['max_ms_not_audit']} ms, {len(counts['slow'])} over {SLOW_MS} ms"
    )
    for ms, request in sorted(counts["slow"], reverse=True)[:10]:
        print(f"fuzz: slow: {ms} ms {request}")
    return 1 if code or counts["5xx"] else 0


if __name__ == "__main__":
    sys.exit(main())
