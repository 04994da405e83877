"""evaluate's catch rate, false-alarm rate and group-bootstrap intervals (audit/evaluation/catch_rate.py)."""

import numpy as np

from audit.evaluation import bench_eval as be
from audit.evaluation.catch_rate import bootstrap_report, operating_curve, operating_points, rates


def test_catch_and_false_alarm_count_what_is_not_labelled_supported():
    gold = [False, False, False, False, True, True, True, True, True]
    pred = [False, True, False, True, True, False, True, True, True]
    r = rates(gold, pred)
    assert r["catch"] == 2 / 4  # two of the four unsupported claims are not labelled SUPPORTED
    assert r["false_alarm"] == 1 / 5  # one of the five supported claims is not labelled SUPPORTED
    two = be.balanced_accuracy(
        ["SUPPORTED" if g else "NOT" for g in gold], ["SUPPORTED" if p else "NOT" for p in pred]
    )
    assert abs(r["bacc"] - two) < 1e-12


def correlated_groups(n_groups=40, size=10, seed=3):
    """Every claim of a group is right or wrong together: half the groups caught, half missed."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), size)
    caught = np.repeat(rng.permutation(np.arange(n_groups) % 2 == 0), size)
    gold = np.zeros(len(groups), dtype=bool)
    gold[::2] = True  # half the claims supported, labelled SUPPORTED
    pred = gold | ~caught  # an unsupported claim of a missed group passes as SUPPORTED
    return groups, gold, pred


def test_the_interval_is_resampled_over_answers_not_claims():
    groups, gold, pred = correlated_groups()
    ds = ["wice"] * len(groups)
    grouped = bootstrap_report(ds, gold, pred, groups, resamples=500, seed=1)["wice"]["catch"]
    by_claim = bootstrap_report(ds, gold, pred, None, resamples=500, seed=1)["wice"]["catch"]
    assert grouped[0] == by_claim[0] == 0.5
    # 40 independent answers, not 200 independent unsupported claims: about sqrt(5) times wider
    assert (grouped[2] - grouped[1]) > 1.8 * (by_claim[2] - by_claim[1])
    assert grouped[1] < 0.5 < grouped[2]


def test_the_macro_figure_is_the_mean_over_datasets_and_its_interval_is_fixed_by_the_seed():
    groups, gold, pred = correlated_groups()
    ds = np.where(groups < 20, "scifact", "wice")
    pred = pred.copy()
    pred[(ds == "wice") & ~gold] = False  # wice catches everything
    a = bootstrap_report(ds, gold, pred, groups, resamples=300, seed=5)
    b = bootstrap_report(ds, gold, pred, groups, resamples=300, seed=5)
    assert a == b
    assert a["wice"]["catch"][0] == 1.0
    assert abs(a["MACRO"]["catch"][0] - (a["scifact"]["catch"][0] + 1.0) / 2) < 1e-12
    assert a["MACRO"]["groups"] == 40 and a["MACRO"]["n"] == 400


def test_the_strict_points_are_the_least_strict_cuts_reaching_their_catch_rate():
    gold = np.array([True] * 5 + [False] * 5)
    p = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.65, 0.5, 0.45, 0.3, 0.1])
    blocked = np.zeros(10, dtype=bool)
    blocked[5] = True  # a check keeps the unsupported claim at 0.65 below SUPPORTED at any cut
    curve = operating_curve(["d"] * 10, gold, p, blocked, [0.2, 0.4, 0.48, 0.52, 0.62])
    points = operating_points(curve, 0.4, {"strict": 0.8, "regulated": 1.0})
    assert points["balanced"]["cut"] == 0.4 and points["balanced"]["catch"] == 0.6
    assert points["strict"]["cut"] == 0.48  # catches 0.65 (blocked), 0.45, 0.3, 0.1
    assert points["regulated"]["cut"] == 0.52
    assert points["regulated"]["review_load"] == 0.5 and points["regulated"]["false_alarm"] == 0.0
