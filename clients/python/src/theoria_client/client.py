"""``Theoria`` (sync) and ``AsyncTheoria``: the REST API of docs/API.md over httpx.

Both share ``_Base``: how a request is built, when it is retried and how a response is read. Only
the sending and the sleeping differ, so the two clients answer alike.

Queued audits: an audit over the server's inline cost budget answers ``202`` with the job to poll
(``GET /jobs/<id>``); ``audit`` polls it, waiting as each answer's ``Retry-After`` says, and returns
the audited answer as an inline audit would (``AuditResult.job`` names the job).

Retries: a ``429`` or ``503`` is sent again after the server's ``Retry-After`` (seconds or an HTTP
date; an exponential backoff when absent), up to ``max_retries`` times; a request that could not
reach the server is sent again only when it is safe to (a read, or an audit with its
Idempotency-Key: the server answers a repeat with the first result, ``Idempotent-Replayed``).
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from datetime import date, datetime, timezone
from typing import Any

import httpx

from theoria_client.errors import TransportError, error_from_job, error_from_response
from theoria_client.models import AuditResult, Case, ClaimCard, Job, Page, Run

API = "/api/v1"
RETRY_STATUSES = (429, 503)
DEEP_CHECK_ENDED = ("done", "failed")
DEFAULT_TIMEOUT = 120.0  # an audit runs the verification pipeline: seconds by design
JOB_WAIT_TIMEOUT = 600.0  # how long audit() waits for an audit the server queued
JOB_POLL_INTERVAL = 2.0  # between polls of a job, when the server sends no Retry-After
# what the POST /audits answer adds to an answer, kept by a queued audit's job in its result
JOB_RESULT_FIELDS = ("mode_decision", "web")


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for: delta-seconds or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def context_list(contexts: Iterable[Any]) -> list[dict[str, Any]]:
    """The request's ``contexts``: each a mapping (``id``, ``text``, optional ``title``, ``uri``,
    ``published_at``) or a plain string, numbered ``"1"``, ``"2"``, … as the answer's ``[1]`` markers."""
    out: list[dict[str, Any]] = []
    for index, item in enumerate(contexts, start=1):
        if isinstance(item, str):
            out.append({"id": str(index), "text": item})
        elif isinstance(item, Mapping):
            context = {k: v for k, v in item.items() if v is not None}
            context.setdefault("id", str(index))
            if isinstance(context.get("published_at"), date):
                context["published_at"] = context["published_at"].isoformat()
            out.append(context)
        else:
            raise TypeError(f"contexts[{index - 1}] must be a string or a mapping, not {type(item).__name__}")
    return out


def query_params(filters: Mapping[str, Any]) -> dict[str, str]:
    """Filters as the API reads them: lists joined by commas, booleans ``true``/``false``, days ISO."""
    params: dict[str, str] = {}
    for name, value in filters.items():
        if value is None:
            continue
        if isinstance(value, bool):
            params[name] = "true" if value else "false"
        elif isinstance(value, (list, tuple, set, frozenset)):
            params[name] = ",".join(str(v) for v in value)
        elif isinstance(value, (date, datetime)):
            params[name] = value.isoformat()
        else:
            params[name] = str(value)
    return params


