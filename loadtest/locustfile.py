"""Locust clients for the load test: each one submits Audit-Local answers back to back.

Run by ``loadtest/run.py`` (``make loadtest``), which starts gunicorn on 127.0.0.1 and passes the
API token in THEORIA_LOAD_TOKEN. Answers come from ``demo/answers.jsonl`` (the demo knowledge base
backs them), in a fixed rotation per client.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from urllib.parse import urlparse

from locust import HttpUser, constant, events, task

ANSWERS = [
    json.loads(line)
    for line in (Path(__file__).resolve().parent.parent / "demo" / "answers.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip()
]


@events.test_start.add_listener
def _loopback_only(environment, **_kwargs):
    host = urlparse(environment.host or "").hostname
    if host != "127.0.0.1":
        raise SystemExit(f"the load test runs against 127.0.0.1 only, not {host!r}")


class AuditLocalClient(HttpUser):
    wait_time = constant(0)

    def on_start(self):
        self.client.headers["Authorization"] = f"Token {os.environ['THEORIA_LOAD_TOKEN']}"
        self.answers = itertools.cycle(ANSWERS[self.environment.runner.user_count % len(ANSWERS) :] + ANSWERS)

    @task
    def audit_local(self):
        record = next(self.answers)
        body = {
            "query": record["query"],
            "answer": record["answer"],
            "contexts": record.get("contexts") or [],
            "mode": "audit-local",
            "domain": record.get("domain") or "",
        }
        with self.client.post(
            "/api/v1/audits",
            json=body,
            name="POST /api/v1/audits (audit-local)",
            catch_response=True,
            timeout=600,
        ) as response:
            if response.status_code != 201:
                response.failure(f"HTTP {response.status_code}: {response.text[:200]}")
            elif not response.json().get("claims"):
                response.failure("the audit returned no claims")
