"""Build the learned judge from shipped data and write audit/pipeline/artifacts/learned_judge.npz."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from audit.evaluation.entailment_fit import DEFAULT_CLAIMS
from audit.evaluation.learned_fit import EPOCHS, N_PAIRS, SEED, build


class Command(BaseCommand):
    help = (
        "Generate training pairs from the DEV evidence, train the cross-attention head over frozen MiniLM "
        "word-piece states, print grouped 5-fold CV figures and the ECE of the stacker, and write the "
        "artefact fitted on all DEV claims (seeded; embeddings cached under var/)."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--input", default=str(DEFAULT_CLAIMS))
        parser.add_argument("--seed", type=int, default=SEED)
        parser.add_argument("--pairs", type=int, default=N_PAIRS, help="generated training pairs")
        parser.add_argument("--epochs", type=int, default=EPOCHS)
        parser.add_argument("--no-write", action="store_true", help="report CV figures only")

    def handle(self, *args, **options):
        def log(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()

        build(
            options["input"],
            seed=options["seed"],
            n_pairs=options["pairs"],
            epochs=options["epochs"],
            write=not options["no_write"],
            log=log,
        )
