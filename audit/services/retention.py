"""Retention of audit data (docs/SPEC_NOTES.md#freshness-and-retention): purge what is older than the workspace's retention.

Audit data is the answers with their claims, evidence links, verification runs and nightly
work items (deleted together through the foreign keys), nightly reports, and audit events. The
jobs requests queued (``BackgroundJob``) are kept for ``BACKGROUND_JOB_RETENTION_DAYS`` only,
whatever the workspace's retention (``expired_jobs``).
A record is older than retention when its time stamp is strictly before ``now -
retention_days``; a record exactly at the cutoff is kept. What people still work on is kept,
however old: the answers and audit events the ``hooks.records_held`` receivers name (escalation:
the answers with a claim under an open case, and the open cases' own events). Every real purge writes one
``retention.purged`` audit event with the counts; a dry run writes nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from audit import constants, hooks
from audit.models import (
    Answer,
    AuditEvent,
    BackgroundJob,
    BackgroundJobStatus,
    Claim,
    Evidence,
    NightlyReport,
    VerificationRun,
    Workspace,
)
from audit.models.events import AuditEventQuerySet
from audit.services.events import event_record

logger = logging.getLogger(__name__)

SOURCE = "retention"


@dataclass
class PurgeResult:
    """What a purge deleted (or, for a dry run, would delete) in one workspace."""

    workspace: str
    cutoff: str
    dry_run: bool
    answers: int = 0
    claims: int = 0
    evidence: int = 0
    runs: int = 0
    nightly_reports: int = 0
    events: int = 0
    jobs: int = 0
    kept_for_open_cases: int = 0
    kept_answer_ids: list[int] = field(default_factory=list)

    def counts(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("kept_answer_ids")
        return data


def retention_days_of(workspace: Workspace) -> int:
    """The workspace's retention in days, held to ``RETENTION_DAYS_RANGE`` when read: a stored value
    outside it (written before the range was checked) can never overflow the cutoff arithmetic."""
    low, high = constants.RETENTION_DAYS_RANGE
    try:
        return min(high, max(low, int(workspace.retention_days)))
    except (TypeError, ValueError, OverflowError):
        return constants.DEFAULT_RETENTION_DAYS


def retention_cutoff(*, workspace: Workspace, now: dt.datetime) -> dt.datetime:
    """Return the instant before which the workspace's audit data has expired."""
    return now - dt.timedelta(days=retention_days_of(workspace))


def _protected(workspace: Workspace) -> tuple[set[int], set[int], set[tuple[str, str]]]:
    """Return (answer ids, claim ids, other audit-event keys) that people still work on in
    ``workspace`` (``hooks.records_held``: escalation's open cases)."""
    answer_ids, event_keys = hooks.records_held(workspace=workspace)
    claim_ids = set(Claim.objects.filter(answer_id__in=answer_ids).values_list("id", flat=True))
    return answer_ids, claim_ids, event_keys


def _expired_events(
    workspace: Workspace,
    cutoff: dt.datetime,
    answer_ids: set[int],
    claim_ids: set[int],
    event_keys: set[tuple[str, str]],
) -> AuditEventQuerySet:
    keep = Q(object_type="audit.answer", object_id__in=[str(i) for i in answer_ids])
    keep |= Q(object_type="audit.claim", object_id__in=[str(i) for i in claim_ids])
    for object_type in sorted({kind for kind, _ in event_keys}):
        keep |= Q(
            object_type=object_type, object_id__in=sorted(i for kind, i in event_keys if kind == object_type)
        )
    return AuditEvent.objects.filter(workspace=workspace, at__lt=cutoff).exclude(keep)


def expired_jobs(*, workspace: Workspace, now: dt.datetime) -> QuerySet[BackgroundJob]:
    """The workspace's queued jobs past ``BACKGROUND_JOB_RETENTION_DAYS``: finished (done or failed)
    before ``now`` minus that, or still queued or running though queued before it."""
    cutoff = now - dt.timedelta(days=constants.BACKGROUND_JOB_RETENTION_DAYS)
    active = (BackgroundJobStatus.QUEUED, BackgroundJobStatus.RUNNING)
    return BackgroundJob.objects.filter(workspace=workspace).filter(
        Q(finished_at__lt=cutoff) | Q(status__in=active, created_at__lt=cutoff)
    )


def retention_purge(
    *, workspace: Workspace, now: dt.datetime | None = None, dry_run: bool = False
) -> PurgeResult:
    """Delete (or count, when ``dry_run``) the workspace's audit data past retention.

    Runs in one transaction so a failure leaves everything in place. Answers go in batches of
    ``RETENTION_DELETE_BATCH`` so the cascade to claims and evidence stays bounded in memory.
    """
    now = now or timezone.now()
    cutoff = retention_cutoff(workspace=workspace, now=now)
    with transaction.atomic():
        answer_ids, claim_ids, event_keys = _protected(workspace)
        expired = Answer.objects.filter(workspace=workspace, created_at__lt=cutoff)
        result = PurgeResult(workspace=workspace.slug, cutoff=cutoff.isoformat(), dry_run=dry_run)
        result.kept_answer_ids = sorted(expired.filter(id__in=answer_ids).values_list("id", flat=True))
        result.kept_for_open_cases = len(result.kept_answer_ids)
        doomed = expired.exclude(id__in=answer_ids)
        doomed_ids = list(doomed.order_by("id").values_list("id", flat=True))
        result.answers = len(doomed_ids)
        result.claims = Claim.objects.filter(answer__in=doomed).count()
        result.evidence = Evidence.objects.filter(claim__answer__in=doomed).count()
        result.runs = VerificationRun.objects.filter(answer__in=doomed).count()
        reports = NightlyReport.objects.filter(workspace=workspace, date__lt=cutoff.date())
        result.nightly_reports = reports.count()
        events = _expired_events(workspace, cutoff, answer_ids, claim_ids, event_keys)
        result.events = events.count()
        jobs = expired_jobs(workspace=workspace, now=now)
        result.jobs = jobs.count()
        if dry_run:
            return result
        for start in range(0, len(doomed_ids), constants.RETENTION_DELETE_BATCH):
            Answer.objects.filter(
                id__in=doomed_ids[start : start + constants.RETENTION_DELETE_BATCH]
            ).delete()
        reports.delete()
        jobs.delete()
        events.purge_expired()  # the one sanctioned deletion of audit events
        event_record(
            action="retention.purged",
            obj=workspace,
            actor_label=SOURCE,
            workspace=workspace,
            details={
                **result.counts(),
                "retention_days": retention_days_of(workspace),
                "kept_answer_ids": result.kept_answer_ids[:100],
            },
        )
    logger.info("retention workspace=%s cutoff=%s %s", workspace.slug, result.cutoff, result.counts())
    return result


def retention_purge_all(
    *, now: dt.datetime | None = None, dry_run: bool = False, workspaces: QuerySet[Workspace] | None = None
) -> list[PurgeResult]:
    """Purge every workspace (or the given ones) under its own retention period."""
    now = now or timezone.now()
    qs = workspaces if workspaces is not None else Workspace.objects.all()
    return [retention_purge(workspace=ws, now=now, dry_run=dry_run) for ws in qs.order_by("id")]
