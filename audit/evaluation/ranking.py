"""How well a judge ranks, before any cut: the AUROC of P(supported) per dataset and macro,
with 95 % intervals resampled over answers, and the catch rate at a fixed false-alarm rate.

- The score ranked is the whole pipeline's: the calibrated P(supported), with every claim that a check
  keeps below SUPPORTED at any cut (``blocked``: a numeric or structural check, a source conflict)
  ranked below every claim no check blocked (``pipeline_score``). A cut on it gives exactly the labels
  ``catch_rate.operating_curve`` gives at that cut.
- AUROC: the probability that a supported claim scores above an unsupported one of the same dataset
  (ties count half); macro = the mean over datasets.
- Intervals: the same resamples as ``catch_rate`` (whole answers drawn with replacement within each
  dataset, ``constants.BOOTSTRAP_*``): a resample weighs each claim by how often its answer was drawn.
  ``paired_auroc_difference`` reads two runs on the same resamples, so its interval is the change's own.
- Catch at a false-alarm rate: the single cut on the score (as the product uses one cut) with the
  highest macro catch rate whose macro false-alarm rate is at most the rate asked (``constants``:
  ``RANKING_FALSE_ALARM``, 25 %).

May import: numpy, ``audit.constants`` and ``audit.evaluation.catch_rate`` (no Django, no model).
"""

from __future__ import annotations

import warnings

import numpy as np

from audit.constants import BOOTSTRAP_CONFIDENCE, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, RANKING_FALSE_ALARM
from audit.evaluation.catch_rate import bootstrap_report, dataset_order, operating_curve, quantile_interval


def pipeline_score(p_supported, blocked) -> np.ndarray:
    """P(supported), with the claims a check blocked ranked below every other (P - 1 lies in [-1, 0])."""
    p = np.asarray(p_supported, dtype=np.float64)
    return np.where(np.asarray(blocked, dtype=bool), p - 1.0, p)


def weighted_auroc(gold, score, weights: np.ndarray) -> np.ndarray:
    """AUROC of ``score`` for ``gold`` under each row of ``weights`` (resamples x claims); ties count half."""
    y = np.asarray(gold, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    _, block = np.unique(s, return_inverse=True)
    onehot = np.zeros((len(s), block.max() + 1 if len(s) else 0))
    onehot[np.arange(len(s)), block] = 1.0
    pos, neg = (w * y) @ onehot, (w * ~y) @ onehot  # (resamples, tie blocks), blocks in score order
    below = np.cumsum(neg, axis=1) - neg
    with np.errstate(invalid="ignore", divide="ignore"):
        return (pos * (below + 0.5 * neg)).sum(axis=1) / (pos.sum(axis=1) * neg.sum(axis=1))


def _draws(groups: np.ndarray, rng, resamples: int) -> np.ndarray:
    """(resamples, claims) weights: how often each claim's answer was drawn in each resample."""
    _, inverse = np.unique(groups, return_inverse=True)
    n = inverse.max() + 1
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)
    return counts[:, inverse].astype(np.float64)


def _per_dataset(datasets, gold, scores: list, groups, resamples: int, seed: int):
    """For each dataset: (points, samples) of each score's AUROC, all on the same resamples."""
    ds = np.asarray(datasets)
    y = np.asarray(gold, dtype=bool)
    grp = np.arange(len(ds)) if groups is None else np.asarray(groups)
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(set(ds.tolist()), key=dataset_order):
        m = ds == name
        draws = _draws(grp[m], rng, resamples)
        ones = np.ones((1, int(m.sum())))
        out[name] = [
            (
                float(weighted_auroc(y[m], np.asarray(sc)[m], ones)[0]),
                weighted_auroc(y[m], np.asarray(sc)[m], draws),
            )
            for sc in scores
        ]
    return out


def auroc_report(
    datasets,
    gold_supported,
    score,
    groups=None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = BOOTSTRAP_CONFIDENCE,
) -> dict[str, tuple[float, float, float]]:
    """AUROC per dataset and ``"MACRO"`` as ``(point, low, high)``."""
    lo_q, hi_q = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    per = _per_dataset(datasets, gold_supported, [score], groups, resamples, seed)
    return _with_macro({name: v[0] for name, v in per.items()}, lo_q, hi_q)


