"""theoria_client over real HTTP when the server queues an audit: over the inline cost budget
``POST /audits`` answers 202 with a job, and ``audit()`` polls the job (waiting as each answer's
``Retry-After`` says) and returns the audited answer as an inline audit would."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.client.conftest import ANSWER, CONTEXTS, QUERY

# transaction: the live server reads what the test writes, and the test reads the job it queued
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queued_audits(monkeypatch):
    """An inline budget this answer is over (it costs about 180 units) and a one-second Retry-After."""
    from audit import constants
    from audit.pipeline.cost import audit_cost
    from audit.pipeline.types import Passage

    monkeypatch.setattr(constants, "AUDIT_INLINE_COST_BUDGET", 100)
    monkeypatch.setattr(constants, "JOB_POLL_RETRY_AFTER_S", 1)
    passages = [Passage(id=str(c["id"]), text=str(c["text"])) for c in CONTEXTS]
    assert not audit_cost(ANSWER, passages).inline


class Recorder:
    """The test's own HTTP client's event hooks: when each request was sent and each answer read.
    The first poll of the job is held on its answer until the test, as the task worker, has run the
    job (SQLite's shared in-memory test database locks a table a poll reads while a job writes)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, float, str]] = []
        self.polled, self.worked = threading.Event(), threading.Event()

    def sent(self, request: httpx.Request) -> None:
        self.events.append(("sent", time.monotonic(), request.url.path))

    def answered(self, response: httpx.Response) -> None:
        path = response.request.url.path
        if path.startswith("/api/v1/jobs/") and not self.polled.is_set():
            self.polled.set()
            self.worked.wait(300)
        self.events.append(("answered", time.monotonic(), path))

    def wait_for_a_poll(self, audited, timeout: float = 300.0) -> None:
        """Until the client has polled its job (an audit that ended first raises here)."""
        deadline = time.monotonic() + timeout
        while not self.polled.wait(0.05):
            if audited.done():
                audited.result()
            assert time.monotonic() < deadline, "the client never polled its job"


def test_the_client_waits_for_a_queued_audit_as_retry_after_says_and_returns_its_answer(
    live_server, tokens, queued_audits, monkeypatch
):
    from django_q.conf import Conf

    from audit.models import BackgroundJob
    from audit.services.background import background_job_run
    from theoria_client import Theoria

    # The task stays in django-q's queue (the ORM broker) until the test, as the worker, runs it.
    monkeypatch.setattr(Conf, "SYNC", False)
    hooks = Recorder()
    http = httpx.Client(timeout=300, event_hooks={"request": [hooks.sent], "response": [hooks.answered]})
    with Theoria(live_server.url, tokens["submitter"], http=http) as theoria, ThreadPoolExecutor(1) as pool:
        audited = pool.submit(theoria.audit, QUERY, ANSWER, CONTEXTS, mode="audit-local", poll_interval=0.05)
        try:
            hooks.wait_for_a_poll(audited)
            job = BackgroundJob.objects.get()
            assert job.status == "queued" and job.answer_id is None  # polled while still waiting
            background_job_run(job.pk)
        finally:
            hooks.worked.set()
        result = audited.result(timeout=300)

    assert result.job == job.pk and [c.label for c in result.claims] == ["SUPPORTED", "REFUTED"]
    assert result.verified and result.answer_id == BackgroundJob.objects.get().answer.public_id
    assert result.raw["mode_decision"]["source"] == "request"  # what the 201 would have said, from the job
    paths = [path for kind, _, path in hooks.events if kind == "sent"]
    job_path = f"/api/v1/jobs/{job.pk}"
    assert paths == ["/api/v1/audits", job_path, job_path, f"/api/v1/answers/{result.answer_id}"]
    # before each poll the client waited the server's Retry-After (1 s), not its 0.05 s interval
    waits = [
        at - before[1]
        for before, (kind, at, path) in zip(hooks.events, hooks.events[1:])
        if kind == "sent" and path == job_path
    ]
    assert len(waits) == 2 and min(waits) >= 0.9, waits


def test_the_async_client_follows_a_202_to_the_audited_answer(live_server, tokens, queued_audits):
    from theoria_client import AsyncTheoria, Theoria

    async def scenario():
        async with AsyncTheoria(live_server.url, tokens["submitter"]) as theoria:
            return await theoria.audit(QUERY, ANSWER, CONTEXTS, mode="audit-local", poll_interval=0.05)

    result = asyncio.run(scenario())  # the task queue is synchronous here: done by the first poll
    assert result.job and [c.label for c in result.claims] == ["SUPPORTED", "REFUTED"]
    with Theoria(live_server.url, tokens["analyst"]) as analyst:
        job = analyst.job(result.job)
        assert job.status == "done" and job.answer == result.answer_id and job.finished
        assert analyst.wait_for_job(job, timeout=1) == job
        assert analyst.answer(result.answer_id).claims == result.claims
