"""The judges' linear-stacker hook and a workspace calibration applied to Judgement.logit (no database)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.constants import JUDGE, Thresholds
from audit.pipeline.calibration import CalibratedJudge, Calibration, calibrated_judge
from audit.pipeline.entailment_model import LinearHead
from audit.pipeline.judges import Judge, Judgement, JudgePair, get_judge
from audit.pipeline.methods import verify_context

PAIRS = [
    JudgePair(
        "The access review is signed off by the security lead.",
        ["Each quarter, the access review is signed off by the security lead."],
    ),
    JudgePair(
        "The payroll file is kept for 90 days.", ["The payroll file is kept for 90 days after it is closed."]
    ),
    JudgePair(
        "Contractors may skip the access review.",
        ["Each quarter, the access review is signed off by the security lead."],
    ),
]


@pytest.mark.parametrize("name", ["features", "learned"])
@pytest.mark.parametrize("depth", ["fast", "full"])
def test_the_stacker_hook_gives_the_inputs_and_head_behind_the_judges_own_logit(name, depth):
    judge = get_judge(name)
    ctx = verify_context(Thresholds(verification_depth=depth))

    X, names = judge.stack_inputs(PAIRS, ctx)
    head = judge.stacker_head(depth)
    judgements = judge.judge(PAIRS, ctx)

    assert X.shape == (3, len(names)) and len(head.coef) == len(names)
    assert np.allclose(head.logit(X), [j.logit for j in judgements])
    flipped = LinearHead(head.mean, head.scale, -head.coef, -head.intercept)
    assert np.allclose([j.logit for j in judge.judge(PAIRS, ctx, head=flipped)], -head.logit(X))


def test_each_fitted_judge_has_a_stable_version_of_its_artefact():
    features, learned = get_judge("features"), get_judge("learned")
    assert features.version.startswith("features:") and learned.version.startswith("learned:")
    assert features.version == get_judge("features").version != learned.version
    # the LLM judge is the default offline judge with the LLM weighed in: its version names both
    assert get_judge("llm").version == f"{get_judge(JUDGE).version}+llm"
    assert get_judge("llm").stacker_head("full") is None


class _Fixed(Judge):
    """A judge with fixed logits (None: a verdict without one), for the wrapper's arithmetic."""

    name = "fixed"

    def __init__(self, logits):
        self.logits = logits

    def judge(self, pairs, ctx, progress=None, head=None):
        return [Judgement(0.5, 0.1, "", z, {}) for z in self.logits]


def test_a_calibrated_judge_maps_each_logit_through_platt_and_names_its_version():
    calibration = Calibration(
        version=4, judge="fixed", judge_version="fixed", depth="full", threshold=0.6, a=2.0, b=-1.0
    )
    judge = calibrated_judge(_Fixed([0.0, 1.5, None]), calibration, "full")

    out = judge.judge(PAIRS, verify_context(Thresholds()))

    assert isinstance(judge, CalibratedJudge) and judge.name == "fixed"
    assert out[0].p_supported == pytest.approx(1 / (1 + math.exp(1.0)))
    assert out[1].p_supported == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert out[0].details["calibration"] == 4 and out[1].logit == 1.5
    assert out[2].p_supported == 0.5 and "calibration" not in out[2].details  # no logit: left alone
    assert (
        calibrated_judge(_Fixed([0.0]), calibration, "fast").__class__ is _Fixed
    )  # fitted for another depth
    other = Calibration(version=4, judge="fixed", judge_version="fixed:old", depth="full", threshold=0.6)
    assert calibrated_judge(_Fixed([0.0]), other, "full").__class__ is _Fixed  # for another artefact


def test_a_stored_calibration_that_cannot_be_read_is_not_applied():
    good = {
        "version": 1,
        "judge": "features",
        "judge_version": "features:x",
        "depth": "full",
        "threshold": 0.7,
    }
    assert Calibration.from_dict(good).a == 1.0
    for bad in ({}, None, [], {**good, "threshold": 1.5}, {**good, "a": float("nan")}, {"version": "one"}):
        assert Calibration.from_dict(bad) is None
    assert Calibration.from_dict(Calibration.from_dict(good).as_dict()) == Calibration.from_dict(good)


def test_the_calibration_is_no_threshold_a_workspace_may_set():
    from audit.constants import setting_fields, threshold_problem

    assert "calibration" not in {f.name for f in setting_fields()}
    assert threshold_problem("calibration", 0.5)[0] == "calibration"
    with pytest.raises(ValueError, match="unknown threshold"):
        Thresholds().updated({"calibration": {"a": 1}})
