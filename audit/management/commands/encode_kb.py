"""Encode and parse the knowledge base's sentences that no ingestion stored (an upgrade, a new encoder
or parser)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand
from tqdm import tqdm

from audit.management.workspace_option import workspace_from_option
from audit.services.ingestion import kb_encodings_fill, kb_encodings_prune


class Command(BaseCommand):
    help = (
        "Encode and parse, and store, the sentences of every knowledge-base chunk that ingestion has not "
        "stored (after an upgrade or a change of encoder or parser), so audits read them instead of "
        "computing them."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", default="", help="workspace slug (default: every workspace)")
        parser.add_argument(
            "--prune",
            action="store_true",
            help="also delete the encodings and parses no chunk reads: another encoder or parser version's, and "
            "those of sentences no chunk holds any more (deleted or changed documents)",
        )

    def handle(self, *args, **options):
        workspace = workspace_from_option(options["workspace"]) if options["workspace"] else None
        bar = tqdm(desc="chunks", unit="chunk", file=sys.stderr, disable=options["verbosity"] == 0)
        try:
            encoded, parsed = kb_encodings_fill(workspace=workspace, progress=bar.update)
        finally:
            bar.close()
        pruned = kb_encodings_prune() if options["prune"] else 0
        self.stdout.write(
            f"{encoded} sentences encoded and {parsed} parsed and stored"
            + (f", {pruned} encodings and parses no chunk reads deleted" if options["prune"] else "")
            + "."
        )
