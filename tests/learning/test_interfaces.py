"""The ways in: `calibrate`, `evaluate --workspace`, the API, the admin settings page, the claim card."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit import constants
from audit.models import AuditEvent, CalibrationVersion, Workspace
from tests.learning.conftest import generate, store

FAST = {"verification_depth": "fast"}


@pytest.fixture
def calibrated(workspace, reviewer):
    """The default workspace at the fast depth with 90 systematic decisions and calibration v1 in force."""
    from audit.services.calibration import calibration_run

    workspace.threshold_overrides = FAST
    workspace.save(update_fields=["threshold_overrides"])
    store(workspace, generate(90, seed=1), reviewer=reviewer)
    assert calibration_run(workspace=workspace).outcome == "kept"
    workspace.refresh_from_db()
    return workspace


def _call(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_calibrate_prints_before_and_after_and_keeps_a_winning_fit(workspace, reviewer):
    workspace.threshold_overrides = FAST
    workspace.save(update_fields=["threshold_overrides"])
    store(workspace, generate(90, seed=1), reviewer=reviewer)

    text = _call("calibrate", "--workspace", workspace.slug)

    assert "calibration v1 kept and now in force" in text
    for line in (
        "2-class bAcc",
        "ECE of the confidence",
        "cases that would open",
        "per fold (bAcc before -> after)",
    ):
        assert line in text
    assert "bootstrap" in text and "new parameters: threshold" in text and "stacker refitted" in text
    assert AuditEvent.objects.get(action="calibration.activated").actor_label == "manage.py calibrate"


def test_calibrate_with_too_few_decisions_says_how_many_more(workspace, reviewer):
    store(workspace, generate(10, seed=2), reviewer=reviewer)

    text = _call("calibrate", "--workspace", workspace.slug)

    assert f"{constants.CALIBRATION_MIN_EXAMPLES - 10} more reviewed decisions needed" in text
    assert not CalibrationVersion.objects.exists()


def test_calibrate_lists_versions_and_rolls_back_from_the_command_line(calibrated):
    assert "v1 active" in _call("calibrate", "--workspace", calibrated.slug, "--list")

    assert "no calibration (the judge as shipped) is in force" in _call(
        "calibrate", "--workspace", calibrated.slug, "--rollback", "none"
    )
    assert Workspace.objects.get(pk=calibrated.pk).calibration == {}
    assert "calibration v1 is in force" in _call(
        "calibrate", "--workspace", calibrated.slug, "--rollback", "v1"
    )
    with pytest.raises(CommandError, match="no calibration v7"):
        _call("calibrate", "--workspace", calibrated.slug, "--rollback", "7")
    with pytest.raises(CommandError, match="version number or 'none'"):
        _call("calibrate", "--workspace", calibrated.slug, "--rollback", "latest")
    with pytest.raises(CommandError, match="no workspace with the slug 'nowhere'"):
        _call("calibrate", "--workspace", "nowhere")


def test_evaluate_runs_every_available_judge_on_the_reviewed_examples(calibrated, reviewer):
    store(calibrated, generate(8, seed=31), reviewer=reviewer)  # decided after v1 was fitted

    text = _call("evaluate", "--workspace", calibrated.slug)

    assert f"Reviewed examples of {calibrated.slug}: 98" in text
    assert "as recorded when the reviewers decided" in text
    assert "\nfeatures:" in text and "\nlearned:" in text  # every shipped judge, by version
    assert "On the 8 examples calibration v1 was not fitted on:" in text
    assert "+ calibration v1" in text


def test_evaluate_on_a_workspace_without_decisions_says_so(workspace):
    with pytest.raises(SystemExit) as exc:
        call_command("evaluate", "--workspace", workspace.slug, stdout=io.StringIO(), stderr=io.StringIO())
    assert exc.value.code == 2


def test_the_api_shows_the_state_queues_a_refit_for_admins_and_rolls_back(
    calibrated, reviewer, admin_user_obj, client, django_capture_on_commit_callbacks
):
    client.force_login(reviewer)
    state = client.get("/api/v1/calibration").json()
    assert state["in_force"]["version"] == 1 and state["applies"] is True
    assert state["examples"] == 90 and state["examples_needed"] == 0
    assert [v["number"] for v in state["versions"]] == [1] and state["versions"][0]["metrics"]["after"]
    assert client.post("/api/v1/calibration/run").status_code == 403
    assert (
        client.post(
            "/api/v1/calibration/rollback", {"version": None}, content_type="application/json"
        ).status_code
        == 403
    )

    client.force_login(admin_user_obj)
    store(calibrated, generate(20, seed=32), reviewer=reviewer)
    with django_capture_on_commit_callbacks(execute=True):  # the test cluster runs the task at once (sync)
        queued = client.post("/api/v1/calibration/run")
    assert queued.status_code == 202 and queued.json()["status"] == "queued"
    assert CalibrationVersion.objects.filter(workspace=calibrated).count() == 2

    rolled = client.post(
        "/api/v1/calibration/rollback",
        {"version": None, "reason": "audit season"},
        content_type="application/json",
    )
    assert rolled.status_code == 200 and rolled.json()["in_force"] is None
    bad = client.post("/api/v1/calibration/rollback", {"version": 42}, content_type="application/json")
    assert bad.status_code == 404 and "version" in bad.json()["errors"]  # no such version: a missing row
    assert (
        client.post(
            "/api/v1/calibration/rollback", {"reason": "x"}, content_type="application/json"
        ).status_code
        == 400
    )


def test_a_refit_request_without_enough_decisions_is_not_queued(workspace, admin_user_obj, client):
    client.force_login(admin_user_obj)
    response = client.post("/api/v1/calibration/run")
    assert response.status_code == 200 and response.json()["status"] == "needs_more"
    assert response.json()["examples_needed"] == constants.CALIBRATION_MIN_EXAMPLES


def test_the_settings_page_shows_the_calibration_and_its_buttons_act(
    calibrated, reviewer, admin_user_obj, client, django_capture_on_commit_callbacks
):
    client.force_login(admin_user_obj)
    url = f"/admin/audit/workspace/{calibrated.pk}/settings/"

    html = client.get(url).content.decode()

    assert 'id="calibration-settings"' in html and "In force: <strong>v1</strong>" in html
    assert "Recalibrate now" in html and "Use no calibration" in html
    assert "/api/v1/reviewed-examples/export" in html
    assert "t__calibration" not in html  # not a threshold a workspace sets

    response = client.post(
        f"/admin/audit/workspace/{calibrated.pk}/calibration/rollback/", {"version": "none"}
    )
    assert response.status_code == 302 and Workspace.objects.get(pk=calibrated.pk).calibration == {}
    html = client.get(url).content.decode()
    assert "No calibration is in force" in html and "Put v1 back in force" in html
    client.post(f"/admin/audit/workspace/{calibrated.pk}/calibration/rollback/", {"version": "1"})
    assert Workspace.objects.get(pk=calibrated.pk).calibration["version"] == 1

    store(calibrated, generate(20, seed=33), reviewer=reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/admin/audit/workspace/{calibrated.pk}/calibration/run/")
    assert CalibrationVersion.objects.filter(workspace=calibrated).count() == 2
    assert client.get(f"/admin/audit/workspace/{calibrated.pk}/calibration/run/").status_code == 405


def test_the_settings_page_of_a_workspace_without_decisions_says_how_many_are_needed(
    workspace, admin_user_obj, client
):
    client.force_login(admin_user_obj)
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    assert f"{constants.CALIBRATION_MIN_EXAMPLES} more reviewed decisions needed" in html
    assert "No calibration is in force" in html


def test_the_claim_card_names_the_judge_version_and_calibration_of_its_label(workspace, analyst, client):
    from tests.factories import AnswerFactory, ClaimFactory

    answer = AnswerFactory(workspace=workspace)
    details = {"judge": "features", "judge_version": "features:0123abcd", "calibration": 3, "threshold": 0.66}
    claim = ClaimFactory(answer=answer, method_results={"entailment": {"ran": True, "details": details}})
    old = ClaimFactory(
        answer=answer, method_results={"entailment": {"ran": True, "details": {"judge": "features"}}}
    )
    client.force_login(analyst)

    html = client.get(f"/claims/{claim.pk}/").content.decode()
    assert "features:0123abcd" in html and "calibration <strong>v3</strong>" in html and "≥ 0.66" in html
    html = client.get(f"/claims/{old.pk}/").content.decode()
    assert "were not recorded" in html
