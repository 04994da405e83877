"""What the verdict catches: catch rate, false-alarm rate and 2-class balanced accuracy, with 95 %
bootstrap intervals resampled over answers (groups), not claims.

- catch rate: of the claims gold does not call SUPPORTED, the share the verdict does not label
  SUPPORTED (so that a person sees them);
- false-alarm rate: of the claims gold calls SUPPORTED, the share the verdict does not label SUPPORTED;
- 2-class balanced accuracy = (catch + 1 - false alarm) / 2 (``bench_eval.balanced_accuracy`` over
  SUPPORTED vs not gives the same figure).

The claims of one answer (one question, one SciFact claim, one summary: ``bench_data.group_key``) are
not independent: a judge that misreads a passage misreads every claim cited to it. So each bootstrap
resample draws whole groups with replacement, within each dataset, and the macro figure of a resample
is the mean of its datasets' figures. A claim-level bootstrap (every claim its own group) gives an
interval that is too narrow wherever claims of one answer agree (tests/judge/test_catch_rate.py).

The operating points (strictness) are cuts on the judge's calibrated P(supported): ``operating_curve``
gives, for each cut, the macro catch rate, false-alarm rate and review load (share of claims not
labelled SUPPORTED, which a person sees) of the out-of-fold predictions, and ``operating_points`` picks
the named points of ``constants.STRICTNESS_POINTS`` from it.
"""

from __future__ import annotations

import warnings
from collections import defaultdict

import numpy as np

from audit.constants import BOOTSTRAP_CONFIDENCE, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

METRICS = ("catch", "false_alarm", "bacc")


def rates(gold_supported, pred_supported) -> dict[str, float]:
    """Catch rate, false-alarm rate and 2-class bAcc of parallel boolean sequences (NaN where a class is absent)."""
    g = np.asarray(gold_supported, dtype=bool)
    p = np.asarray(pred_supported, dtype=bool)
    return _from_counts(np.array([(~g & ~p).sum(), (~g).sum(), (g & ~p).sum(), g.sum()], dtype=np.float64))


def _from_counts(c: np.ndarray) -> dict[str, float]:
    """Rates from counts [caught, unsupported, false alarms, supported] (last axis)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        catch = c[..., 0] / c[..., 1]
        false_alarm = c[..., 2] / c[..., 3]
    return {"catch": catch, "false_alarm": false_alarm, "bacc": (catch + 1.0 - false_alarm) / 2.0}


def _group_counts(gold: np.ndarray, pred: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(groups, 4) counts [caught, unsupported, false alarms, supported] per group."""
    _, inverse = np.unique(groups, return_inverse=True)
    rows = np.stack([~gold & ~pred, ~gold, gold & ~pred, gold], axis=1).astype(np.float64)
    out = np.zeros((inverse.max() + 1, 4))
    np.add.at(out, inverse, rows)
    return out


def bootstrap_report(
    datasets,
    gold_supported,
    pred_supported,
    groups=None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = BOOTSTRAP_CONFIDENCE,
) -> dict[str, dict]:
    """Per dataset and ``"MACRO"`` (the mean over datasets): each of ``METRICS`` as
    ``(point, low, high)``, plus ``n`` (claims) and ``groups``. ``groups`` None: every claim is its own
    group (a claim-level bootstrap)."""
    ds = np.asarray(datasets)
    gold = np.asarray(gold_supported, dtype=bool)
    pred = np.asarray(pred_supported, dtype=bool)
    grp = np.arange(len(ds)) if groups is None else np.asarray(groups)
    rng = np.random.default_rng(seed)
    lo_q, hi_q = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    out: dict[str, dict] = {}
    per_ds_samples: dict[str, dict[str, np.ndarray]] = {}
    for name in sorted(set(ds.tolist()), key=dataset_order):
        m = ds == name
        counts = _group_counts(gold[m], pred[m], grp[m])
        point = _from_counts(counts.sum(axis=0))
        # each resample draws len(groups) groups with replacement: multinomial counts of each group
        draws = rng.multinomial(len(counts), np.full(len(counts), 1.0 / len(counts)), size=resamples)
        samples = _from_counts(draws @ counts)
        per_ds_samples[name] = samples
        out[name] = {"n": int(m.sum()), "groups": len(counts)} | {
            k: (float(point[k]), *quantile_interval(samples[k], lo_q, hi_q)) for k in METRICS
        }
    names = list(out)
    if names:
        with warnings.catch_warnings():  # a resample where no dataset has a class gives NaN, not a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            macro = {k: np.nanmean(np.stack([per_ds_samples[n][k] for n in names]), axis=0) for k in METRICS}
        out["MACRO"] = {"n": len(ds), "groups": sum(out[n]["groups"] for n in names)} | {
            k: (float(np.nanmean([out[n][k][0] for n in names])), *quantile_interval(macro[k], lo_q, hi_q))
            for k in METRICS
        }
    return out


