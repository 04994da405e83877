"""A workspace's calibration learned from its reviewers: fitted, kept or declined, applied, rolled back."""

from __future__ import annotations

import numpy as np
import pytest

from audit import constants
from audit.errors import InvalidInput
from audit.models import AuditEvent, CalibrationVersion, Workspace
from audit.pipeline.audit import verify_claims
from audit.selectors.api import thresholds_for
from audit.services.calibration import calibration_activate, calibration_run
from tests.learning.conftest import generate, store, two_class_bacc

FAST = {"verification_depth": "fast"}


def _held_out_bacc(workspace, items, *, calibrated: bool) -> float:
    """2-class bAcc against the reviewers' labels of new claims, verified as the workspace verifies them."""
    verdicts = verify_claims(
        [(g.claim, [{"id": "p1", "text": g.passage}]) for g in items],
        thresholds=thresholds_for(workspace, calibrated=calibrated),
    )
    return two_class_bacc([g.label for g in items], [v.label for v in verdicts])


def _systematic(workspace, reviewer, n=90, seed=1):
    workspace.threshold_overrides = FAST
    workspace.save(update_fields=["threshold_overrides"])
    store(workspace, generate(n, seed=seed), reviewer=reviewer)
    return workspace


def test_a_workspace_over_confident_on_numbers_is_recalibrated_and_decides_better_on_new_claims(
    workspace, reviewer
):
    _systematic(workspace, reviewer)

    report = calibration_run(workspace=workspace, actor=reviewer)

    assert report.outcome == "kept", report.message
    m = report.metrics
    assert m["after"]["bacc"] >= m["before"]["bacc"] + constants.CALIBRATION_MIN_BACC_GAIN
    assert m["after"]["ece"] < m["before"]["ece"]
    assert m["after"]["false_supported"] < m["before"]["false_supported"]
    assert m["bootstrap_low"] > 0
    workspace.refresh_from_db()
    version = CalibrationVersion.objects.get(workspace=workspace)
    assert version.status == "active" and version.number == 1 and version.params["stacker"] is not None
    assert workspace.calibration == version.params
    # claims none of the reviewers ever saw, verified the way the workspace verifies them
    new = generate(60, seed=99)
    before = _held_out_bacc(workspace, new, calibrated=False)
    after = _held_out_bacc(workspace, new, calibrated=True)
    assert after >= before + 0.15, (before, after)
    event = AuditEvent.objects.get(action="calibration.activated")
    assert event.workspace == workspace and event.actor == reviewer
    assert event.details["from"] is None and event.details["to"]["version"] == 1
    assert event.details["after"]["bacc"] == m["after"]["bacc"]


@pytest.mark.slow
@pytest.mark.parametrize("judge", ["features", "learned"])
def test_at_full_depth_the_stacker_of_either_judge_is_refitted_through_its_hook(workspace, reviewer, judge):
    workspace.threshold_overrides = {"judge": judge}
    workspace.save(update_fields=["threshold_overrides"])
    store(workspace, generate(80, seed=3), reviewer=reviewer)

    report = calibration_run(workspace=workspace)

    assert report.outcome == "kept", report.message
    workspace.refresh_from_db()
    stacker = workspace.calibration["stacker"]
    assert workspace.calibration["judge"] == judge and workspace.calibration["depth"] == "full"
    assert len(stacker["coef"]) == len(stacker["names"]) and "n_numbers" in stacker["names"]
    new = generate(40, seed=98)
    assert _held_out_bacc(workspace, new, calibrated=True) > _held_out_bacc(workspace, new, calibrated=False)


def test_too_few_decisions_leave_the_workspace_unchanged_and_say_how_many_more(workspace, reviewer):
    store(workspace, generate(25, seed=2), reviewer=reviewer)

    report = calibration_run(workspace=workspace)

    assert report.outcome == "needs_more"
    assert report.needed == constants.CALIBRATION_MIN_EXAMPLES - 25
    assert f"{report.needed} more reviewed decisions needed" in report.message
    assert not CalibrationVersion.objects.exists()
    assert Workspace.objects.get(pk=workspace.pk).calibration == {}
    assert not AuditEvent.objects.filter(action__startswith="calibration.").exists()


