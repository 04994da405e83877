"""Give the default workspace a month of demo history (verdicts by the real pipeline); idempotent."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from audit.management.workspace_option import workspace_from_option
from audit.services.workspaces import workspace_get_default
from showcase.history import history_seed


class Command(BaseCommand):
    help = (
        "Add DAYS days of demo history before today (answers, claim verdicts, review cases across tiers "
        "with breaches and relabels, nightly reports) to a workspace; days already seeded are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=30, help="how many past days to fill (default 30)")
        parser.add_argument("--workspace", default="", help="workspace slug (default: the default workspace)")
        parser.add_argument(
            "--no-nightly", action="store_true", help="skip the nightly audit of each new day"
        )

    def handle(self, *args, **options):
        if not 1 <= options["days"] <= 366:
            raise CommandError("--days must be between 1 and 366.")
        workspace = (
            workspace_from_option(options["workspace"]) if options["workspace"] else workspace_get_default()
        )
        bar = tqdm(desc="demo history", unit="day", file=sys.stderr, disable=options["verbosity"] == 0)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            outcome = history_seed(
                workspace=workspace,
                days=options["days"],
                nightly=not options["no_nightly"],
                progress=progress,
            )
        except ValueError as exc:
            raise CommandError(f"No history was added: {exc}.") from None
        finally:
            bar.close()
        self.stdout.write(
            f"Demo history: {outcome.days_added} days added ({outcome.days_present} already there), "
            f"{outcome.answers} answers, {outcome.claims} claims, {outcome.cases} cases, "
            f"{outcome.nightly_reports} nightly reports in {outcome.seconds} s."
        )
