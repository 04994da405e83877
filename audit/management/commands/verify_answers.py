"""Audit benchmark-format answers against their contexts (docs/ARCHITECTURE.md); no database rows needed."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.evaluation.cli import run_verify_answers


class Command(BaseCommand):
    help = (
        "Read answers (shared/benchmarks answer format), audit each against its contexts and write "
        '{"id", "faithfulness", "audit_score", "flagged", "claims": [...]} per line.'
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, help="answers JSONL")
        parser.add_argument("--output", required=True, help="results JSONL to write")

    def handle(self, *args, **options):
        code = run_verify_answers(options["input"], options["output"], err=self.stderr._out)
        if code:
            raise SystemExit(code)
