"""The cascade's cuts (``audit/pipeline/cascade.py``), chosen on DEV grouped-CV predictions.

Reads the out-of-fold predictions two ``evaluate`` runs kept under ``var/``:
``evaluate --claims-only --judge features`` (the features head's support logit of every DEV claim, each
from the fold model that never saw its group) and ``evaluate --claims-only`` (the NLI judge's labels).
Then:
1. Platt scaling of the features logit against gold SUPPORTED (the cheap P);
2. ``settle_below``: the highest cut whose claims at or below it are at least
   ``CASCADE_MIN_SETTLED_ACCURACY`` not supported; ``settle_above``: the lowest cut whose claims at or
   above it are at least that share supported (pooled over DEV), only where
   ``CASCADE_SETTLES_SUPPORTED`` (off: minimal edits look like copies to the features);
3. the cascade's labels: a settled claim is SUPPORTED when its cheap P reaches the balanced cut and no
   check blocks it, any other claim keeps the NLI judge's label; its catch rate, false alarms and bAcc
   with intervals over answers, beside the NLI judge's own, and the share each stage settled.
The cuts and these figures go to ``cascade.json`` beside the judge.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np

from audit.constants import CASCADE_MIN_SETTLED_ACCURACY, CASCADE_SETTLES_SUPPORTED

REPO = Path(__file__).resolve().parents[2]
COMMAND = (
    "python manage.py evaluate --claims-only --judge features; python manage.py evaluate --claims-only "
    "(or --operating-points --stacker-cv); python manage.py evaluate --fit-cascade"
)


def predictions(judge: str, var: Path = REPO / "var") -> dict[str, np.ndarray]:
    path = var / f"evaluate_{judge}_predictions.npz"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: run `python manage.py evaluate --claims-only --judge {judge}` first"
        )
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def settle_cuts(p: np.ndarray, supported: np.ndarray, accuracy: float) -> tuple[float, float]:
    """(settle_below, settle_above): the widest tails of ``p`` whose claims are at least ``accuracy``
    right (not supported below, supported above); -1 / 2 where no tail is."""
    order = np.argsort(p, kind="mergesort")
    ps, ys = p[order], supported[order].astype(float)
    n = len(ps)
    below, above = -1.0, 2.0
    right_low = np.cumsum(1.0 - ys) / np.arange(1, n + 1)  # share not supported among the k lowest
    for k in range(n - 1, -1, -1):
        if right_low[k] >= accuracy and (k + 1 == n or ps[k + 1] > ps[k]):
            below = float(ps[k])
            break
    right_high = np.cumsum(ys[::-1]) / np.arange(1, n + 1)  # share supported among the k highest
    for k in range(n - 1, -1, -1):
        i = n - 1 - k  # the lowest P of the k + 1 highest
        if right_high[k] >= accuracy and (i == 0 or ps[i - 1] < ps[i]):
            above = float(ps[i])
            break
    if above <= below:  # the tails would overlap: nothing is sure enough to settle as supported
        above = 2.0
    return below, above


def fit_cascade(out, path: Path, accuracy: float = CASCADE_MIN_SETTLED_ACCURACY) -> dict:
    from audit.evaluation.catch_rate import bootstrap_report, format_report
    from audit.evaluation.learned_fit import platt

    feats, nli = predictions("features"), predictions("nli")
    if list(feats["ids"]) != list(nli["ids"]):
        raise ValueError("the two runs verified different claims; rerun both on the same file")
    gold = feats["gold"] == "SUPPORTED"
    logit = np.nan_to_num(feats["logit"], nan=-40.0)  # no evidence: no logit, never supported
    a, b = platt(logit, gold.astype(int))
    p_cheap = 1.0 / (1.0 + np.exp(-np.clip(a * logit + b, -40.0, 40.0)))
    below, above = settle_cuts(p_cheap, gold, accuracy)
    if not CASCADE_SETTLES_SUPPORTED:  # constants: the cheap signals never settle a claim as supported
        above = 2.0
    low, high = p_cheap <= below, p_cheap >= above
    settled = low | high
    nli_supported = nli["labels"] == "SUPPORTED"
    cascade_supported = np.where(settled, high & ~nli["blocked"], nli_supported)
    args = (feats["datasets"], gold)
    reports = {
        "nli": bootstrap_report(*args, nli_supported, feats["groups"]),
        "cascade": bootstrap_report(*args, cascade_supported, feats["groups"]),
    }
    figures = {
        "claims": len(gold),
        "settled_low": round(float(low.mean()), 4),
        "settled_high": round(float(high.mean()), 4),
        "settled_low_right": round(float((~gold[low]).mean()), 4) if low.any() else None,
        "settled_high_right": round(float(gold[high].mean()), 4) if high.any() else None,
        "macro": {
            name: {k: [round(v, 4) for v in r["MACRO"][k]] for k in ("catch", "false_alarm", "bacc")}
            for name, r in reports.items()
        },
    }
    payload = {
        "platt": [round(float(a), 6), round(float(b), 6)],
        "settle_below": round(below, 6),
        "settle_above": round(above, 6),
        "min_settled_accuracy": accuracy,
        "command": COMMAND,
        "computed": dt.datetime.now(dt.timezone.utc).date().isoformat(),
        "dev": figures,
    }
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"Cascade (written to {path}): cheap P = Platt(features logit), a {a:.3f}, b {b:.3f}; settled at "
        f"P <= {below:.3f} ({100 * figures['settled_low']:.1f} % of DEV claims, "
        f"{_pct(figures['settled_low_right'])} not supported) and at P >= {above:.3f} "
        f"({100 * figures['settled_high']:.1f} %, {_pct(figures['settled_high_right'])} supported); the "
        f"reader reads the other {100 * (1 - settled.mean()):.1f} %",
        file=out,
    )
    for name, r in reports.items():
        print(format_report(r, f"DEV grouped CV, labels of the {name}"), file=out)
    return payload


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.1f} %"