def quantile_interval(samples: np.ndarray, lo_q: float, hi_q: float) -> tuple[float, float]:
    if np.isnan(samples).all():
        return float("nan"), float("nan")
    return float(np.nanpercentile(samples, lo_q)), float(np.nanpercentile(samples, hi_q))


def dataset_order(name: str):
    from audit.evaluation.bench_eval import DATASET_ORDER

    return (DATASET_ORDER.index(name), name) if name in DATASET_ORDER else (len(DATASET_ORDER), name)


def format_report(report: dict[str, dict], title: str = "") -> str:
    """The report as a table: catch, false alarm and bAcc in percent, each with its interval."""

    def cell(v: tuple[float, float, float]) -> str:
        return f"{100 * v[0]:5.1f} [{100 * v[1]:5.1f}, {100 * v[2]:5.1f}]"

    lines = [title] if title else []
    lines.append(
        f"{'dataset':30s} {'n':>5s} {'groups':>6s} | {'catch rate [95% CI]':>20s} | "
        f"{'false alarm [95% CI]':>20s} | {'2-class bAcc [95% CI]':>21s}"
    )
    for name, r in report.items():
        label = "MACRO (mean over datasets)" if name == "MACRO" else name
        lines.append(
            f"{label:30s} {r['n']:5d} {r['groups']:6d} | {cell(r['catch']):>20s} | "
            f"{cell(r['false_alarm']):>20s} | {cell(r['bacc']):>21s}"
        )
    return "\n".join(lines)


# --- operating points ------------------------------------------------------------------------------
def operating_curve(datasets, gold_supported, p_supported, blocked, cuts) -> list[dict]:
    """For each cut on the calibrated P(supported): macro catch rate, false-alarm rate, bAcc and review
    load (the share of claims not labelled SUPPORTED, mean over datasets). A claim is SUPPORTED at a cut
    when its P is at or above it and no check blocked it (``blocked``: a numeric or structural check,
    or a source conflict, kept it below SUPPORTED whatever the judge said)."""
    ds = np.asarray(datasets)
    gold = np.asarray(gold_supported, dtype=bool)
    p = np.asarray(p_supported, dtype=np.float64)
    free = ~np.asarray(blocked, dtype=bool)
    by_ds = defaultdict(list)
    for i, d in enumerate(ds.tolist()):
        by_ds[d].append(i)
    out = []
    for cut in cuts:
        pred = free & (p >= cut)
        per = [rates(gold[idx], pred[idx]) for idx in by_ds.values()]
        load = [float(np.mean(~pred[idx])) for idx in by_ds.values()]
        out.append(
            {
                "cut": round(float(cut), 4),
                **{k: float(np.nanmean([r[k] for r in per])) for k in METRICS},
                "review_load": float(np.mean(load)),
            }
        )
    return out


def operating_points(curve: list[dict], balanced_cut: float, min_catch: dict[str, float]) -> dict[str, dict]:
    """The named points: ``balanced`` at the judge's own DEV-chosen cut (the row nearest it), and for each
    (name, target) of ``min_catch`` the least strict cut whose macro catch rate reaches the target (the
    strictest cut of the curve when none does)."""
    rows = sorted(curve, key=lambda r: r["cut"])
    points = {"balanced": min(rows, key=lambda r: abs(r["cut"] - balanced_cut))}
    for name, target in min_catch.items():
        points[name] = next((r for r in rows if r["catch"] >= target), rows[-1])
    return points


def paired_difference(
    datasets,
    gold_supported,
    pred_before,
    pred_after,
    groups=None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = BOOTSTRAP_CONFIDENCE,
) -> dict[str, tuple[float, float, float]]:
    """The macro change (after - before) of each of ``METRICS`` between two labellings of the same
    claims, as ``(point, low, high)``: both read on the same resamples of the answers (paired), so the
    interval is the change's own, narrower than the two reports' intervals side by side."""
    ds = np.asarray(datasets)
    gold = np.asarray(gold_supported, dtype=bool)
    before, after = np.asarray(pred_before, dtype=bool), np.asarray(pred_after, dtype=bool)
    grp = np.arange(len(ds)) if groups is None else np.asarray(groups)
    rng = np.random.default_rng(seed)
    lo_q, hi_q = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    points, samples = [], []
    for name in sorted(set(ds.tolist()), key=dataset_order):
        m = ds == name
        cb, ca = _group_counts(gold[m], before[m], grp[m]), _group_counts(gold[m], after[m], grp[m])
        draws = rng.multinomial(len(cb), np.full(len(cb), 1.0 / len(cb)), size=resamples)
        pb, pa = _from_counts(cb.sum(axis=0)), _from_counts(ca.sum(axis=0))
        sb, sa = _from_counts(draws @ cb), _from_counts(draws @ ca)
        points.append({k: pa[k] - pb[k] for k in METRICS})
        samples.append({k: sa[k] - sb[k] for k in METRICS})
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for k in METRICS:
            macro = np.nanmean(np.stack([s[k] for s in samples]), axis=0)
            out[k] = (float(np.nanmean([p[k] for p in points])), *quantile_interval(macro, lo_q, hi_q))
    return out
