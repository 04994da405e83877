"""Mode toggles and thresholds through the API: each change an audit event, bad values a 400."""

from __future__ import annotations

import pytest

from audit import roles
from audit.models import AuditEvent, Conversation, UserProfile, Workspace


@pytest.fixture
def admin(client_for, admin_user_obj):
    return client_for(admin_user_obj)


def test_it_changes_workspace_defaults_and_records_each_change(admin, workspace, admin_user_obj):
    response = admin.patch(
        "/api/v1/settings/workspace",
        {
            "default_mode": "audit-local",
            "regulated_domains": ["Finance", "neuroscience", "finance"],
            "auto_audit_roles": [roles.AUDITOR],
            "allow_external_calls": False,
        },
        format="json",
    )

    assert response.status_code == 200, response.content
    workspace.refresh_from_db()
    assert workspace.default_mode == "audit-local"
    assert workspace.regulated_domains == ["finance", "neuroscience"]
    assert workspace.allow_external_calls is False
    event = AuditEvent.objects.get(action="settings.workspace_changed")
    assert event.actor == admin_user_obj
    assert event.details["changes"]["default_mode"] == {"from": "normal", "to": "audit-local"}
    assert set(event.details["changes"]) == {
        "default_mode",
        "regulated_domains",
        "auto_audit_roles",
        "allow_external_calls",
    }


def test_it_records_nothing_when_a_change_changes_nothing(admin, workspace):
    admin.patch("/api/v1/settings/workspace", {"default_mode": "normal"}, format="json")

    assert not AuditEvent.objects.filter(action__startswith="settings.").exists()


@pytest.mark.parametrize(
    "body, field",
    [
        ({"default_mode": "fast"}, "default_mode"),
        ({"auto_audit_roles": ["Janitor"]}, "auto_audit_roles[0]"),
        ({"regulated_domains": "finance"}, "regulated_domains"),
        ({"retention_days": 0}, "retention_days"),
        ({"name": "Renamed"}, "name"),
        ([], "body"),
    ],
)
def test_it_refuses_bad_workspace_settings_and_changes_nothing(admin, workspace, body, field):
    response = admin.patch("/api/v1/settings/workspace", body, format="json")

    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()
    assert Workspace.objects.get(pk=workspace.pk).default_mode == "normal"
    assert not AuditEvent.objects.filter(action__startswith="settings.").exists()


def test_it_sets_and_resets_threshold_overrides(admin, workspace):
    response = admin.put(
        "/api/v1/settings/thresholds",
        {"threshold_overrides": {"audit_score_threshold": 0.7, "freshness_months": {"finance": 12}}},
        format="json",
    )

    data = response.json()
    assert response.status_code == 200
    assert data["effective"]["audit_score_threshold"] == 0.7
    assert data["defaults"]["audit_score_threshold"] == 0.8
    assert data["effective"]["freshness_months"]["finance"] == 12
    assert AuditEvent.objects.filter(action="settings.thresholds_changed").count() == 1

    reset = admin.put("/api/v1/settings/thresholds", {"threshold_overrides": {}}, format="json").json()
    assert reset["effective"]["audit_score_threshold"] == 0.8


@pytest.mark.parametrize(
    "overrides, field",
    [
        ({"audit_score_treshold": 0.7}, "threshold_overrides.audit_score_treshold"),
        ({"audit_score_threshold": 1.7}, "threshold_overrides.audit_score_threshold"),
        ({"audit_score_threshold": "high"}, "threshold_overrides.audit_score_threshold"),
        ({"audit_score_threshold": True}, "threshold_overrides.audit_score_threshold"),
        ({"max_revisions": 1.5}, "threshold_overrides.max_revisions"),
        ({"freshness_months": {"finance": -1}}, "threshold_overrides.freshness_months.finance"),
        ({"audit_score_weights": {"vibes": 0.2}}, "threshold_overrides.audit_score_weights.vibes"),
    ],
)
def test_it_refuses_bad_thresholds_naming_the_key(admin, workspace, overrides, field):
    response = admin.put("/api/v1/settings/thresholds", {"threshold_overrides": overrides}, format="json")

    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert Workspace.objects.get(pk=workspace.pk).threshold_overrides == {}


def test_it_sets_a_users_default_mode(admin, analyst):
    response = admin.put(
        f"/api/v1/settings/users/{analyst.username}", {"default_mode": "audit-web"}, format="json"
    )

    assert response.json() == {"username": analyst.username, "default_mode": "audit-web"}
    assert UserProfile.objects.get(user=analyst).default_mode == "audit-web"
    assert AuditEvent.objects.get(action="settings.mode_changed").details["scope"] == "user"
    assert admin.get("/api/v1/settings/users/nobody").status_code == 404


