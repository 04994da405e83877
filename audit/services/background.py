"""Work handed to the task queue instead of a web worker (``BackgroundJob``): an audit over the inline
cost budget, and (``audit.services.ingestion``) a document upload's ingestion.

``audit.services.submissions.audit_submit_or_queue`` decides, after the job of the request is built:
an audit within ``AUDIT_INLINE_COST_BUDGET`` runs now (201), one over it is stored as a queued job
(``audit.services.audit_queue``) and run here by django-q2 (202 with the job's URL,
``GET /api/v1/jobs/<id>``), the way deep checks are. The task runs ``audit_submit`` with the same
request and idempotency key, so a retry of the request after the job finished replays the stored
answer.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.errors import Busy, TheoriaError
from audit.models import BackgroundJob, BackgroundJobStatus, Workspace
from audit.services.audit_queue import background_job_enqueue
from audit.services.events import Actor, actor_user
from audit.services.ingestion import DocumentInput, IngestError, documents_ingest
from audit.services.submissions import AuditRequest, audit_submit

logger = logging.getLogger(__name__)


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
    with the write that stores it (``upload_ingestion_run``; ``audit.services.task_queue``)."""
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
        background_job_enqueue(job.pk)
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
