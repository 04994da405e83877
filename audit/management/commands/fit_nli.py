"""Build the NLI judge from the data: train the cross-encoder, measure it, stack it on DEV (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import os

os.environ.setdefault(
    "OMP_WAIT_POLICY", "PASSIVE"
)  # before torch loads: idle threads sleep on a shared machine

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.constants import NLI_FAST_SENTENCES, NLI_FAST_WINDOWS
from audit.evaluation.entailment_fit import DEFAULT_CLAIMS
from audit.evaluation.nli_data import NLI_DIR


class Command(BaseCommand):
    help = (
        "Train the NLI cross-encoder on the public entailment pairs (THEORIA_NLI_DIR) and generated minimal "
        "pairs, score its held-out parts, fit and calibrate the stacker on the DEV claims by grouped CV, and "
        "write audit/pipeline/artifacts/nli/. Resumable: checkpoints under var/nli/."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--claims", default=str(DEFAULT_CLAIMS))
        parser.add_argument("--nli-dir", default=str(NLI_DIR))
        parser.add_argument(
            "--max-minutes",
            type=float,
            default=None,
            help="stop training at the next checkpoint once this many minutes are spent (run again to go on)",
        )
        parser.add_argument(
            "--no-write", action="store_true", help="measure only; artefacts go to var/nli/export"
        )
        parser.add_argument(
            "--stacker-only",
            action="store_true",
            help="keep the shipped cross-encoder; refit the stacker on DEV and rewrite the model card",
        )
        parser.add_argument(
            "--attribution",
            action="store_true",
            help="step 4: go on training the cross-encoder on the in-style pairs of shared/attribution/ "
            "(THEORIA_ATTRIBUTION_DIR) with hard negatives made from their evidence, then refit the stacker",
        )
        parser.add_argument(
            "--fast-head",
            action="store_true",
            help="keep the cross-encoder and the full depth's heads; measure the fast depth's reading "
            "(NLI_FAST_SENTENCES, NLI_FAST_WINDOWS) against --fast-before on DEV (grouped CV, paired "
            "intervals over answers) and refit the fast head on it (with --no-write: measure only)",
        )
        parser.add_argument(
            "--fast-before",
            default="2,1",
            help="--fast-head: the reading compared with, as SENTENCES,WINDOWS (default 2,1: the full depth's)",
        )
        parser.add_argument(
            "--fast-after",
            default=None,
            help="--fast-head: the reading measured, as SENTENCES,WINDOWS (default the fast depth's, "
            "NLI_FAST_SENTENCES,NLI_FAST_WINDOWS); another one is measured only (--no-write)",
        )
        parser.add_argument(
            "--fast-points",
            action="store_true",
            help="--fast-head: also write the fast depth's operating points (strictness cuts and their DEV "
            "catch rates) into operating_points.json beside the full depth's, from the fast head's "
            "out-of-fold P(supported); needs a run of `evaluate --claims-only --judge features` first",
        )
        parser.add_argument(
            "--attribution-epochs",
            type=float,
            default=None,
            help="passes over step 4's pairs (default nli_attribution.ATTRIBUTION_EPOCHS); "
            "a checkpoint of another length is refused",
        )

    def handle(self, *args, **options):
        from audit.evaluation.nli_fit import build, fast_head

        if options["fast_head"]:  # no training: the DEV claims and the shipped cross-encoder only
            before = _reading(options["fast_before"], "--fast-before")
            after = _reading(options["fast_after"], "--fast-after") if options["fast_after"] else None
            writes = not options["no_write"] or options["fast_points"]
            if after not in (None, (NLI_FAST_SENTENCES, NLI_FAST_WINDOWS)) and writes:
                raise CommandError(
                    f"--fast-after {after[0]},{after[1]} is measured only: add --no-write and leave out "
                    "--fast-points (the shipped fast head and its points are fitted on the reading the fast "
                    f"depth reads, {NLI_FAST_SENTENCES},{NLI_FAST_WINDOWS})."
                )
        checked = (("claims", "DEV claims file"),) + (
            () if options["fast_head"] else (("nli_dir", "entailment data folder"),)
        )
        for key, what in checked:
            if not Path(options[key]).exists():
                raise CommandError(f"The {what} {options[key]} does not exist.")
        if options["fast_head"]:
            from audit.evaluation.entailment_fit import load_dev
            from audit.evaluation.nli_fit import fast_points_problem
            from audit.pipeline.operating_points import OPERATING_POINTS_PATH

            points = OPERATING_POINTS_PATH if options["fast_points"] else None
            if points is not None:
                problem = fast_points_problem(load_dev(Path(options["claims"])), points)
                if problem:
                    raise CommandError(problem)
            code = fast_head(
                Path(options["claims"]),
                before=before,
                after=after,
                write=not options["no_write"],
                points_path=points,
                log=lambda line: self.stdout.write(str(line)),
            )
            if code:
                raise SystemExit(code)
            return
        code = build(
            Path(options["claims"]),
            nli_dir=Path(options["nli_dir"]),
            max_minutes=options["max_minutes"],
            write=not options["no_write"],
            stacker_only=options["stacker_only"],
            attribution=options["attribution"],
            attribution_epochs=options["attribution_epochs"],
            log=lambda line: self.stdout.write(str(line)),
            err=self.stderr._out,
        )
        if code:
            raise SystemExit(code)


def _reading(value: str, option: str) -> tuple[int, int]:
    """SENTENCES,WINDOWS read per claim, or a one-sentence error naming ``option``."""
    try:
        reading = tuple(int(v) for v in value.split(","))
    except ValueError:
        reading = ()
    if len(reading) != 2 or min(reading) < 0 or reading[0] < 1:
        raise CommandError(f"{option} must be SENTENCES,WINDOWS, at least one sentence (e.g. 2,1).")
    return reading[0], reading[1]