def test_decisions_of_one_class_only_ask_for_the_other(workspace, reviewer):
    items = [g for g in generate(200, seed=4) if g.label == "NEI"][:70]
    store(workspace, items, reviewer=reviewer)

    report = calibration_run(workspace=workspace)

    assert report.outcome == "needs_more"
    assert report.needed == constants.CALIBRATION_MIN_PER_CLASS
    assert "0 SUPPORTED" in report.message


def test_noisy_decisions_are_declined_and_change_nothing(workspace, reviewer):
    workspace.threshold_overrides = FAST
    workspace.save(update_fields=["threshold_overrides"])
    # reviewers who agree with the machine on numbers, but decide a third of all claims at random
    store(workspace, generate(90, seed=5, numeric_wrong=0.0, noise=0.33), reviewer=reviewer)

    report = calibration_run(workspace=workspace)

    assert report.outcome == "declined", report.message
    version = CalibrationVersion.objects.get(workspace=workspace)
    assert version.status == "declined" and version.params == {}
    assert "reason" in version.metrics and version.metrics["after"]["n"] == 90
    assert Workspace.objects.get(pk=workspace.pk).calibration == {}
    assert thresholds_for(workspace).calibration is None
    assert AuditEvent.objects.filter(action="calibration.declined").count() == 1
    assert not AuditEvent.objects.filter(action="calibration.activated").exists()


def test_no_example_is_scored_by_parameters_fitted_on_its_answer(workspace, reviewer):
    """Out of fold: flipping the reviewers' labels of one fold's answers cannot move that fold's predictions."""
    from audit.pipeline import calibration_fit as cf
    from audit.pipeline.judges import get_judge
    from audit.selectors.learning import examples_for_calibration
    from audit.services.calibration import as_examples

    _systematic(workspace, reviewer)
    examples = as_examples(examples_for_calibration(workspace=workspace))
    prep = cf.prepare(examples, thresholds_for(workspace, calibrated=False), get_judge("features"))
    fold = cf.fold_of(examples.groups, constants.CALIBRATION_FOLDS)
    first = cf.cross_validate(prep)

    flipped = [
        ("NEI" if lab == "SUPPORTED" else "SUPPORTED") if fold[i] == 0 else lab
        for i, lab in enumerate(examples.labels)
    ]
    prep.examples = cf.Examples(examples.ids, examples.claims, examples.evidence, flipped, examples.groups)
    second = cf.cross_validate(prep)

    held = np.flatnonzero(fold == 0)
    assert len(held)
    assert [first["oof_labels"][i] for i in held] == [second["oof_labels"][i] for i in held]
    assert [first["oof_confidence"][i] for i in held] == [second["oof_confidence"][i] for i in held]
    others = np.flatnonzero(fold != 0)  # their parameters did learn from the flipped labels
    assert any(abs(first["oof_confidence"][i] - second["oof_confidence"][i]) > 1e-6 for i in others)
    assert {g for i, g in enumerate(examples.groups) if fold[i] == 0}.isdisjoint(
        {g for i, g in enumerate(examples.groups) if fold[i] != 0}
    )


