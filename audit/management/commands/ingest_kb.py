"""Ingest files and folders into a workspace's knowledge base (idempotent)."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from audit.management.workspace_option import workspace_from_option
from audit.services.ingestion import ingest_paths
from audit.services.workspaces import workspace_get_default


class Command(BaseCommand):
    help = (
        "Ingest .txt, .md, .html and .jsonl files (or folders of them) into the knowledge base. "
        "Unchanged documents are left alone; changed ones are re-chunked and re-embedded."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="files or folders")
        parser.add_argument("--workspace", default="", help="workspace slug (default: the default workspace)")
        parser.add_argument(
            "--domain", default=None, help="domain tag for every document (e.g. neuroscience)"
        )
        parser.add_argument("--chunk-size", type=int, default=None, help="characters per chunk")
        parser.add_argument("--overlap", type=int, default=None, help="characters of overlap between chunks")

    def handle(self, *args, **options):
        if options["workspace"]:
            workspace = workspace_from_option(options["workspace"])
        else:
            workspace = workspace_get_default()
        bar = tqdm(desc="documents", unit="doc", file=sys.stderr, disable=options["verbosity"] == 0)
        try:
            report = ingest_paths(
                workspace=workspace,
                paths=options["paths"],
                domain=options["domain"],
                chunk_size=options["chunk_size"],
                chunk_overlap=options["overlap"],
                progress=bar.update,
            )
        except ValueError as exc:  # bad chunking parameters
            raise CommandError(f"{exc}.") from None
        finally:
            bar.close()
        for source, reason in report.failures:
            self.stderr.write(f"{source}: not ingested: {reason}.")
        self.stdout.write(
            f"{report.created} created, {report.updated} updated, {report.unchanged} unchanged, "
            f"{report.chunks} chunks written, {report.encoded} new chunk sentences encoded for the judge "
            f"and {report.parsed} parsed for the role binding, {len(report.failures)} failed."
        )
        if report.failures:
            raise CommandError(f"{len(report.failures)} file(s) could not be ingested.")
