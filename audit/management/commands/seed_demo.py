"""Send the demo answers through the same path as the API, once (idempotent), so the pages have data."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from audit.errors import InvalidInput
from audit.models import Answer
from audit.models.choices import RevisionApproval
from audit.services.modes import workspace_settings_update
from audit.services.submissions import AuditRequest, audit_submit
from audit.services.workspaces import workspace_get_default


class Command(BaseCommand):
    help = (
        "Audit each answer of a JSONL file ({query, answer, contexts?, mode?, domain?}) as the API would "
        "(mode resolution, verification, revision, escalation intake), unless it is already stored."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="JSONL file of demo answers")
        parser.add_argument(
            "--hold-revisions",
            action="append",
            default=[],
            metavar="DOMAIN",
            help="on the first run, hold the revisions of answers in DOMAIN for a person's approval "
            "(the workspace's revision_approval; repeatable), so the demo shows proposals",
        )
        parser.add_argument(
            "--username",
            default="",
            help="the user the demo answers are submitted as (default: none; the audit trail says 'system')",
        )

    def handle(self, *args, **options):
        path = Path(options["path"])
        if not path.is_file():
            raise CommandError(f"{path} does not exist.")
        workspace = workspace_get_default()
        user = None
        if options["username"]:
            user = get_user_model().objects.filter(username=options["username"]).first()
            if user is None:
                raise CommandError(f"No user is called {options['username']!r}.")
        if options["hold_revisions"] and not Answer.objects.filter(workspace=workspace).exists():
            workspace_settings_update(
                workspace=workspace,
                actor=user,
                revision_approval=RevisionApproval.REGULATED,
                revision_approval_domains=sorted({d.strip().lower() for d in options["hold_revisions"]}),
            )
            workspace.refresh_from_db()
        audited = skipped = cases = 0
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                request = AuditRequest(
                    query=row["query"],
                    answer=row["answer"],
                    contexts=row.get("contexts", []),
                    mode=row.get("mode", ""),
                    domain=row.get("domain", ""),
                )
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise CommandError(f"{path} line {number} is not a demo answer ({exc}).") from None
            if Answer.objects.filter(
                workspace=workspace, query=request.query, original_text=request.answer
            ).exists():
                skipped += 1
                continue
            try:
                submission = audit_submit(workspace=workspace, user=user, request=request)
            except InvalidInput as exc:
                raise CommandError(f"{path} line {number}: {exc}.") from None
            cases += submission.answer.claims.filter(review_cases__isnull=False).distinct().count()
            audited += 1
        self.stdout.write(
            f"Demo answers: {audited} audited, {skipped} already stored, {cases} claims in review."
        )
