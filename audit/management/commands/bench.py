"""Latency of Audit-Local against a synthetic knowledge base (issue 3 §6)."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.constants import JUDGE, JUDGES
from audit.pipeline.cli import run_bench


class Command(BaseCommand):
    help = ("Build (or reuse, cached under var/) a synthetic knowledge base of N chunks, audit M answers of about "
            "10 claims in Audit-Local and print p50/p95 latency, claims per second and peak memory; the last "
            "line is one JSON object with p50_ms, p95_ms, claims_per_s, peak_mb, chunks.")
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--answers", type=int, default=30)
        parser.add_argument("--claims", type=int, default=10, help="claims per answer")
        parser.add_argument("--depth", choices=("full", "fast"), default=None,
                            help="verification depth (default: the thresholds' default, full)")
        parser.add_argument("--judge", choices=JUDGES, default=None,
                            help=f"entailment judge (default {JUDGE})")

    def handle(self, *args, **options):
        run_bench(options["chunks"], options["answers"], options["claims"], depth=options["depth"],
                  judge=options["judge"],
                  out=self.stdout._out,
                  err=self.stderr._out)
