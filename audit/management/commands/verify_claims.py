"""Verify benchmark-format claims against their own evidence (docs/ARCHITECTURE.md); no database rows needed."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.evaluation.cli import run_verify_claims


class Command(BaseCommand):
    help = (
        "Read claims (shared/benchmarks claim format), verify each against its own evidence and write "
        '{"id", "label", "confidence"} per line, in input order.'
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, help="claims JSONL")
        parser.add_argument("--output", required=True, help="predictions JSONL to write")

    def handle(self, *args, **options):
        code = run_verify_claims(options["input"], options["output"], err=self.stderr._out)
        if code:
            raise SystemExit(code)
