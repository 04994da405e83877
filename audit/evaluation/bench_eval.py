"""Benchmark metrics (accuracy, macro-F1, balanced accuracy, AUROC) and the keyword baseline.

Definitions follow ``shared/benchmarks/README.md``: bAcc = mean recall over gold classes; F1 =
macro-F1 over the classes present in gold or predictions; 2-class = SUPPORTED vs not.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from audit.constants import AUDIT_SCORE_THRESHOLD, REFUTED_THRESHOLD
from audit.evaluation.bench_data import claim_evidence_texts
from audit.pipeline.calibration_fit import balanced_accuracy
from audit.pipeline.calibration_fit import expected_calibration_error as expected_calibration_error
from audit.pipeline.scoring import decide_labels
from audit.pipeline.text import content_words

DATASET_ORDER = [
    "attrbench-hagrid",
    "attrbench-stanford-gensearch",
    "expertqa",
    "scifact",
    "scifact-rationale",
    "summedits-scitldr",
    "wice",
]


def accuracy(gold: list[str], pred: list[str]) -> float:
    return float(np.mean([g == p for g, p in zip(gold, pred)])) if gold else 0.0


def macro_f1(gold: list[str], pred: list[str]) -> float:
    classes = sorted(set(gold) | set(pred))
    f1s = []
    for c in classes:
        tp = sum(1 for g, p in zip(gold, pred) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred) if g == c and p != c)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(f1s)) if f1s else 0.0


def auroc(y: list[int], score: list[float]) -> float:
    """Area under the ROC curve (ties count half)."""
    pos = [s for s, t in zip(score, y) if t]
    neg = [s for s, t in zip(score, y) if not t]
    if not pos or not neg:
        return float("nan")
    s = np.asarray(score, dtype=np.float64)
    order = s.argsort(kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    yy = np.asarray(y, dtype=bool)
    return float((ranks[yy].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def two_class(labels: list[str]) -> list[str]:
    return ["SUPPORTED" if lab == "SUPPORTED" else "NOT" for lab in labels]


def scores(gold: list[str], pred: list[str]) -> dict:
    return {"acc": accuracy(gold, pred), "f1": macro_f1(gold, pred), "bacc": balanced_accuracy(gold, pred)}


# --- keyword-overlap baseline (README "Reference baselines") ----------------------------------
def keyword_overlap(claim: str, passages: list[str]) -> float:
    cw = set(content_words(claim))
    if not cw:
        return 0.0
    return max((len(cw & set(content_words(p))) / len(cw) for p in passages), default=0.0)


def keyword_baseline(records: list[dict]) -> dict[str, dict]:
    """Per dataset: the threshold maximising 2-class macro-F1 on these rows, and its scores."""
    by_ds = defaultdict(list)
    for r in records:
        by_ds[r["dataset"]].append(r)
    out = {}
    for ds, rows in by_ds.items():
        ov = [keyword_overlap(r["claim"], claim_evidence_texts(r)) for r in rows]
        gold2 = two_class([r["label"] for r in rows])
        best = None
        for thr in np.arange(0.0, 1.001, 0.01):
            pred = ["SUPPORTED" if o >= thr else "NOT" for o in ov]
            f1 = macro_f1(gold2, pred)
            if best is None or f1 > best[0]:
                best = (f1, thr, pred)
        _, thr, pred2 = best
        pred3 = ["SUPPORTED" if p == "SUPPORTED" else "NEI" for p in pred2]
        out[ds] = {
            "thr": float(thr),
            "2": scores(gold2, pred2),
            "3": scores([r["label"] for r in rows], pred3),
        }
    return out


# --- our labels from model outputs ------------------------------------------------------------
def labels_from_scores(
    z: np.ndarray,
    pref: np.ndarray,
    threshold: float = AUDIT_SCORE_THRESHOLD,
    refuted_threshold: float = REFUTED_THRESHOLD,
) -> tuple[list[str], np.ndarray]:
    from audit.pipeline.entailment_model import confidence_from_logit

    conf = confidence_from_logit(z, threshold)
    return decide_labels(conf, pref, supported_at=threshold, refuted_at=refuted_threshold), conf


def claim_table(records: list[dict], labels: list[str]) -> list[dict]:
    base = keyword_baseline(records)
    by_ds = defaultdict(list)
    for i, r in enumerate(records):
        by_ds[r["dataset"]].append(i)
    rows = []
    for ds in [d for d in DATASET_ORDER if d in by_ds] + sorted(set(by_ds) - set(DATASET_ORDER)):
        idx = by_ds[ds]
        gold = [records[i]["label"] for i in idx]
        pred = [labels[i] for i in idx]
        row = {
            "dataset": ds,
            "n": len(idx),
            "2": scores(two_class(gold), two_class(pred)),
            "3": scores(gold, pred),
            "kw": base[ds],
        }
        rows.append(row)
    return rows


def format_claim_table(records: list[dict], z: np.ndarray, pref: np.ndarray, title: str = "") -> str:
    labels, _ = labels_from_scores(z, pref)
    return format_rows(claim_table(records, labels), title)


def format_rows(rows: list[dict], title: str = "") -> str:
    lines = []
    if title:
        lines.append(title)
    lines.append(
        f"{'dataset':30s} {'n':>5s} | {'acc':>5s} {'F1':>5s} {'bAcc':>5s} (2-class) | "
        f"{'kw acc':>6s} {'kw F1':>5s} {'kw bAcc':>7s} | {'3c bAcc':>7s} {'kw 3c':>5s}"
    )
    for r in rows:
        three = r["dataset"] == "scifact"
        lines.append(
            f"{r['dataset']:30s} {r['n']:5d} | {100 * r['2']['acc']:5.1f} {100 * r['2']['f1']:5.1f} "
            f"{100 * r['2']['bacc']:5.1f}           | {100 * r['kw']['2']['acc']:6.1f} "
            f"{100 * r['kw']['2']['f1']:5.1f} {100 * r['kw']['2']['bacc']:7.1f} | "
            + (
                f"{100 * r['3']['bacc']:7.1f} {100 * r['kw']['3']['bacc']:5.1f}"
                if three
                else f"{'':7s} {'':5s}"
            )
        )
    mean = np.mean([r["2"]["bacc"] for r in rows])
    kmean = np.mean([r["kw"]["2"]["bacc"] for r in rows])
    lines.append(
        f"{'MEAN over datasets (2-class bAcc)':30s}       | {'':5s} {'':5s} {100 * mean:5.1f}           | "
        f"{'':6s} {'':5s} {100 * kmean:7.1f} |"
    )
    return "\n".join(lines)