class _Base:
    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        backoff: float = 0.5,
    ) -> None:
        base_url = base_url or os.environ.get("THEORIA_URL") or "http://127.0.0.1:8000"
        self.base_url = base_url.rstrip("/")
        self.token = token if token is not None else os.environ.get("THEORIA_TOKEN", "")
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.backoff = backoff

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "theoria-client/0.1"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        return headers

    def _wait_before(self, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None when it is not to be retried."""
        if attempt >= self.max_retries:
            return None
        hint = retry_after_seconds(response.headers.get("Retry-After")) if response is not None else None
        wait = hint if hint is not None else self.backoff * (2**attempt)
        return min(wait, self.max_retry_wait)

    @staticmethod
    def _safe_to_resend(method: str, headers: Mapping[str, str]) -> bool:
        return method in ("GET", "HEAD") or "Idempotency-Key" in headers

    @staticmethod
    def _result(response: httpx.Response) -> httpx.Response:
        if response.is_success:
            return response
        raise error_from_response(response, retry_after_seconds(response.headers.get("Retry-After")))

    @staticmethod
    def _audit_body(
        query: str,
        answer: str | None,
        contexts: Iterable[Any],
        mode: str | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "contexts": context_list(contexts)}
        if answer is not None:
            body["answer"] = answer
        if mode:
            body["mode"] = mode
        body.update({k: v for k, v in options.items() if v is not None})
        return body

    @staticmethod
    def _page(data: dict[str, Any], parse: Any) -> Page[Any]:
        return Page(
            count=int(data.get("count", 0)),
            results=[parse(item) for item in data.get("results", [])],
            next=data.get("next"),
            previous=data.get("previous"),
        )

    def _job_poll_wait(self, response: httpx.Response, interval: float, deadline: float) -> float:
        """Seconds before the next poll of a job: the server's ``Retry-After`` (else ``interval``),
        never past ``max_retry_wait`` nor the deadline."""
        hint = retry_after_seconds(response.headers.get("Retry-After"))
        wait = min(hint if hint is not None else interval, self.max_retry_wait)
        return max(0.0, min(wait, deadline - time.monotonic()))

    @staticmethod
    def _job_state(response: httpx.Response, deadline: float, timeout: float) -> Job:
        """The job a response carries; raises its error when it failed, ``TimeoutError`` when it
        is still waiting or running at the deadline."""
        job = Job.from_json(response.json())
        if job.status == "failed":
            raise error_from_job(job)
        if not job.finished and time.monotonic() >= deadline:
            raise TimeoutError(f"job {job.id}: still {job.status} after {timeout} s")
        return job

    @staticmethod
    def _job_path(job: Job | int) -> str:
        return f"/jobs/{job}" if isinstance(job, int) else job.url or f"/jobs/{job.id}"

    @staticmethod
    def _audit_of_job(job: Job, answer: dict[str, Any]) -> AuditResult:
        added = {name: job.result[name] for name in JOB_RESULT_FIELDS if name in job.result}
        return AuditResult.from_json({**answer, **added}, job=job.id)

    @staticmethod
    def _run_id(target: AuditResult | Run | int) -> int:
        if isinstance(target, int):
            return target
        if isinstance(target, Run):
            return target.id
        if target.audit is None or target.audit.run_id is None:
            raise ValueError(f"answer {target.answer_id} has no verification run (Normal mode)")
        return target.audit.run_id


class Theoria(_Base):
    """The synchronous client. ``Theoria(base_url, token)``; both default to ``THEORIA_URL`` and
    ``THEORIA_TOKEN``. Use it as a context manager, or call ``close()``."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        http: httpx.Client | None = None,
        **options: Any,
    ) -> None:
        super().__init__(base_url, token, **options)
        self._http = http or httpx.Client(timeout=self.timeout)

    def __enter__(self) -> Theoria:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request (``path`` under ``/api/v1``), retried as the module says; an error status raises."""
        all_headers = {**self._headers(), **(headers or {})}
        url = self.base_url + (path if path.startswith(API) else API + path)
        attempt = 0
        while True:
            try:
                response = self._http.request(method, url, json=json, params=params, headers=all_headers)
            except httpx.TransportError as error:
                wait = self._wait_before(attempt, None) if self._safe_to_resend(method, all_headers) else None
                if wait is None:
                    raise TransportError(f"{method} {url}: {error}") from error
            else:
                wait = (
                    self._wait_before(attempt, response) if response.status_code in RETRY_STATUSES else None
                )
                if wait is None:
                    return self._result(response)
            time.sleep(wait)
            attempt += 1

    def audit(
        self,
        query: str,
        answer: str | None = None,
        contexts: Iterable[Any] = (),
        mode: str | None = None,
        *,
        idempotency_key: str | None = None,
        wait_timeout: float = JOB_WAIT_TIMEOUT,
        poll_interval: float = JOB_POLL_INTERVAL,
        **options: Any,
    ) -> AuditResult:
        """Audit ``answer`` to ``query`` against ``contexts``; returns the answer with its claim cards.

        ``mode``: ``normal``, ``audit-local`` or ``audit-web`` (None: the server's default for the
        caller). ``options``: the other fields of ``POST /audits`` (``domain``, ``conversation_id``,
        ``reference``, ``answer_json``, ``verification_profile``, ``generation_mode``, ``deep``).
        An Idempotency-Key is made when none is given, so a retry never audits twice. An audit the
        server queued (202) is waited for (``wait_for_job``, at most ``wait_timeout`` seconds).
        """
        body = self._audit_body(query, answer, contexts, mode, options)
        key = idempotency_key or f"theoria-client-{uuid.uuid4()}"
        response = self.request("POST", "/audits", json=body, headers={"Idempotency-Key": key})
        if response.status_code == 202:
            job = self._follow_job(response, timeout=wait_timeout, interval=poll_interval)
            return self._audit_of_job(job, self.request("GET", f"/answers/{job.answer}").json())
        return AuditResult.from_json(
            response.json(), replayed=response.headers.get("Idempotent-Replayed") == "true"
        )

    def job(self, job_id: int) -> Job:
        """``GET /jobs/<id>``: a queued audit's or an upload's job, with its status and progress."""
        return Job.from_json(self.request("GET", self._job_path(job_id)).json())

    def wait_for_job(
        self, job: Job | int, *, timeout: float = JOB_WAIT_TIMEOUT, interval: float = JOB_POLL_INTERVAL
    ) -> Job:
        """Poll a job until it is done, waiting between polls as the server's ``Retry-After`` says
        (``interval`` when it sends none). A failed job raises the error its request would have
        raised inline; ``TimeoutError`` after ``timeout`` seconds."""
        return self._follow_job(self.request("GET", self._job_path(job)), timeout=timeout, interval=interval)

    def _follow_job(self, response: httpx.Response, *, timeout: float, interval: float) -> Job:
        deadline = time.monotonic() + timeout
        while not (job := self._job_state(response, deadline, timeout)).finished:
            time.sleep(self._job_poll_wait(response, interval, deadline))
            response = self.request("GET", self._job_path(job))
        return job

    def answer(self, answer_id: str) -> AuditResult:
        return AuditResult.from_json(self.request("GET", f"/answers/{answer_id}").json())

    def claim(self, answer_id: str, claim_id: str) -> ClaimCard:
        return ClaimCard.from_json(self.request("GET", f"/answers/{answer_id}/claims/{claim_id}").json())

    def claims(self, **filters: Any) -> Page[ClaimCard]:
        """One page of ``GET /claims`` (filters of docs/API.md §3: ``label``, ``confidence_max``, ``page``, …)."""
        data = self.request("GET", "/claims", params=query_params(filters)).json()
        return self._page(data, ClaimCard.from_json)

    def iter_claims(self, **filters: Any) -> Iterator[ClaimCard]:
        """Every claim card the filters select, page after page."""
        page = int(filters.pop("page", 1))
        while True:
            current = self.claims(page=page, **filters)
            yield from current
            if not current.next:
                return
            page += 1

    def run(self, run_id: int) -> Run:
        return Run.from_json(self.request("GET", f"/runs/{int(run_id)}").json())

    def case(self, ticket: str) -> Case:
        return Case.from_json(self.request("GET", f"/cases/{ticket}").json())

    def cases(self, **filters: Any) -> Page[Case]:
        """One page of the escalation queue (``tier``, ``status``, ``open``, ``owner``, ``order``, …)."""
        return self._page(self.request("GET", "/cases", params=query_params(filters)).json(), Case.from_json)

    def export_claim_cards(self, format: str = "json", **filters: Any) -> Any:
        """``GET /claim-cards/export``: a list of card objects (``json``) or the CSV text (``csv``)."""
        response = self.request(
            "GET", "/claim-cards/export", params=query_params({"format": format, **filters})
        )
        return response.json() if format == "json" else response.text

    def daily_bundle(self, day: date | str, format: str = "json") -> Any:
        """``GET /claim-cards/daily-bundle``: the day's low-confidence REFUTED/NEI cards."""
        params = query_params({"date": day, "format": format})
        response = self.request("GET", "/claim-cards/daily-bundle", params=params)
        return response.json() if format == "json" else response.text

    def wait_for_deep_checks(
        self, target: AuditResult | Run | int, *, timeout: float = 600.0, interval: float = 2.0
    ) -> Run:
        """Poll the run of an audit sent with ``deep="async"`` until its deep check is done or
        failed (or there is none); ``TimeoutError`` after ``timeout`` seconds."""
        run_id = self._run_id(target)
        deadline = time.monotonic() + timeout
        while True:
            run = self.run(run_id)
            if run.deep_check_status in ("", *DEEP_CHECK_ENDED):
                return run
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"run {run_id}: deep check still {run.deep_check_status} after {timeout} s"
                )
            time.sleep(interval)


