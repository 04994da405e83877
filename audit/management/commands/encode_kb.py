"""Encode the knowledge base's sentences that no ingestion stored (an upgrade, a new encoder)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand
from tqdm import tqdm

from audit.management.workspace_option import workspace_from_option
from audit.services.ingestion import kb_encodings_fill, kb_encodings_prune


class Command(BaseCommand):
    help = (
        "Encode and store the sentences of every knowledge-base chunk that ingestion has not stored "
        "(after an upgrade or a change of encoder), so audits read them instead of encoding them."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", default="", help="workspace slug (default: every workspace)")
        parser.add_argument(
            "--prune",
            action="store_true",
            help="also delete the encodings no chunk reads: another encoder version's, and those of sentences "
            "no chunk holds any more (deleted or changed documents)",
        )

    def handle(self, *args, **options):
        workspace = workspace_from_option(options["workspace"]) if options["workspace"] else None
        bar = tqdm(desc="chunks", unit="chunk", file=sys.stderr, disable=options["verbosity"] == 0)
        try:
            encoded = kb_encodings_fill(workspace=workspace, progress=bar.update)
        finally:
            bar.close()
        pruned = kb_encodings_prune() if options["prune"] else 0
        self.stdout.write(
            f"{encoded} sentences encoded and stored"
            + (f", {pruned} encodings no chunk reads deleted" if options["prune"] else "")
            + "."
        )