def paired_auroc_difference(
    datasets,
    gold_supported,
    score_before,
    score_after,
    groups=None,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = BOOTSTRAP_CONFIDENCE,
) -> dict[str, tuple[float, float, float]]:
    """The change of AUROC (after - before) per dataset and ``"MACRO"``, paired over the same resamples."""
    lo_q, hi_q = 100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2
    per = _per_dataset(datasets, gold_supported, [score_before, score_after], groups, resamples, seed)
    return _with_macro({name: (a[0] - b[0], a[1] - b[1]) for name, (b, a) in per.items()}, lo_q, hi_q)


def _with_macro(per: dict, lo_q: float, hi_q: float) -> dict[str, tuple[float, float, float]]:
    """``{dataset: (point, resampled values)}`` as ``(point, low, high)`` per dataset, and ``"MACRO"``:
    the mean of the points, its interval from the mean of each resample over the datasets."""
    out = {name: (point, *quantile_interval(samples, lo_q, hi_q)) for name, (point, samples) in per.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        macro = np.nanmean(np.stack([samples for _, samples in per.values()]), axis=0)
    out["MACRO"] = (
        float(np.nanmean([point for point, _ in per.values()])),
        *quantile_interval(macro, lo_q, hi_q),
    )
    return out


def catch_at_false_alarm(
    datasets, gold_supported, score, groups=None, *, false_alarm: float = RANKING_FALSE_ALARM
) -> dict:
    """The cut on ``score`` with the highest macro catch rate at a macro false-alarm rate of at most
    ``false_alarm``, and ``catch_rate.bootstrap_report`` of the labels at that cut (``"cut"``, ``"report"``)."""
    s = np.asarray(score, dtype=np.float64)
    cuts = np.unique(np.concatenate([s, [np.inf]]))
    curve = operating_curve(datasets, gold_supported, s, np.zeros(len(s), dtype=bool), cuts)
    ok = [k for k, r in enumerate(curve) if r["false_alarm"] <= false_alarm]
    best = max(ok, key=lambda k: (curve[k]["catch"], -cuts[k]))
    report = bootstrap_report(datasets, gold_supported, s >= cuts[best], groups)
    return {"cut": float(cuts[best]), "report": report}


def format_ranking(auroc: dict, at: dict, false_alarm: float, title: str = "") -> str:
    """The AUROC table and the catch rate at the fixed false-alarm rate, per dataset and macro."""

    def pct(v) -> str:
        return f"{100 * v[0]:5.1f} [{100 * v[1]:5.1f}, {100 * v[2]:5.1f}]"

    lines = [title] if title else []
    cut = at["cut"]
    lines.append(
        f"{'dataset':30s} | {'AUROC [95% CI]':>20s} | catch at macro false alarm <= {100 * false_alarm:.0f} % "
        f"(cut {cut:.3f}) | false alarm there"
    )
    for name, v in auroc.items():
        r = at["report"].get(name)
        label = "MACRO (mean over datasets)" if name == "MACRO" else name
        lines.append(
            f"{label:30s} | {pct(v):>20s} | {pct(r['catch']) if r else '':>20s} | "
            f"{pct(r['false_alarm']) if r else ''}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m audit.evaluation.ranking RUN.npz``: the ranking figures of a run ``evaluate`` kept."""
    import argparse
    import sys
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m audit.evaluation.ranking", description=main.__doc__)
    parser.add_argument("run", type=Path, help="var/evaluate_<judge>_predictions.npz (or a copy)")
    args = parser.parse_args(argv)
    if not args.run.is_file():
        print(f"ranking: {args.run} does not exist (evaluate --claims-only writes it).", file=sys.stderr)
        return 2
    with np.load(args.run, allow_pickle=False) as data:
        run = {k: data[k] for k in data.files}
    missing = [k for k in ("p_supported", "blocked", "gold", "datasets", "groups") if k not in run]
    if missing:
        print(
            f"ranking: {args.run} lacks {', '.join(missing)} (rerun evaluate --claims-only).", file=sys.stderr
        )
        return 2
    gold = run["gold"] == "SUPPORTED"
    score = pipeline_score(run["p_supported"], run["blocked"])
    print(
        format_ranking(
            auroc_report(run["datasets"], gold, score, run["groups"]),
            catch_at_false_alarm(run["datasets"], gold, score, run["groups"]),
            RANKING_FALSE_ALARM,
            f"{args.run}: AUROC of P(supported) and the catch rate at a macro false alarm of at most "
            f"{100 * RANKING_FALSE_ALARM:.0f} % (95 % intervals over answers)",
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
