"""Purge audit data older than each workspace's retention (docs/SPEC_NOTES.md#freshness-and-retention)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.management.workspace_option import workspace_from_option
from audit.models import Workspace
from audit.services.retention import retention_purge_all


class Command(BaseCommand):
    help = (
        "Delete answers, claims, evidence, runs, nightly reports and audit events older than the workspace's "
        "retention (default 90 days), keeping everything tied to an open escalation case, and the jobs requests "
        "queued past BACKGROUND_JOB_RETENTION_DAYS. One audit event per purge. --dry-run only counts."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="count what would be deleted; delete nothing"
        )
        parser.add_argument("--workspace", default="", help="workspace slug (default: every workspace)")

    def handle(self, *args, **options):
        workspaces = Workspace.objects.all()
        if options["workspace"]:
            workspaces = workspaces.filter(pk=workspace_from_option(options["workspace"]).pk)
        verb = "would delete" if options["dry_run"] else "deleted"
        for result in retention_purge_all(workspaces=workspaces, dry_run=options["dry_run"]):
            self.stdout.write(
                f"{result.workspace}: {verb} {result.answers} answers, {result.claims} claims, "
                f"{result.evidence} evidence links, {result.runs} runs, {result.nightly_reports} nightly reports, "
                f"{result.events} audit events older than {result.cutoff}, {result.jobs} queued jobs past their "
                f"retention; kept {result.kept_for_open_cases} "
                f"answers with an open escalation case."
            )