class AsyncTheoria(_Base):
    """The asynchronous client: the same methods as ``Theoria``, awaited."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        http: httpx.AsyncClient | None = None,
        **options: Any,
    ) -> None:
        super().__init__(base_url, token, **options)
        self._http = http or httpx.AsyncClient(timeout=self.timeout)

    async def __aenter__(self) -> AsyncTheoria:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        all_headers = {**self._headers(), **(headers or {})}
        url = self.base_url + (path if path.startswith(API) else API + path)
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    method, url, json=json, params=params, headers=all_headers
                )
            except httpx.TransportError as error:
                wait = self._wait_before(attempt, None) if self._safe_to_resend(method, all_headers) else None
                if wait is None:
                    raise TransportError(f"{method} {url}: {error}") from error
            else:
                wait = (
                    self._wait_before(attempt, response) if response.status_code in RETRY_STATUSES else None
                )
                if wait is None:
                    return self._result(response)
            await asyncio.sleep(wait)
            attempt += 1

    async def audit(
        self,
        query: str,
        answer: str | None = None,
        contexts: Iterable[Any] = (),
        mode: str | None = None,
        *,
        idempotency_key: str | None = None,
        wait_timeout: float = JOB_WAIT_TIMEOUT,
        poll_interval: float = JOB_POLL_INTERVAL,
        **options: Any,
    ) -> AuditResult:
        body = self._audit_body(query, answer, contexts, mode, options)
        key = idempotency_key or f"theoria-client-{uuid.uuid4()}"
        response = await self.request("POST", "/audits", json=body, headers={"Idempotency-Key": key})
        if response.status_code == 202:
            job = await self._follow_job(response, timeout=wait_timeout, interval=poll_interval)
            return self._audit_of_job(job, (await self.request("GET", f"/answers/{job.answer}")).json())
        return AuditResult.from_json(
            response.json(), replayed=response.headers.get("Idempotent-Replayed") == "true"
        )

    async def job(self, job_id: int) -> Job:
        return Job.from_json((await self.request("GET", self._job_path(job_id))).json())

    async def wait_for_job(
        self, job: Job | int, *, timeout: float = JOB_WAIT_TIMEOUT, interval: float = JOB_POLL_INTERVAL
    ) -> Job:
        response = await self.request("GET", self._job_path(job))
        return await self._follow_job(response, timeout=timeout, interval=interval)

    async def _follow_job(self, response: httpx.Response, *, timeout: float, interval: float) -> Job:
        deadline = time.monotonic() + timeout
        while not (job := self._job_state(response, deadline, timeout)).finished:
            await asyncio.sleep(self._job_poll_wait(response, interval, deadline))
            response = await self.request("GET", self._job_path(job))
        return job

    async def answer(self, answer_id: str) -> AuditResult:
        return AuditResult.from_json((await self.request("GET", f"/answers/{answer_id}")).json())

    async def claim(self, answer_id: str, claim_id: str) -> ClaimCard:
        response = await self.request("GET", f"/answers/{answer_id}/claims/{claim_id}")
        return ClaimCard.from_json(response.json())

    async def claims(self, **filters: Any) -> Page[ClaimCard]:
        data = (await self.request("GET", "/claims", params=query_params(filters))).json()
        return self._page(data, ClaimCard.from_json)

    async def iter_claims(self, **filters: Any) -> AsyncIterator[ClaimCard]:
        page = int(filters.pop("page", 1))
        while True:
            current = await self.claims(page=page, **filters)
            for card in current:
                yield card
            if not current.next:
                return
            page += 1

    async def run(self, run_id: int) -> Run:
        return Run.from_json((await self.request("GET", f"/runs/{int(run_id)}")).json())

    async def case(self, ticket: str) -> Case:
        return Case.from_json((await self.request("GET", f"/cases/{ticket}")).json())

    async def cases(self, **filters: Any) -> Page[Case]:
        data = (await self.request("GET", "/cases", params=query_params(filters))).json()
        return self._page(data, Case.from_json)

    async def export_claim_cards(self, format: str = "json", **filters: Any) -> Any:
        params = query_params({"format": format, **filters})
        response = await self.request("GET", "/claim-cards/export", params=params)
        return response.json() if format == "json" else response.text

    async def daily_bundle(self, day: date | str, format: str = "json") -> Any:
        params = query_params({"date": day, "format": format})
        response = await self.request("GET", "/claim-cards/daily-bundle", params=params)
        return response.json() if format == "json" else response.text

    async def wait_for_deep_checks(
        self, target: AuditResult | Run | int, *, timeout: float = 600.0, interval: float = 2.0
    ) -> Run:
        run_id = self._run_id(target)
        deadline = time.monotonic() + timeout
        while True:
            run = await self.run(run_id)
            if run.deep_check_status in ("", *DEEP_CHECK_ENDED):
                return run
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"run {run_id}: deep check still {run.deep_check_status} after {timeout} s"
                )
            await asyncio.sleep(interval)
