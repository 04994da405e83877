"""The operating points file (``operating_points.OperatingPoints`` reads it): the named strictness cuts
computed from out-of-fold P(supported) on DEV, the full depth's (``evaluate --claims-only
--operating-points``, ``--stacker-cv``) and beside them the fast depth's (``fit_nli --fast-head
--fast-points``), each with its macro DEV catch rate and interval, false alarms and review load."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def point_rows(records: list[dict], prob: np.ndarray, blocked: np.ndarray, groups, balanced: float) -> dict:
    """The points of ``constants.STRICTNESS_POINTS`` from out-of-fold P(supported) (``balanced``: the
    judge's own DEV-chosen cut), each with its macro DEV catch rate and interval over answers, false-alarm
    rate, bAcc and review load, rounded as the file holds them."""
    from audit.constants import STRICTNESS_MIN_CATCH
    from audit.evaluation.catch_rate import bootstrap_report, operating_curve, operating_points

    datasets = [r["dataset"] for r in records]
    gold = [r["label"] == "SUPPORTED" for r in records]
    cuts = sorted({round(c, 3) for c in np.arange(0.02, 0.995, 0.005)} | {round(balanced, 4)})
    curve = operating_curve(datasets, gold, prob, blocked, cuts)
    points = operating_points(curve, balanced, STRICTNESS_MIN_CATCH)
    for row in points.values():
        macro = bootstrap_report(datasets, gold, ~blocked & (prob >= row["cut"]), groups)["MACRO"]
        row["catch_interval"] = [round(macro["catch"][1], 4), round(macro["catch"][2], 4)]
    return {
        name: {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
        for name, row in points.items()
    }


def _shipped(judge: str):
    """The shipped judge the points apply to, and its own DEV-chosen cut (the ``balanced`` point)."""
    from audit.pipeline.judges import get_judge

    shipped = get_judge(judge)
    return shipped, float(getattr(getattr(shipped, "stacker", None), "decision_threshold", 0.5))


def print_operating_points(points: dict, title: str, out) -> None:
    print(title, file=out)
    for name, row in points.items():
        print(
            f"  {name:10s} P(supported) >= {row['cut']:.3f}: catch {100 * row['catch']:.1f} % "
            f"[{100 * row['catch_interval'][0]:.1f}, {100 * row['catch_interval'][1]:.1f}], false alarm "
            f"{100 * row['false_alarm']:.1f} %, bAcc {100 * row['bacc']:.1f}, review load "
            f"{100 * row['review_load']:.1f} %",
            file=out,
        )


def write_operating_points(
    records: list[dict],
    prob: np.ndarray,
    blocked: np.ndarray,
    groups,
    judge: str,
    path: Path,
    out,
    command: str = "python manage.py evaluate --claims-only --operating-points",
) -> None:
    """The full depth's operating points of ``constants.STRICTNESS_POINTS`` from the out-of-fold
    P(supported) (``point_rows``), written to ``path`` (``operating_points.OperatingPoints``
    reads it; the fast depth's points already there are kept) and printed."""
    import datetime as dt

    from audit.constants import STRICTNESS_MIN_CATCH

    shipped, balanced = _shipped(judge)
    before = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    payload = {
        "judge": judge,
        "judge_version": shipped.version,
        "depth": "full",
        "command": command,
        "computed": dt.datetime.now(dt.timezone.utc).date().isoformat(),
        "min_catch": STRICTNESS_MIN_CATCH,
        "points": point_rows(records, prob, blocked, groups, balanced),
        **({"fast": before["fast"]} if before.get("judge") == judge and "fast" in before else {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print_operating_points(
        payload["points"], f"Operating points (DEV grouped CV, macro over datasets; written to {path}):", out
    )


def write_fast_operating_points(
    records: list[dict],
    prob: np.ndarray,
    blocked: np.ndarray,
    path: Path,
    out,
    reading: tuple[int, int],
    command: str = "python manage.py fit_nli --fast-head --no-write --fast-points",
) -> None:
    """The fast depth's operating points, from its head's out-of-fold P(supported) under the fast
    reading, written under ``"fast"`` into the file the full depth's points are in (which must exist:
    the fast points sit beside them) and printed."""
    import datetime as dt

    from audit.evaluation.bench_data import group_key

    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: the full depth's operating points come first (python manage.py evaluate --claims-only "
            "--operating-points)"
        )
    payload = json.loads(path.read_text(encoding="utf-8"))
    shipped, balanced = _shipped(str(payload.get("judge") or "nli"))
    groups = np.array([group_key(r) for r in records])
    payload["fast"] = {
        "judge_version": shipped.version,
        "command": command,
        "computed": dt.datetime.now(dt.timezone.utc).date().isoformat(),
        "reading": list(reading),
        "points": point_rows(records, prob, blocked, groups, balanced),
    }
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print_operating_points(
        payload["fast"]["points"],
        f"Operating points at the fast depth (DEV grouped CV, macro over datasets; written to {path}):",
        out,
    )
