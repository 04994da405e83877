"""``evaluate --workspace SLUG``: every available judge on the workspace's reviewed examples.

The examples arrive as benchmark rows (``audit.selectors.learning.benchmark_row``: the reviewer's
label is the gold ``label``). Each judge verifies every example as it is (no judge is fitted on
them), through the pipeline's ``verify_claims`` at the workspace's thresholds, and is scored against
the reviewers: 2- and 3-class balanced accuracy, ECE of the confidence, agreement, the cases the
intake would open. The machine's labels as recorded at decision time are scored the same way. The
workspace's calibration in force is scored only on the examples it was not fitted on.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from audit.constants import CROSS_ENCODER_PATH, Thresholds
from audit.evaluation.cli import claim_evidence
from audit.evaluation.progress import text_bar
from audit.pipeline.calibration_fit import figures


def available_judges(llm=None) -> list[str]:
    """The judges that can run here: features and learned (shipped), a cross-encoder where one is
    configured, the LLM judge where an LLM is."""
    from audit.pipeline.learned_judge import ARTIFACT_PATH

    names = ["features"]
    if ARTIFACT_PATH.is_file():
        names.append("learned")
    if CROSS_ENCODER_PATH and Path(CROSS_ENCODER_PATH).is_dir():
        names.append("cross-encoder")
    if llm is not None:
        names.append("llm")
    return names


TITLE_WIDTH = (
    60  # a judge's version with its calibration ("nli:<model>+<stacker> + calibration v3"), never cut
)
_HEADER = (
    f"{'judge':{TITLE_WIDTH}s} {'n':>5s} {'bAcc 2c':>8s} {'bAcc 3c':>8s} {'ECE':>6s} {'agree':>6s} {'cases':>6s} "
    f"{'SUPP!':>6s}"
)


def _line(title: str, f: dict) -> str:
    return (
        f"{title:{TITLE_WIDTH}s} {f['n']:5d} {f['bacc']:8.3f} {f['bacc3']:8.3f} {f['ece']:6.3f} {f['agreement']:6.3f} "
        f"{f['cases']:6d} {f['false_supported']:6d}"
    )


def run_evaluate_workspace(
    records: list[dict],
    *,
    slug: str,
    thresholds: Thresholds,
    calibrated: Thresholds | None = None,
    fitted_on: set[str] | None = None,
    llm=None,
    out=None,
    err=None,
) -> int:
    """Print one line per judge (and for the calibration in force); ``fitted_on`` holds the ids of
    the records the calibration was fitted on (left out of its line)."""
    from audit.pipeline.audit import verify_claims
    from audit.pipeline.judges import get_judge
    from audit.pipeline.methods.entailment import EntailmentMethod

    out, err = out or sys.stdout, err or sys.stderr
    if not records:
        print(f"evaluate: workspace {slug} has no reviewed examples yet; nothing to measure.", file=err)
        return 2
    gold = [r["label"] for r in records]
    low = thresholds.low_confidence_threshold
    plain = replace(thresholds, calibration=None)
    print(
        f"Reviewed examples of {slug}: {len(records)} ({sum(g == 'SUPPORTED' for g in gold)} SUPPORTED per "
        f"reviewers); every judge as shipped at the workspace's thresholds (SUPPORTED at confidence >= "
        f"{plain.audit_score_threshold}); SUPP! = SUPPORTED where the reviewers said otherwise",
        file=out,
    )
    print(_HEADER, file=out)
    recorded = figures(
        gold,
        [r["meta"]["machine_label"] for r in records],
        np.array([r["meta"]["machine_confidence"] for r in records]),
        low,
    )
    print(_line("as recorded when the reviewers decided", recorded), file=out)
    claims = [(r["claim"], claim_evidence(r)) for r in records]
    shipped = {}
    for name in available_judges(llm):
        judge = get_judge(name)
        bar = text_bar(len(records), f"evaluate {slug} claims ({name})", err)
        verdicts = verify_claims(
            claims,
            thresholds=replace(plain, judge=name),
            overrides={"entailment": EntailmentMethod(judge=judge)},
            progress=bar.update,
            llm=llm if name == "llm" else None,
        )
        bar.close()
        shipped[name] = verdicts
        f = figures(gold, [v.label for v in verdicts], np.array([v.confidence for v in verdicts]), low)
        print(_line(f"{judge.version}", f), file=out)
    cal = calibrated.calibration if calibrated is not None else None
    if cal is None:
        print("No calibration is in force in this workspace.", file=out)
        return 0
    held = [i for i, r in enumerate(records) if r["id"] not in (fitted_on or set())]
    if not held:
        print(
            f"calibration v{cal.version}: every example was used to fit it, so no held-out figure can be given "
            "(`calibrate` prints its cross-validated figures).",
            file=out,
        )
        return 0
    bar = text_bar(len(held), f"evaluate {slug} claims (calibration v{cal.version})", err)
    verdicts = verify_claims([claims[i] for i in held], thresholds=calibrated, progress=bar.update)
    bar.close()
    truth = [gold[i] for i in held]
    print(f"On the {len(held)} examples calibration v{cal.version} was not fitted on:", file=out)
    if cal.judge in shipped:
        base = [shipped[cal.judge][i] for i in held]
        f = figures(truth, [v.label for v in base], np.array([v.confidence for v in base]), low)
        print(_line(f"{cal.judge_version} as shipped", f), file=out)
    f = figures(truth, [v.label for v in verdicts], np.array([v.confidence for v in verdicts]), low)
    print(_line(f"{cal.judge_version} + calibration v{cal.version}", f), file=out)
    return 0
