"""Fit the offline entailment model on the DEV claims and write audit/pipeline/artifacts/entailment_model.json."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.evaluation.entailment_fit import DEFAULT_CLAIMS, main


class Command(BaseCommand):
    help = (
        "Featurise claims_dev.jsonl (embeddings cached under var/), print grouped 5-fold CV figures and "
        "write the model fitted on all rows to audit/pipeline/artifacts/entailment_model.json."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--input", default=str(DEFAULT_CLAIMS))
        parser.add_argument("--no-write", action="store_true", help="report CV figures only")

    def handle(self, *args, **options):
        argv = ["--input", options["input"]] + (["--no-write"] if options["no_write"] else [])
        code = main(argv)
        if code:
            raise SystemExit(code)
