"""Accuracy of the offline pipeline on the DEV benchmark, by grouped cross-validation (issue 3 §6)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.pipeline.cli import run_evaluate
from audit.pipeline.entailment_fit import BENCHMARKS_DIR


class Command(BaseCommand):
    help = ("Per dataset: accuracy, macro-F1 and balanced accuracy (2-class; 3-class on scifact) beside the "
            "keyword-overlap baseline, and the answer-level AUROC of (1 - faithfulness). Figures for the "
            "fitted entailment model come from grouped 5-fold cross-validation.")
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--claims", default=str(BENCHMARKS_DIR / "claims_dev.jsonl"))
        parser.add_argument("--answers", default=str(BENCHMARKS_DIR / "answers_dev.jsonl"))
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument("--claims-only", action="store_true",
                            help="skip the answer-level AUROC (the claims take about a quarter of the time)")

    def handle(self, *args, **options):
        code = run_evaluate(options["claims"], options["answers"], out=self.stdout._out,
                            err=self.stderr._out, n_folds=options["folds"],
                            with_answers=not options["claims_only"])
        if code:
            raise SystemExit(code)
