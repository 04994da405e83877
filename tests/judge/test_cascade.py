"""The NLI judge's cascade: the cheap signals settle the pairs they are sure of and the cross-encoder
reads only the rest, in one batched call (audit/pipeline/cascade.py, audit/evaluation/cascade_fit.py)."""

from __future__ import annotations

import numpy as np

from audit.constants import Thresholds
from audit.evaluation.cascade_fit import settle_cuts
from audit.pipeline import nli_judge
from audit.pipeline.cascade import STAGE_CHEAP, STAGE_READER, Cascade
from audit.pipeline.judges import JudgePair
from audit.pipeline.methods.base import VerifyContext
from audit.pipeline.nli_model import get_nli_model


def test_the_settled_tails_are_the_widest_that_are_right_often_enough():
    p = np.array([0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.97, 0.99])
    supported = np.array([0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1], dtype=bool)
    below, above = settle_cuts(p, supported, 0.85)
    assert below == 0.05  # the 3 lowest are not supported; with 0.1 it would be 3 of 4 (75 %)
    assert above == 0.4  # 6 of the 7 highest are supported (86 %); with 0.2 it would be 6 of 8 (75 %)
    below, above = settle_cuts(p, supported, 1.0)
    assert below == 0.05 and above == 0.6
    # the tails never overlap: where both would, the cheap signals settle nothing above
    below, above = settle_cuts(p, supported, 0.7)
    assert above > below


class CountingModel:
    """The real cross-encoder, counting the (premise, claim) pairs it is asked to read."""

    def __init__(self):
        self.model = get_nli_model()
        self.calls: list[list[tuple[str, str]]] = []
        self.version = self.model.version

    def probabilities(self, pairs):
        self.calls.append(list(pairs))
        return self.model.probabilities(pairs)


PAIRS = [
    JudgePair(
        "Travel refunds are paid within 30 days of the request.",
        ["Travel refunds are paid within 30 days of the request. Requests go to the finance team."],
    ),
    JudgePair(
        "The hippocampus stores long-term memories of faces.",
        ["Quarterly reviews of the travel budget are due in March."],
    ),
    JudgePair(
        "Refunds are usually paid by the finance team.",
        ["Travel refunds are paid within 30 days of the request. Requests go to the finance team."],
    ),
]


def test_the_reader_reads_only_the_pairs_the_cheap_signals_left_in_one_call(monkeypatch):
    ctx = VerifyContext(thresholds=Thresholds())
    model = CountingModel()
    judge = nli_judge.NLIJudge(model=model)
    # the cut 0.2 below and 0.995 above: the unrelated passage is settled, the others are read
    monkeypatch.setattr(
        nli_judge,
        "shipped_cascade",
        lambda: Cascade({"platt": [1.0, 0.0], "settle_below": 0.2, "settle_above": 0.995}),
    )
    out = judge.judge(PAIRS, ctx)
    stages = [j.details["stage"] for j in out]
    assert stages == [STAGE_READER, STAGE_CHEAP, STAGE_READER]
    assert len(model.calls) == 1  # one batched pass for every pair left
    assert {claim for _, claim in model.calls[0]} == {PAIRS[0].claim, PAIRS[2].claim}
    assert out[1].p_supported < 0.8 and "nli" not in out[1].details
    # without the cascade every pair is read, and the pairs it read are judged the same
    plain = nli_judge.NLIJudge(model=model, cascade=False).judge(PAIRS, ctx)
    assert [j.details["stage"] for j in plain] == [STAGE_READER] * 3
    assert plain[0].p_supported == out[0].p_supported and plain[2].p_supported == out[2].p_supported
