"""django-q2 entry points of the audit domain: each loads by id and calls one service."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from audit.models import ReviewedExample, Workspace
from audit.selectors.learning import calibration_versions
from audit.services.background import background_job_run
from audit.services.calibration import calibration_run
from audit.services.deep_checks import deep_check_run
from audit.services.ingestion import kb_encodings_prune as encodings_prune
from audit.services.nightly import nightly_audit_run
from audit.services.retention import retention_purge_all
from audit.services.review_drift import review_drift_check as drift_check
from audit.services.web_client import web_cache_purge as purge


def nightly_audit(workspace_id: int | None = None, date: str | None = None) -> list[dict]:
    """Run the nightly auditor for one workspace (or all) on ``date`` (default: yesterday, UTC)."""
    day = dt.date.fromisoformat(date) if date else timezone.now().date() - dt.timedelta(days=1)
    workspaces = Workspace.objects.order_by("id")
    if workspace_id is not None:
        workspaces = workspaces.filter(id=workspace_id)
    out = []
    for workspace in workspaces:
        outcome = nightly_audit_run(workspace=workspace, day=day)
        out.append(
            {
                "workspace": workspace.slug,
                "date": day.isoformat(),
                "report": outcome.report.id,
                "processed_now": outcome.processed_now,
                "claims_per_s": round(outcome.claims_per_s, 1),
            }
        )
    return out


def purge_expired(workspace_id: int | None = None) -> list[dict]:
    """Purge audit data past each workspace's retention."""
    workspaces = Workspace.objects.all()
    if workspace_id is not None:
        workspaces = workspaces.filter(id=workspace_id)
    return [r.counts() for r in retention_purge_all(workspaces=workspaces)]


def web_cache_purge() -> int:
    """Delete expired Audit-Web cache entries."""
    return purge()


def kb_encodings_prune() -> int:
    """Delete the sentence encodings no knowledge-base chunk reads any more."""
    return encodings_prune()


def deep_check(run_id: int) -> dict:
    """Run the asynchronous deep check (LLM methods) of one verification run (docs/LLM.md)."""
    run = deep_check_run(run_id=run_id)
    return {
        "run": run.pk,
        "status": run.deep_checks.get("status"),
        "relabels": len(run.deep_checks.get("relabels", [])),
    }


def _workspaces(workspace_id: int | None):
    workspaces = Workspace.objects.order_by("id")
    return workspaces.filter(id=workspace_id) if workspace_id is not None else workspaces


def calibrate_workspaces(workspace_id: int | None = None) -> list[dict]:
    """Refit the calibration of each workspace (or one) that has reviewed decisions newer than its last fit."""
    out = []
    for workspace in _workspaces(workspace_id):
        newest = ReviewedExample.objects.filter(workspace=workspace).order_by("-decided_at").first()
        last = calibration_versions(workspace=workspace).first()
        if newest is None or (last is not None and newest.decided_at <= last.fitted_at):
            out.append({"workspace": workspace.slug, "outcome": "no new decisions"})
            continue
        report = calibration_run(workspace=workspace, actor_label="calibration_schedule")
        out.append({"workspace": workspace.slug, "outcome": report.outcome, "message": report.message})
    return out


def calibrate_workspace(workspace_id: int, actor_id: int | None = None) -> dict:
    """Refit one workspace's calibration now (the admin's "Recalibrate now", ``POST /calibration/run``)."""
    from django.contrib.auth import get_user_model

    workspace = Workspace.objects.get(pk=workspace_id)
    actor = get_user_model().objects.filter(pk=actor_id).first() if actor_id is not None else None
    report = calibration_run(
        workspace=workspace, actor=actor, actor_label="" if actor else "calibration_task"
    )
    return {"workspace": workspace.slug, "outcome": report.outcome, "message": report.message}


def review_drift_check(workspace_id: int | None = None) -> list[dict]:
    """Alert on the domains whose reviewers agree less with the machine (each workspace, or one)."""
    return [
        {"workspace": workspace.slug, "alerts": drift_check(workspace=workspace)}
        for workspace in _workspaces(workspace_id)
    ]


def background_job(job_id: int) -> dict:
    """Run one job a request queued (an audit over the inline cost budget)."""
    job = background_job_run(job_id)
    return {"job": job_id, "status": job.status if job is not None else "missing"}
