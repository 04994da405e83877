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


FULL_AND_FAST = {
    "judge": "nli",
    "judge_version": "v-full",
    "command": "evaluate",
    "points": {"balanced": {"cut": 0.5}, "strict": {"cut": 0.57}, "regulated": {"cut": 0.61}},
    "fast": {
        "judge_version": "v-fast",
        "command": "fit_nli --fast-head --fast-points",
        "points": {"balanced": {"cut": 0.5}, "strict": {"cut": 0.63}, "regulated": {"cut": 0.7}},
    },
}


def test_the_fast_depth_takes_its_own_cuts_where_the_file_has_them_and_the_full_depths_elsewhere():
    from audit.pipeline.operating_points import OperatingPoints

    judge = default_stacker_judge()
    both = OperatingPoints(FULL_AND_FAST)
    assert both.cut("strict", judge, "full") == 0.57 and both.cut("strict", judge) == 0.57
    assert both.cut("strict", judge, "fast") == 0.63 and both.cut("regulated", judge, "fast") == 0.7
    assert both.at_depth("fast")[1:] == ("fit_nli --fast-head --fast-points", "v-fast")
    full_only = OperatingPoints({k: v for k, v in FULL_AND_FAST.items() if k != "fast"})
    assert full_only.cut("strict", judge, "fast") == 0.57
    assert full_only.at_depth("fast")[1:] == ("evaluate", "v-full")


def test_an_audit_at_the_fast_depth_labels_at_the_fast_depths_cut(monkeypatch):
    from audit.pipeline import nli_judge
    from audit.pipeline.audit import verify_claims
    from audit.pipeline.operating_points import OperatingPoints

    claim = [("Travel refunds are paid within 30 days.", ["Travel refunds are paid within 30 days."])]

    def labels(depth):
        return verify_claims(claim, thresholds={"verification_depth": depth, "strictness": "strict"})[0].label

    assert labels("full") == labels("fast") == "SUPPORTED"  # under the shipped points
    payload = {**FULL_AND_FAST, "fast": {**FULL_AND_FAST["fast"], "points": {"strict": {"cut": 0.9999}}}}
    monkeypatch.setattr(nli_judge, "shipped_operating_points", lambda: OperatingPoints(payload))
    assert labels("full") == "SUPPORTED" and labels("fast") != "SUPPORTED"


def test_the_fast_points_are_written_beside_the_full_ones_and_survive_a_new_full_fit(tmp_path, monkeypatch):
    import io
    import json

    from audit.evaluation import operating_points_fit as cli

    rng = np.random.default_rng(7)
    records = [
        {"id": f"c{i}", "dataset": "wice" if i % 2 else "scifact", "label": "SUPPORTED" if i % 3 else "NEI"}
        for i in range(300)
    ]
    gold = np.array([r["label"] == "SUPPORTED" for r in records])
    prob = np.clip(0.35 * gold + rng.uniform(0, 0.65, len(records)), 0, 1)
    blocked = np.zeros(len(records), dtype=bool)
    groups = np.arange(len(records))
    path = tmp_path / "operating_points.json"
    with pytest.raises(FileNotFoundError, match="the full depth's operating points come first"):
        cli.write_fast_operating_points(records, prob, blocked, path, io.StringIO(), (2, 1))
    cli.write_operating_points(records, prob, blocked, groups, "nli", path, io.StringIO())
    out = io.StringIO()
    cli.write_fast_operating_points(records, prob * 0.9, blocked, path, out, (2, 1))
    payload = json.loads(path.read_text())
    assert set(payload["fast"]["points"]) == set(STRICTNESS_POINTS) and payload["fast"]["reading"] == [2, 1]
    for name in STRICTNESS_POINTS[1:]:  # a P scaled down needs lower cuts for the same catch
        assert payload["fast"]["points"][name]["cut"] < payload["points"][name]["cut"]
    assert "Operating points at the fast depth" in out.getvalue()
    cli.write_operating_points(records, prob, blocked, groups, "nli", path, io.StringIO())
    assert json.loads(path.read_text())["fast"] == payload["fast"]


def test_the_fast_points_need_the_full_ones_and_a_features_run_on_the_same_claims(tmp_path, monkeypatch):
    from audit.evaluation import cascade_fit
    from audit.evaluation.nli_fit import fast_points_problem

    records = [{"id": "a"}, {"id": "b"}]
    path = tmp_path / "operating_points.json"
    assert "The full depth's operating points" in fast_points_problem(records, path)
    path.write_text("{}")

    def missing(judge):
        raise FileNotFoundError(judge)

    monkeypatch.setattr(cascade_fit, "predictions", missing)
    assert "run python manage.py evaluate --claims-only --judge features first" in fast_points_problem(
        records, path
    )
    monkeypatch.setattr(cascade_fit, "predictions", lambda judge: {"ids": np.array(["a", "c"])})
    assert "kept predictions for other claims" in fast_points_problem(records, path)
    monkeypatch.setattr(cascade_fit, "predictions", lambda judge: {"ids": np.array(["a", "b"])})
    assert fast_points_problem(records, path) is None


def test_fit_nli_writes_no_fast_points_for_a_reading_the_fast_depth_does_not_read():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="leave out --fast-points"):
        call_command("fit_nli", "--fast-head", "--no-write", "--fast-points", "--fast-after", "1,0")
