"""evaluate's ranking figures: AUROC of P(supported) with intervals over answers, the paired change,
and the catch rate at a fixed false-alarm rate (audit/evaluation/ranking.py)."""

import numpy as np

from audit.evaluation import bench_eval as be
from audit.evaluation.ranking import (
    auroc_report,
    catch_at_false_alarm,
    paired_auroc_difference,
    pipeline_score,
    weighted_auroc,
)


def scored(n=300, seed=0, noise=1.0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n // 5), 5)
    gold = rng.random(n) < 0.5
    score = gold + noise * rng.normal(size=n)
    return groups, gold, score


def test_the_auroc_is_the_rank_auroc_with_ties_counted_half():
    _, gold, score = scored()
    score = np.round(score, 1)  # ties
    assert (
        abs(weighted_auroc(gold, score, np.ones((1, len(score))))[0] - be.auroc(list(gold), list(score)))
        < 1e-12
    )


def test_a_claim_drawn_twice_counts_twice():
    gold = np.array([True, False, False])
    score = np.array([0.5, 0.9, 0.1])
    assert weighted_auroc(gold, score, np.array([[1.0, 1.0, 1.0]]))[0] == 0.5
    assert weighted_auroc(gold, score, np.array([[1.0, 1.0, 3.0]]))[0] == 0.75


def test_a_sharper_score_ranks_better_and_its_paired_interval_is_above_zero():
    groups, gold, score = scored(noise=2.0)
    sharper = gold + 0.5 * np.random.default_rng(5).normal(size=len(gold))
    ds = ["wice"] * len(gold)
    before, after = auroc_report(ds, gold, score, groups), auroc_report(ds, gold, sharper, groups)
    assert before["MACRO"][1] < before["MACRO"][0] < before["MACRO"][2]
    assert after["MACRO"][0] > before["MACRO"][0]
    change = paired_auroc_difference(ds, gold, score, sharper, groups)
    assert change["MACRO"][1] > 0
    same = paired_auroc_difference(ds, gold, score, score, groups)
    assert same["MACRO"] == (0.0, 0.0, 0.0)


def test_a_blocked_claim_ranks_below_every_free_one():
    s = pipeline_score([0.99, 0.2, 0.6], [True, False, False])
    assert list(np.argsort(s)) == [0, 1, 2]


def test_the_catch_rate_is_read_at_the_cut_that_keeps_false_alarms_under_the_rate():
    groups, gold, score = scored()
    at = catch_at_false_alarm(["wice"] * len(gold), gold, score, groups, false_alarm=0.25)
    fa = np.mean(score[gold] < at["cut"])
    assert fa <= 0.25
    assert at["report"]["MACRO"]["false_alarm"][0] == fa
    assert at["report"]["MACRO"]["catch"][0] == np.mean(score[~gold] < at["cut"])
