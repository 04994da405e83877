"""django-q2 entry points of the audit domain: each loads by id and calls one service."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from audit.models import Workspace
from audit.services.deep_checks import deep_check_run
from audit.services.nightly import nightly_audit_run
from audit.services.retention import retention_purge_all
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


def deep_check(run_id: int) -> dict:
    """Run the asynchronous deep check (LLM methods) of one verification run (docs/LLM.md)."""
    run = deep_check_run(run_id=run_id)
    return {
        "run": run.pk,
        "status": run.deep_checks.get("status"),
        "relabels": len(run.deep_checks.get("relabels", [])),
    }