def test_it_creates_and_changes_a_conversation_default(admin, workspace):
    created = admin.put(
        "/api/v1/settings/conversations/conv-7", {"default_mode": "audit-local"}, format="json"
    )
    changed = admin.put("/api/v1/settings/conversations/conv-7", {"default_mode": ""}, format="json")

    assert created.status_code == changed.status_code == 200
    assert Conversation.objects.get(external_id="conv-7").default_mode == ""
    assert AuditEvent.objects.filter(action="settings.mode_changed").count() == 2
    assert admin.get("/api/v1/settings/conversations/conv-7").json()["default_mode"] == ""
    assert admin.get("/api/v1/settings/conversations/unknown").status_code == 404


def test_it_previews_the_mode_a_request_would_get(client_for, make_user, workspace, admin):
    admin.patch("/api/v1/settings/workspace", {"regulated_domains": ["finance"]}, format="json")
    front_end = client_for(make_user("fe", roles.SUBMITTER))

    plain = front_end.get("/api/v1/settings/mode-preview?domain=general").json()
    regulated = front_end.get("/api/v1/settings/mode-preview?domain=Finance&mode=normal").json()

    assert plain == {"mode": "normal", "source": "workspace", "triggers": []}
    assert regulated == {"mode": "audit-local", "source": "request", "triggers": ["domain:finance"]}


def test_a_user_without_a_profile_is_in_no_workspace_and_other_workspaces_users_are_hidden(
    admin, django_user_model
):
    from audit.models import Workspace as W

    loose = django_user_model.objects.create_user(username="loose")
    outsider = django_user_model.objects.create_user(username="outsider")
    UserProfile.objects.create(user=outsider, workspace=W.objects.create(name="Other", slug="other"))

    response = admin.put("/api/v1/settings/users/loose", {"default_mode": "audit-local"}, format="json")

    assert response.status_code == 404  # not adopted into the caller's (or the default) workspace
    assert not UserProfile.objects.filter(user=loose).exists()
    assert admin.get("/api/v1/settings/users/outsider").status_code == 404
    assert (
        admin.put("/api/v1/settings/users/outsider", {"default_mode": "normal"}, format="json").status_code
        == 404
    )


def test_it_sets_the_verification_depth_word_and_the_pipeline_takes_it(admin, workspace):
    from audit.selectors.api import thresholds_for

    response = admin.put(
        "/api/v1/settings/thresholds", {"threshold_overrides": {"verification_depth": "fast"}}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert response.json()["effective"]["verification_depth"] == "fast"
    assert thresholds_for(Workspace.objects.get(pk=workspace.pk)).verification_depth == "fast"
    assert AuditEvent.objects.get(action="settings.thresholds_changed").details["to"] == {
        "verification_depth": "fast"
    }


@pytest.mark.parametrize("value", ["slow", "FAST", "", 1, 0.5, None, True, ["fast"], {"depth": "fast"}])
def test_it_refuses_a_verification_depth_outside_its_words_naming_the_key(admin, workspace, value):
    Workspace.objects.filter(pk=workspace.pk).update(threshold_overrides={"audit_score_threshold": 0.7})

    response = admin.put(
        "/api/v1/settings/thresholds", {"threshold_overrides": {"verification_depth": value}}, format="json"
    )

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "threshold_overrides.verification_depth" in errors
    assert "full, fast" in str(errors["threshold_overrides.verification_depth"])
    assert Workspace.objects.get(pk=workspace.pk).threshold_overrides == {"audit_score_threshold": 0.7}


def test_it_refuses_a_word_for_a_numeric_threshold_beside_a_valid_depth(admin, workspace):
    response = admin.put(
        "/api/v1/settings/thresholds",
        {"threshold_overrides": {"verification_depth": "fast", "weak_threshold": "fast"}},
        format="json",
    )

    assert response.status_code == 400
    assert "threshold_overrides.weak_threshold" in response.json()["errors"]
    assert Workspace.objects.get(pk=workspace.pk).threshold_overrides == {}


@pytest.mark.parametrize(
    "overrides, accepted",
    [
        ('{"verification_depth": "fast"}', True),
        ('{"verification_depth": "slow"}', False),
        ('{"weak_threshold": "high"}', False),
    ],
)
def test_it_checks_threshold_overrides_in_the_admin_with_the_apis_rule(
    client, admin_user_obj, workspace, overrides, accepted
):
    from tests.ui.test_admin import workspace_form

    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/workspace/{workspace.pk}/change/",
        workspace_form(workspace, threshold_overrides=overrides),
    )

    workspace.refresh_from_db()
    if accepted:
        assert response.status_code == 302
        assert workspace.threshold_overrides == {"verification_depth": "fast"}
    else:
        assert response.status_code == 200 and "threshold_overrides." in response.content.decode()
        assert workspace.threshold_overrides == {}