def test_the_calibration_in_force_rescales_the_judge_and_names_its_version_on_the_claim(workspace, reviewer):
    _systematic(workspace, reviewer)
    calibration_run(workspace=workspace)
    workspace.refresh_from_db()
    t = thresholds_for(workspace)
    assert t.calibration.version == 1 and t.audit_score_threshold == workspace.calibration["threshold"]

    (verdict,) = verify_claims(
        [
            (
                "The payroll file is kept for 90 days after it is closed.",
                [
                    "The payroll file is kept for 90 days after it is closed, and then the records team deletes it."
                ],
            )
        ],
        thresholds=t,
    )
    details = next(m for m in verdict.methods if m.method == "entailment").details
    assert details["calibration"] == 1 and details["judge_version"].startswith(f"{constants.JUDGE}:")
    assert details["threshold"] == t.audit_score_threshold
    assert verdict.label != "SUPPORTED"  # the reviewers' lesson: such numbers are not to be trusted here
    # at another depth, or for another judge, the calibration does not rescale the judge
    (full,) = verify_claims(
        [
            (
                "The access review is signed off by the security lead.",
                ["Each quarter, the access review is signed off by the security lead."],
            )
        ],
        thresholds=t.updated({"verification_depth": "full"}),
    )
    assert next(m for m in full.methods if m.method == "entailment").details["calibration"] is None
    workspace.threshold_overrides = {**FAST, "judge": "learned"}
    workspace.save(update_fields=["threshold_overrides"])
    assert thresholds_for(workspace).calibration is None
    assert thresholds_for(workspace).audit_score_threshold == constants.AUDIT_SCORE_THRESHOLD


def test_an_admin_rolls_back_to_an_earlier_version_or_to_none_and_each_change_is_an_event(
    workspace, reviewer, admin_user_obj
):
    _systematic(workspace, reviewer)
    assert calibration_run(workspace=workspace).outcome == "kept"
    store(workspace, generate(30, seed=7), reviewer=reviewer)
    assert calibration_run(workspace=workspace).outcome == "kept"
    workspace.refresh_from_db()
    assert workspace.calibration["version"] == 2
    assert list(CalibrationVersion.objects.order_by("number").values_list("status", flat=True)) == [
        "inactive",
        "active",
    ]

    calibration_activate(
        workspace=workspace, number=1, actor=admin_user_obj, reason="v2 opens too many cases"
    )

    workspace.refresh_from_db()
    v1 = CalibrationVersion.objects.get(number=1)
    assert workspace.calibration == v1.params and v1.status == "active"
    assert CalibrationVersion.objects.get(number=2).status == "inactive"
    event = AuditEvent.objects.filter(action="calibration.rolled_back").latest("id")
    assert event.actor == admin_user_obj and event.details["from"]["version"] == 2
    assert event.details["to"]["version"] == 1 and event.details["reason"] == "v2 opens too many cases"

    calibration_activate(workspace=workspace, number=None, actor=admin_user_obj)
    workspace.refresh_from_db()
    assert workspace.calibration == {} and thresholds_for(workspace).calibration is None
    assert not CalibrationVersion.objects.filter(status="active").exists()
    assert AuditEvent.objects.filter(action="calibration.rolled_back").count() == 2


def test_a_rollback_to_a_missing_declined_or_foreign_version_is_refused_and_changes_nothing(
    workspace, reviewer, admin_user_obj
):
    from tests.factories import WorkspaceFactory

    _systematic(workspace, reviewer)
    calibration_run(workspace=workspace)
    CalibrationVersion.objects.create(
        workspace=workspace, number=2, status="declined", judge="features", judge_version="x", depth="fast"
    )
    other = WorkspaceFactory(slug="other")
    CalibrationVersion.objects.create(
        workspace=other,
        number=3,
        status="inactive",
        judge="features",
        judge_version="x",
        depth="fast",
        params={"version": 3},
    )
    before = Workspace.objects.get(pk=workspace.pk).calibration
    for number, words in ((9, "no calibration v9"), (2, "was declined"), (3, "no calibration v3")):
        with pytest.raises(InvalidInput, match=words) as exc:
            calibration_activate(workspace=workspace, number=number, actor=admin_user_obj)
        assert exc.value.field == "version"
    assert Workspace.objects.get(pk=workspace.pk).calibration == before
    assert not AuditEvent.objects.filter(action="calibration.rolled_back").exists()
