"""Work handed to the task queue instead of a web worker (``BackgroundJob``): an audit over the inline
cost budget, and (``audit.services.ingestion``) a document upload's ingestion.

``audit_submit_or_queue`` is the one decision the API's audit view calls: it estimates the audit's
cost before anything is read (``audit_cost_estimate``); an audit within ``AUDIT_INLINE_COST_BUDGET``
runs now (``audit_submit``, 201), one over it is stored as a queued job and run by django-q2 (202 with
the job's URL, ``GET /api/v1/jobs/<id>``), the way deep checks are. The task runs the same
``audit_submit`` with the same idempotency key, so a retry of the request after the job finished
replays the stored answer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.errors import Busy, Conflict, TheoriaError
from audit.models import BackgroundJob, BackgroundJobStatus, IdempotencyKey, Workspace
from audit.pipeline.extraction import split_sentences
from audit.pipeline.structured import canonical_text
from audit.services.events import Actor, actor_user
from audit.services.idempotency import Submission
from audit.services.ingestion import DocumentInput, IngestError, documents_ingest
from audit.services.job import audit_job_build
from audit.services.submissions import AuditRequest, audit_submit

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AuditCost:
    """An audit's cost estimated from its size before anything is read (``audit_cost_estimate``)."""

    answer_chars: int
    evidence_chars: int
    sentences: int
    units: int

    @property
    def inline(self) -> bool:
        return self.units <= constants.AUDIT_INLINE_COST_BUDGET

    def as_dict(self) -> dict[str, int]:
        return {**dataclasses.asdict(self), "inline_budget": constants.AUDIT_INLINE_COST_BUDGET}


def audit_cost_estimate(request: AuditRequest) -> AuditCost:
    """The cost of auditing ``request``: the answer's characters up to the read budget (the pipeline
    reads no more), the evidence sent with it (``AUDIT_COST_EVIDENCE_WEIGHT`` a character: every
    passage is embedded and searched) and ``AUDIT_COST_PER_SENTENCE`` per sentence (the pipeline's own
    splitter, linear). A drafted answer (none sent) costs what its passages cost."""
    if request.answer_json is not None:
        text = canonical_text(request.answer_json)
    else:
        text = request.answer or ""
    evidence = sum(len(str(c.get("text") or "")) for c in request.contexts)
    sentences = len(split_sentences(text)) if text else 0
    units = (
        min(len(text), constants.AUDIT_READ_BUDGET_CHARS)
        + round(evidence * constants.AUDIT_COST_EVIDENCE_WEIGHT)
        + sentences * constants.AUDIT_COST_PER_SENTENCE
    )
    return AuditCost(answer_chars=len(text), evidence_chars=evidence, sentences=sentences, units=units)


def audit_submit_or_queue(
    *,
    workspace: Workspace,
    user: Actor,
    request: AuditRequest,
    idempotency_key: str = "",
    fingerprint: str = "",
) -> Submission | BackgroundJob:
    """Audit now (a ``Submission``) or queue the audit (a ``BackgroundJob``), by its estimated cost.

    Audited now, by ``audit_submit`` (which refuses, replays or audits): an answer over
    ``MAX_ANSWER_CHARS`` (its 413, one wording), a retried key whose answer is stored, a Normal
    answer (recorded, not read), an anonymous caller and an audit within the budget. A retried key
    of a queued audit gets its job (the same body; another body is 409). A user holds at most
    ``QUEUED_AUDITS_PER_USER`` queued or running audits (429 with Retry-After).
    """
    owner = actor_user(user)
    too_long = request.answer is not None and len(request.answer) > constants.MAX_ANSWER_CHARS
    stored = (
        bool(idempotency_key)
        and IdempotencyKey.objects.filter(workspace=workspace, user=owner, key=idempotency_key).exists()
    )
    # a key whose audit finished replays its stored answer; one still queued, its job
    queued = (
        None
        if too_long or stored
        else _queued_replay(workspace=workspace, owner=owner, key=idempotency_key, fingerprint=fingerprint)
    )
    if queued is not None:
        return queued
    # the cheapest refusals first: no estimate of an answer refused for its size
    cost = None if too_long or stored else audit_cost_estimate(request)
    if cost is None or cost.inline or owner is None or request.mode == constants.MODE_NORMAL:
        return audit_submit(
            workspace=workspace,
            user=user,
            request=request,
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
        )
    _queue_place_check(workspace=workspace, owner=owner)  # 429 before the claims are counted
    if request.answer is not None:  # the claims cap's 413 comes now, not from the queue
        audit_job_build(
            workspace,
            user=owner,
            query=request.query,
            answer_text=request.answer,
            domain=request.domain,
            profile=request.verification_profile,
            offline="the claims are counted before the audit is queued",
        ).with_claims()
    return _audit_queue(
        workspace=workspace,
        owner=owner,
        request=request,
        key=idempotency_key,
        fingerprint=fingerprint,
        cost=cost,
    )


