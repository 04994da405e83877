"""Two ``evaluate`` runs on the same claims, compared by what they catch (paired over answers).

``python manage.py evaluate --claims-only`` keeps its out-of-fold labels in
``var/evaluate_<judge>_predictions.npz``; copy it aside, change the design, run it again, then::

    python -m audit.evaluation.compare_runs BEFORE.npz AFTER.npz

prints the macro change (after - before) of the catch rate, the false-alarm rate and the 2-class
balanced accuracy, each with a 95 % interval from the same bootstrap resamples of the answers
(``catch_rate.paired_difference``), the claims whose label changed, and the same against BEFORE's
labels without the role binding (the judge as it was before the binding). Decide on the intervals:
with about 100 answers a dataset, a point difference of 3 is noise.

AFTER - BEFORE of the AUROC of P(supported) (``ranking.paired_auroc_difference``, per dataset and macro,
the same resamples) is printed too when both runs kept their P(supported).

May import: numpy, ``audit.evaluation.catch_rate`` and ``audit.evaluation.ranking`` (no Django, no model).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

import numpy as np

from audit.evaluation.catch_rate import paired_difference

NAMES = (("catch", "catch rate"), ("false_alarm", "false alarm"), ("bacc", "2-class bAcc"))


class RunsDiffer(ValueError):
    """The two runs did not label the same claims."""


def load(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def compare(before: dict[str, np.ndarray], after: dict[str, np.ndarray], out: TextIO) -> dict[str, tuple]:
    """Print the paired changes; return them (``"after"``: AFTER vs BEFORE, ``"after_vs_unbound"``:
    AFTER vs BEFORE's labels without the role binding, when BEFORE holds them)."""
    if before["ids"].tolist() != after["ids"].tolist():
        raise RunsDiffer("the two runs labelled different claims (run both with the same --every)")
    gold = before["gold"] == "SUPPORTED"
    args = (before["datasets"], gold)
    changed = int((before["labels"] != after["labels"]).sum())
    print(
        f"claims {len(gold)}, answers {len(set(before['groups'].tolist()))}; labels changed: {changed}",
        file=out,
    )
    results = {
        "after": paired_difference(
            *args, before["labels"] == "SUPPORTED", after["labels"] == "SUPPORTED", before["groups"]
        )
    }
    rows = [("AFTER - BEFORE", results["after"])]
    if "labels_without_binding" in before:
        unbound = before["labels_without_binding"] == "SUPPORTED"
        results["after_vs_unbound"] = paired_difference(
            *args, unbound, after["labels"] == "SUPPORTED", before["groups"]
        )
        rows.append(("AFTER - BEFORE without the role binding", results["after_vs_unbound"]))
    for title, change in rows:
        print(
            f"{title}, macro, paired: "
            + ", ".join(
                f"{name} {100 * change[k][0]:+.1f} [{100 * change[k][1]:+.1f}, {100 * change[k][2]:+.1f}]"
                for k, name in NAMES
            ),
            file=out,
        )
    if all(k in run for run in (before, after) for k in ("p_supported", "blocked")):
        from audit.evaluation.ranking import paired_auroc_difference, pipeline_score

        change = paired_auroc_difference(
            before["datasets"],
            gold,
            pipeline_score(before["p_supported"], before["blocked"]),
            pipeline_score(after["p_supported"], after["blocked"]),
            before["groups"],
        )
        results["auroc"] = change
        print(
            "AUROC of P(supported), AFTER - BEFORE, paired: "
            + ", ".join(
                f"{name} {100 * v[0]:+.1f} [{100 * v[1]:+.1f}, {100 * v[2]:+.1f}]"
                for name, v in change.items()
            ),
            file=out,
        )
    return results


def main(argv: list[str] | None = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m audit.evaluation.compare_runs", description=__doc__.split("\n")[0]
    )
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    for path in (args.before, args.after):
        if not path.is_file():
            print(
                f"compare_runs: {path} does not exist (evaluate --claims-only writes var/evaluate_<judge>_predictions.npz).",
                file=err,
            )
            return 2
    try:
        compare(load(args.before), load(args.after), out)
    except RunsDiffer as exc:
        print(f"compare_runs: {exc}.", file=err)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
