"""An audit over the inline cost budget, stored as a queued ``BackgroundJob`` and handed to the task
queue (django-q2): the request answers 202 with the job's URL (``GET /api/v1/jobs/<id>``) and
``audit.services.background`` runs it, the way deep checks are run."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from audit import constants
from audit.errors import Busy
from audit.models import BackgroundJob, BackgroundJobStatus, Workspace
from audit.pipeline.cost import AuditCost
from audit.services.job import AuditJob
from audit.services.task_queue import enqueue


def audit_queue(
    job: AuditJob, request: dict[str, Any], *, key: str, fingerprint: str, cost: AuditCost
) -> BackgroundJob:
    """Store the audit ``request`` (the service's request as a dict) of ``job`` (its workspace and
    the signed-in user who asked) as a queued job and hand it to the task queue once stored;
    ``Busy`` (429) past the user's ``QUEUED_AUDITS_PER_USER``. The job and its task are one write
    where the broker is the database (``audit.services.task_queue``)."""
    workspace, owner = job.workspace, job.user
    queue_room_check(workspace, owner)  # a full queue answers 429 without waiting for the write lock
    with transaction.atomic():
        queue_room_check(workspace, owner, locked=True)
        queued = BackgroundJob.objects.create(
            workspace=workspace,
            user=owner,
            kind=BackgroundJob.KIND_AUDIT,
            request=request,
            key=key,
            fingerprint=fingerprint,
            progress={"done": 0, "total": 1},
            result={"estimated_cost": cost.as_dict()},
        )
        background_job_enqueue(queued.pk)
    return queued


def queue_room_check(workspace: Workspace, user: User | None, *, locked: bool = False) -> None:
    """``Busy`` when ``user`` already has ``QUEUED_AUDITS_PER_USER`` audits queued or running.

    Asked without a lock before anything is computed for an answer that will surely be queued, and
    as the job is stored: first without a lock (a full queue answers at once), then ``locked`` in
    the transaction that stores it, with the user's row locked (PostgreSQL; SQLite's transactions
    take the write lock as they begin), so two requests at once cannot both take the last place."""
    if locked and user is not None:
        list(User.objects.select_for_update().filter(pk=user.pk).values_list("pk"))
    active = BackgroundJob.objects.filter(
        workspace=workspace,
        user=user,
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


def background_job_enqueue(job_id: int) -> None:
    """Hand the job to django-q2 (``audit.tasks.background_job``) with the write that stored it
    (``audit.services.task_queue``)."""
    enqueue("audit.tasks.background_job", job_id)