def _queue_place_check(*, workspace: Workspace, owner: Any) -> None:
    """Refuse (429 with Retry-After) a user who already has ``QUEUED_AUDITS_PER_USER`` queued or
    running audits: checked before anything of the answer is read beyond its cost estimate."""
    active = BackgroundJob.objects.filter(
        workspace=workspace,
        user=owner,
        kind=BackgroundJob.KIND_AUDIT,
        status__in=(BackgroundJobStatus.QUEUED, BackgroundJobStatus.RUNNING),
    ).count()
    if active >= constants.QUEUED_AUDITS_PER_USER:
        raise Busy(
            "answer",
            f"you already have {active} queued audit(s) waiting or running (at most "
            f"{constants.QUEUED_AUDITS_PER_USER}, QUEUED_AUDITS_PER_USER); send this one when one has finished.",
            retry_after=constants.QUEUED_AUDIT_RETRY_AFTER_S,
        )


def _audit_queue(
    *, workspace: Workspace, owner: Any, request: AuditRequest, key: str, fingerprint: str, cost: AuditCost
) -> BackgroundJob:
    """Store the audit as a queued job and hand it to the task queue once stored (the user's place
    was checked by ``_queue_place_check``)."""
    with transaction.atomic():
        job = BackgroundJob.objects.create(
            workspace=workspace,
            user=owner,
            kind=BackgroundJob.KIND_AUDIT,
            request=dataclasses.asdict(request),
            key=key,
            fingerprint=fingerprint,
            progress={"done": 0, "total": 1},
            result={"estimated_cost": cost.as_dict()},
        )
        transaction.on_commit(lambda: background_job_enqueue(job.pk))
    return job


def _queued_replay(*, workspace: Workspace, owner: Any, key: str, fingerprint: str) -> BackgroundJob | None:
    """The job a retried key queued (the same body; another body is 409); None for any other key."""
    if not key or owner is None:
        return None
    queued = BackgroundJob.objects.filter(
        workspace=workspace, user=owner, kind=BackgroundJob.KIND_AUDIT, key=key
    ).first()
    if queued is not None and queued.fingerprint != fingerprint:
        raise Conflict(f'Idempotency-Key "{key}" was already used with a different request body.')
    return queued


def background_job_enqueue(job_id: int) -> None:
    """Hand the job to django-q2 (``audit.tasks.background_job``)."""
    from django_q.tasks import async_task

    async_task("audit.tasks.background_job", job_id)


def _finish(job: BackgroundJob, **fields: Any) -> BackgroundJob:
    for name, value in fields.items():
        setattr(job, name, value)
    job.finished_at = timezone.now()
    job.save()
    return job


