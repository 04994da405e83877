"""The judge's operating points (strictness): the cut moves SUPPORTED, regulated domains default to the
point that catches at least 85 % on DEV, and the settings page shows each point's DEV figures."""

from __future__ import annotations

import numpy as np
import pytest

from audit.constants import STRICTNESS_MIN_CATCH, STRICTNESS_POINTS, STRICTNESS_REGULATED
from audit.pipeline.nli_judge import default_stacker
from audit.pipeline.operating_points import shipped_operating_points, strictness_for_domain

# claims whose calibrated P(supported) under the shipped judge lies between the balanced cut and the
# regulated one: SUPPORTED by default, not at the regulated point (checked below, not assumed)
BORDERLINE = [
    (
        "Grid cells were discovered in the entorhinal cortex.",
        [
            "May-Britt Moser and Edvard Moser described grid cells in the medial entorhinal cortex in "
            "2005; the cells fire at the vertices of a triangular lattice."
        ],
    ),
    (
        "Refunds are paid within 30 days.",
        ["Travel refunds are paid within 30 days of the request once the finance team approves them."],
    ),
    (
        "The committee meets every quarter to review the audit findings.",
        ["The audit committee reviews the findings of each internal audit at its quarterly meeting."],
    ),
    (
        "Sleep deprivation impairs memory consolidation.",
        ["In the study, participants deprived of sleep recalled fewer word pairs the next day."],
    ),
    (
        "Dopamine signals reward prediction errors.",
        ["Midbrain dopamine neurons fire more when a reward is better than expected."],
    ),
    (
        "The policy requires written approval from a manager.",
        ["Exceptions to the travel policy need the approval of the traveller's line manager."],
    ),
]


def test_a_stricter_point_moves_the_decision_point_of_the_audit_score():
    stacker = default_stacker()
    p = np.array([0.55, 0.65, 0.75])
    balanced = stacker.audit_score(p, 0.8)
    strict = stacker.audit_score(p, 0.8, cut=0.7)
    assert (balanced >= 0.8).all()  # every P above the DEV-chosen 0.5 is SUPPORTED by default
    assert list(strict >= 0.8) == [False, False, True]  # at the cut 0.7 only the P at 0.75 is
    # whatever the threshold, SUPPORTED means "P at or above the cut"
    assert list(stacker.audit_score(p, 0.9, cut=0.7) >= 0.9) == [False, False, True]


def test_the_shipped_points_are_ordered_and_the_regulated_one_catches_85_percent_on_dev():
    points = shipped_operating_points()
    assert points is not None and set(points.points) == set(STRICTNESS_POINTS)
    rows = [points.points[name] for name in STRICTNESS_POINTS]
    assert [r["cut"] for r in rows] == sorted(r["cut"] for r in rows)
    assert [r["catch"] for r in rows] == sorted(r["catch"] for r in rows)
    assert rows[-1]["catch"] >= STRICTNESS_MIN_CATCH[STRICTNESS_REGULATED] == 0.85
    assert points.cut("", default_stacker_judge()) == pytest.approx(default_stacker().decision_threshold)


def default_stacker_judge():
    from audit.pipeline.judges import get_judge

    return get_judge("nli")


def test_regulated_domains_default_to_the_regulated_point_unless_the_workspace_chose():
    assert strictness_for_domain("", "Medical", ["medical"]) == STRICTNESS_REGULATED
    assert strictness_for_domain("", "general", ["medical"]) == "balanced"
    assert strictness_for_domain("strict", "medical", ["medical"]) == "strict"


def test_changing_strictness_changes_the_labels_of_borderline_claims():
    from audit.pipeline.audit import verify_claims

    points = shipped_operating_points()
    low, high = points.points["balanced"]["cut"], points.points[STRICTNESS_REGULATED]["cut"]
    default = verify_claims(BORDERLINE)
    regulated = verify_claims(BORDERLINE, thresholds={"strictness": STRICTNESS_REGULATED})
    p = [next(m for m in v.methods if m.method == "entailment").details["p_supported"] for v in default]
    borderline = [k for k, pk in enumerate(p) if low <= pk < high and default[k].label == "SUPPORTED"]
    assert borderline, f"no claim between the cuts {low} and {high}: {p}"
    for k in borderline:
        assert regulated[k].label != "SUPPORTED"
    for k, pk in enumerate(p):  # a claim above both cuts, or below both, keeps its label
        if pk >= high or pk < low:
            assert regulated[k].label == default[k].label
