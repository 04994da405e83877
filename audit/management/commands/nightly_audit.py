"""Re-check the day's weak claims and write the nightly report (docs/SPEC_NOTES.md#nightly-auditor); or benchmark it."""

from __future__ import annotations

import datetime as dt
import json
import sys

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from audit import constants
from audit.evaluation.nightly_bench import bench_seed
from audit.management.workspace_option import workspace_from_option
from audit.models import Workspace
from audit.services.nightly import nightly_audit_run


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--date must be a day written YYYY-MM-DD, not {value!r}.") from None


class Command(BaseCommand):
    help = (
        "Re-verify the day's REFUTED/NEI claims below the low-confidence threshold against the refreshed "
        "knowledge base, record label drift and write the nightly report. Safe to re-run; resumes after a crash. "
        "With --bench N, seed N synthetic weak claims in a scratch workspace and print claims per second."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--date", default="", help="the day to re-check, YYYY-MM-DD (default: yesterday, UTC)"
        )
        parser.add_argument("--workspace", default="", help="workspace slug (default: every workspace)")
        parser.add_argument(
            "--batch-size",
            type=int,
            default=constants.NIGHTLY_BATCH_SIZE,
            help="claims embedded, searched and committed together",
        )
        parser.add_argument(
            "--depth",
            choices=constants.VERIFICATION_DEPTHS,
            default=None,
            help="verification depth for this run (default: the workspace's verification_depth)",
        )
        parser.add_argument(
            "--bench",
            type=int,
            default=0,
            metavar="N",
            help="seed N synthetic weak claims in the 'nightly-bench' workspace and time the run",
        )
        parser.add_argument(
            "--bench-chunks", type=int, default=2000, help="knowledge-base chunks for --bench"
        )

    def handle(self, *args, **options):
        if options["batch_size"] < 1:
            raise CommandError("--batch-size must be at least 1.")
        if options["bench"] < 0 or options["bench_chunks"] < 1:
            raise CommandError("--bench and --bench-chunks must be positive.")
        day = _date(options["date"]) if options["date"] else timezone.now().date() - dt.timedelta(days=1)
        if options["bench"]:
            self.stderr.write(
                f"seeding {options['bench']} weak claims and {options['bench_chunks']} chunks ..."
            )
            workspace = bench_seed(claims=options["bench"], chunks=options["bench_chunks"], day=day)
            workspaces = [workspace]
        elif options["workspace"]:
            workspaces = [workspace_from_option(options["workspace"])]
        else:
            workspaces = list(Workspace.objects.order_by("id"))
        quiet = options["verbosity"] == 0
        for workspace in workspaces:
            bar = tqdm(desc=f"nightly {workspace.slug} {day}", unit="claim", file=sys.stderr, disable=quiet)

            def progress(done: int, total: int, bar=bar) -> None:
                bar.total = total
                bar.n = done
                bar.refresh()

            try:
                outcome = nightly_audit_run(
                    workspace=workspace,
                    day=day,
                    batch_size=options["batch_size"],
                    depth=options["depth"],
                    progress=progress,
                )
            finally:
                bar.close()
            report = outcome.report
            if outcome.already_done:
                self.stdout.write(
                    f"{workspace.slug} {day}: already done ({report.claims_processed} claims); nothing to do."
                )
                continue
            counts = report.report.get("counts", {})
            self.stdout.write(
                f"{workspace.slug} {day}: {report.claims_selected} selected, {outcome.processed_now} processed now "
                f"({report.claims_processed} in total), {report.labels_changed} labels changed, "
                f"{counts.get('review_recommended', 0)} for human review, {counts.get('stale_sources', 0)} stale sources; "
                f"{outcome.seconds:.1f} s, {outcome.claims_per_s:.1f} claims/s "
                f"(retrieve {outcome.stages['retrieve']:.1f} s, verify {outcome.stages['verify']:.1f} s, "
                f"store {outcome.stages['store']:.1f} s; depth {report.report['figures']['verification_depth']})"
            )
            if options["bench"]:
                self.stdout.write(
                    json.dumps(
                        {
                            "claims": outcome.processed_now,
                            "seconds": round(outcome.seconds, 2),
                            "claims_per_s": round(outcome.claims_per_s, 1),
                            **report.report["figures"],
                            "retrieve_claims_per_s": round(
                                outcome.processed_now / max(outcome.stages["retrieve"], 1e-9), 1
                            ),
                        }
                    )
                )