def background_audit_run(job: BackgroundJob) -> BackgroundJob:
    """Run a queued audit: ``audit_submit`` with the stored request and key; the job ends ``done``
    with its answer, or ``failed`` with the error's sentence and the status it would have had inline.
    The user's expensive-audit slot is waited for (another of their audits runs on another worker)."""
    request = AuditRequest(**job.request)
    user = job.user
    deadline = time.monotonic() + constants.EXPENSIVE_AUDIT_SLOT_S
    while True:
        try:
            submission = audit_submit(
                workspace=job.workspace,
                user=user,
                request=request,
                idempotency_key=job.key,
                fingerprint=job.fingerprint,
            )
            break
        except Busy:
            if time.monotonic() > deadline:
                raise
            time.sleep(constants.EXPENSIVE_AUDIT_RETRY_AFTER_S)
    answer = submission.answer
    return _finish(
        job,
        status=BackgroundJobStatus.DONE,
        answer=answer,
        progress={"done": 1, "total": 1},
        result={
            **job.result,
            "answer": answer.public_id,
            "mode_decision": submission.decision,
            "web": submission.web,
            "drafted": submission.drafted,
        },
    )


def background_job_run(job_id: int) -> BackgroundJob | None:
    """The task: run one queued job once (a job no longer queued is left as it is)."""
    claimed = BackgroundJob.objects.filter(pk=job_id, status=BackgroundJobStatus.QUEUED).update(
        status=BackgroundJobStatus.RUNNING, started_at=timezone.now()
    )
    job = BackgroundJob.objects.select_related("workspace", "user").filter(pk=job_id).first()
    if not claimed or job is None:
        return job
    try:
        if job.kind == BackgroundJob.KIND_INGESTION:
            return upload_ingestion_run(job)
        return background_audit_run(job)
    except IngestError as error:
        return _finish(
            job, status=BackgroundJobStatus.FAILED, error=f"cannot be ingested: {error}.", error_status=400
        )
    except TheoriaError as error:
        return _finish(
            job,
            status=BackgroundJobStatus.FAILED,
            error=str(error),
            error_status=getattr(error, "status_code", 400),
        )
    except Exception:
        logger.exception("background job %s failed", job_id)
        return _finish(
            job,
            status=BackgroundJobStatus.FAILED,
            error="The job failed with an unexpected error; the server log has its details.",
            error_status=500,
        )


def upload_ingestion_queue(
    *, workspace: Workspace, user: Actor, docs: list[DocumentInput], source: str
) -> BackgroundJob:
    """Store an upload's parsed documents as a queued ingestion job and hand it to the task queue
    once the caller's transaction commits (``upload_ingestion_run``)."""
    rows = [
        {**dataclasses.asdict(d), "published_at": d.published_at.isoformat() if d.published_at else None}
        for d in docs
    ]
    with transaction.atomic():
        job = BackgroundJob.objects.create(
            workspace=workspace,
            user=actor_user(user),
            kind=BackgroundJob.KIND_INGESTION,
            request={"source": source, "documents": rows},
            progress={"done": 0, "total": len(rows)},
            result={"created": 0, "updated": 0, "unchanged": 0},
        )
        transaction.on_commit(lambda: background_job_enqueue(job.pk))
    return job


def upload_ingestion_run(job: BackgroundJob) -> BackgroundJob:
    """Ingest a queued upload ``INGEST_BATCH_DOCUMENTS`` documents per transaction, the job's
    progress and counts written after each batch: a failure keeps what earlier batches stored and
    says so (``progress.done``); the upload sent again changes nothing already stored."""
    rows = list(job.request.get("documents") or [])
    docs = [
        DocumentInput(
            **{
                **row,
                "published_at": dt.date.fromisoformat(row["published_at"])
                if row.get("published_at")
                else None,
            }
        )
        for row in rows
    ]
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    ids: list[int] = []
    size = constants.INGEST_BATCH_DOCUMENTS
    for start in range(0, len(docs), size):
        results = documents_ingest(workspace=job.workspace, docs=docs[start : start + size], actor=job.user)
        for document, outcome in results:
            counts[outcome] = counts.get(outcome, 0) + 1
            ids.append(document.pk)
        job.progress = {"done": min(start + size, len(docs)), "total": len(docs)}
        job.result = {**counts, "documents": ids[: constants.INGEST_BATCH_DOCUMENTS]}  # the first ones
        job.save(update_fields=["progress", "result"])
    return _finish(job, status=BackgroundJobStatus.DONE, request={"source": job.request.get("source", "")})
