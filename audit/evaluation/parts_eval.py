"""The claim parts measured at the reader: a compound claim read part by part (``pipeline/claim_parts.py``).

``python -m audit.evaluation.parts_eval [--every N] [--model DIR]`` reads every DEV claim (every N-th
answer group) as the judge does (``nli_judge.candidate_texts`` of its evidence) and, where the claim
splits into parts, each part against the texts the judge reads for that part; the claim's score
becomes the least of its own and its parts' best P(entailment) ("supported only when every part is").
It prints the AUROC of the reader's best P(entailment) (SUPPORTED vs not) per dataset and macro
without and with the parts, and the paired change with its interval over answers. The reader alone:
no stacker, no checks. Nothing here is fitted on DEV.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def entail_max(model, claim_texts: list[tuple[str, list[str]]]) -> np.ndarray:
    """The reader's best P(entailment) of each (claim, evidence passages) over the texts the judge reads."""
    from audit.pipeline.features import prepare
    from audit.pipeline.nli_judge import candidate_texts
    from audit.pipeline.nli_model import ENTAILMENT

    texts = [(claim, candidate_texts(prepare(claim, passages))) for claim, passages in claim_texts]
    flat = list(dict.fromkeys((t, c) for c, ts in texts for t in ts))
    probs = dict(zip(flat, model.probabilities(flat)[:, ENTAILMENT])) if flat else {}
    return np.array([max((probs[(t, c)] for t in ts), default=0.0) for c, ts in texts], dtype=np.float64)


def main(argv: list[str] | None = None, out=None) -> int:
    from audit.evaluation.bench_data import claim_evidence_texts, group_key
    from audit.evaluation.cli import subsample_groups
    from audit.evaluation.entailment_fit import DEFAULT_CLAIMS, load_dev
    from audit.evaluation.nli_fit import dev_nli_features
    from audit.evaluation.ranking import auroc_report, paired_auroc_difference
    from audit.pipeline.claim_parts import parts
    from audit.pipeline.nli_judge import NLI_FEATURE_NAMES
    from audit.pipeline.nli_model import ARTIFACT_DIR, NLIModel

    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="python -m audit.evaluation.parts_eval", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--claims", type=Path, default=DEFAULT_CLAIMS)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--model", type=Path, default=ARTIFACT_DIR)
    args = parser.parse_args(argv)
    records = load_dev(args.claims)
    if args.every > 1:
        records = subsample_groups(records, args.every)
    model = NLIModel(args.model)
    # the claims' own readings: the cache ``reader_compare.reader_on_dev`` reads too (var/nli/)
    whole = dev_nli_features(records, model, log=lambda *_: None)[
        :, NLI_FEATURE_NAMES.index("nli_entail_max")
    ]
    whole = whole.astype(np.float64)
    split = [(i, p) for i, r in enumerate(records) for p in parts(r["claim"])]
    part_scores = entail_max(model, [(p, claim_evidence_texts(records[i])) for i, p in split])
    with_parts = whole.copy()
    for (i, _), s in zip(split, part_scores):
        with_parts[i] = min(with_parts[i], s)
    ds = [r["dataset"] for r in records]
    gold = [r["label"] == "SUPPORTED" for r in records]
    groups = [group_key(r) for r in records]
    before, after = auroc_report(ds, gold, whole, groups), auroc_report(ds, gold, with_parts, groups)
    change = paired_auroc_difference(ds, gold, whole, with_parts, groups)
    n_split = len({i for i, _ in split})
    print(
        f"Claims read part by part (reader {model.version}, {len(records)} DEV claims, every {args.every}. answer "
        f"group; {n_split} split into {len(split)} parts): AUROC of the best P(entailment), whole claim -> "
        "least of the claim and its parts, [95 % interval over answers]",
        file=out,
    )
    for name in before:
        b, a, c = before[name], after[name], change[name]
        print(
            f"{name:30s} {100 * b[0]:5.1f} [{100 * b[1]:5.1f}, {100 * b[2]:5.1f}] -> {100 * a[0]:5.1f} "
            f"[{100 * a[1]:5.1f}, {100 * a[2]:5.1f}]  change {100 * c[0]:+5.1f} [{100 * c[1]:+5.1f}, {100 * c[2]:+5.1f}]",
            file=out,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
