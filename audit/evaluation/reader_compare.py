"""Two cross-encoders compared at the reader alone on DEV (no stacker, no checks), paired over answers.

``python -m audit.evaluation.reader_compare BEFORE_DIR AFTER_DIR [--every N]``: used to judge a retrained
reader (``fit_nli --attribution``, ``audit/evaluation/nli_attribution.py``) before its stacker is refitted.
Apart from ``nli_attribution`` so that the training step imports neither the ``evaluate`` CLI nor ``nli_fit``
(which import it).
"""

from __future__ import annotations

from pathlib import Path


def reader_on_dev(before_dir: Path, after_dir: Path, claims: Path, every: int, out=None) -> dict:
    """The reader alone on DEV (no stacker, no checks): AUROC of its best entailment over the texts the
    judge reads (``nli_entail_max``) for SUPPORTED vs not, per dataset and macro, for two cross-encoders,
    and the paired change, on every ``every``-th answer group (DEV never trained on: step 4 reads
    ``shared/attribution/`` only). Readings are cached per model under ``var/nli/``."""
    import sys

    from audit.evaluation.bench_data import group_key
    from audit.evaluation.cli import subsample_groups
    from audit.evaluation.entailment_fit import load_dev
    from audit.evaluation.ranking import auroc_report, catch_at_false_alarm, paired_auroc_difference
    from audit.pipeline.nli_judge import NLI_FEATURE_NAMES
    from audit.pipeline.nli_model import NLIModel

    out = out or sys.stdout
    full = load_dev(claims)
    records = subsample_groups(full, every) if every > 1 else full
    ds = [r["dataset"] for r in records]
    gold = [r["label"] == "SUPPORTED" for r in records]
    groups = [group_key(r) for r in records]
    col = NLI_FEATURE_NAMES.index("nli_entail_max")
    scores = [reading(records, full, NLIModel(d))[:, col] for d in (before_dir, after_dir)]
    before, after = (auroc_report(ds, gold, s, groups) for s in scores)
    change = paired_auroc_difference(ds, gold, scores[0], scores[1], groups)
    print(
        f"The reader alone on DEV ({len(records)} claims, every {every}. answer group): AUROC of its best "
        "P(entailment), SUPPORTED vs not, [95 % interval over answers]",
        file=out,
    )
    for name in before:
        b, a, c = before[name], after[name], change[name]
        print(
            f"{name:30s} before {100 * b[0]:5.1f} [{100 * b[1]:5.1f}, {100 * b[2]:5.1f}]  after {100 * a[0]:5.1f} "
            f"[{100 * a[1]:5.1f}, {100 * a[2]:5.1f}]  change {100 * c[0]:+5.1f} [{100 * c[1]:+5.1f}, {100 * c[2]:+5.1f}]",
            file=out,
        )
    at = [catch_at_false_alarm(ds, gold, s, groups) for s in scores]
    print(
        "catch rate (unsupported claims below the cut) at the cut on the reader's score with the highest macro "
        "catch at a macro false alarm <= 25 %, [95 % interval over answers]",
        file=out,
    )
    for name in at[0]["report"]:
        b, a = (x["report"][name] for x in at)
        print(
            f"{name:30s} before {100 * b['catch'][0]:5.1f} [{100 * b['catch'][1]:5.1f}, {100 * b['catch'][2]:5.1f}] "
            f"(false alarm {100 * b['false_alarm'][0]:4.1f})  after {100 * a['catch'][0]:5.1f} "
            f"[{100 * a['catch'][1]:5.1f}, {100 * a['catch'][2]:5.1f}] (false alarm {100 * a['false_alarm'][0]:4.1f})",
            file=out,
        )
    return {"before": before, "after": after, "change": change, "catch": at}


def reading(records: list[dict], full: list[dict], model):
    """``dev_nli_features`` of ``records`` (some of ``full``): taken from the whole of DEV's cached reading by
    this model when there is one (``fit_nli``'s stacker writes it), else read and cached."""
    import numpy as np

    from audit.evaluation.nli_fit import dev_nli_features
    from audit.evaluation.nli_train import CHECKPOINT_DIR

    whole = CHECKPOINT_DIR / f"dev_nli_{model.version}_{len(full)}.npy"
    if len(records) < len(full) and whole.is_file():
        at = {id(r): k for k, r in enumerate(full)}
        return np.load(whole)[[at[id(r)] for r in records]]
    return dev_nli_features(records, model, log=lambda *_: None)


def main(argv: list[str] | None = None) -> int:
    """``python -m audit.evaluation.reader_compare BEFORE_DIR AFTER_DIR [--every N]``: ``reader_on_dev``."""
    import argparse

    from audit.evaluation.entailment_fit import DEFAULT_CLAIMS

    parser = argparse.ArgumentParser(
        prog="python -m audit.evaluation.reader_compare", description=main.__doc__
    )
    parser.add_argument("before", type=Path, help="a cross-encoder folder (model.safetensors, model.json)")
    parser.add_argument("after", type=Path)
    parser.add_argument("--claims", type=Path, default=DEFAULT_CLAIMS)
    parser.add_argument("--every", type=int, default=1)
    args = parser.parse_args(argv)
    for d in (args.before, args.after):
        if not (d / "model.safetensors").is_file():
            parser.error(f"{d} holds no model.safetensors")
    reader_on_dev(args.before, args.after, args.claims, args.every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
