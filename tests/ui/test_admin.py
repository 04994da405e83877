"""The admin console: settings edited there are validated and every change is an audit event."""

from __future__ import annotations

import pytest

from audit.models import AuditEvent, Conversation, UserProfile, Workspace

pytestmark = pytest.mark.django_db


def workspace_form(workspace, **changes) -> dict:
    data = {
        "name": workspace.name,
        "slug": workspace.slug,
        "default_mode": workspace.default_mode,
        "auto_audit_roles": "[]",
        "regulated_domains": "[]",
        "revision_approval": "serve",
        "revision_approval_domains": "[]",
        "citation_only_revisions": workspace.citation_only_revisions,
        "threshold_overrides": "{}",
        "freshness_policy": '{"neuroscience": 18, "general": 36}',
        "llm_token_budget": "0",
        "allow_external_calls": "on",
        "web_allowed_domains": '["arxiv.org"]',
        "retention_days": "90",
        "profiles-TOTAL_FORMS": "0",
        "profiles-INITIAL_FORMS": "0",
        "profiles-MIN_NUM_FORMS": "0",
        "profiles-MAX_NUM_FORMS": "1000",
        "business_calendar-TOTAL_FORMS": "0",
        "business_calendar-INITIAL_FORMS": "0",
        "business_calendar-MIN_NUM_FORMS": "0",
        "business_calendar-MAX_NUM_FORMS": "1",
        "notification_targets-TOTAL_FORMS": "0",
        "notification_targets-INITIAL_FORMS": "0",
        "notification_targets-MIN_NUM_FORMS": "0",
        "notification_targets-MAX_NUM_FORMS": "1000",
    }
    data.update(changes)
    return data


def test_it_records_a_mode_and_threshold_change_of_a_workspace(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/workspace/{workspace.pk}/change/",
        workspace_form(
            workspace, default_mode="audit-web", threshold_overrides='{"audit_score_threshold": 0.9}'
        ),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    workspace.refresh_from_db()
    assert workspace.default_mode == "audit-web"
    assert workspace.threshold_overrides == {"audit_score_threshold": 0.9}
    event = AuditEvent.objects.get(action="admin.workspace_changed")
    assert event.actor == admin_user_obj and event.workspace == workspace
    assert event.details["changes"]["default_mode"] == {"from": "normal", "to": "audit-web"}
    assert event.details["changes"]["threshold_overrides"]["to"] == {"audit_score_threshold": 0.9}
    assert event.details["changes"]["web_allowed_domains"]["to"] == ["arxiv.org"]


def test_it_records_a_notification_target_added_on_the_workspace_page(client, admin_user_obj, workspace):
    from escalation.models import NotificationTarget

    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/workspace/{workspace.pk}/change/",
        workspace_form(
            workspace,
            **{
                "notification_targets-TOTAL_FORMS": "1",
                "notification_targets-0-channel": "webhook",
                "notification_targets-0-address": "http://127.0.0.1:9/hook",
                "notification_targets-0-active": "on",
            },
        ),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    target = NotificationTarget.objects.get(workspace=workspace)
    event = AuditEvent.objects.get(action="admin.notificationtarget_created")
    assert (
        event.object_id == str(target.pk) and event.workspace == workspace and event.actor == admin_user_obj
    )


def test_it_refuses_an_unknown_threshold_and_changes_nothing(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/workspace/{workspace.pk}/change/",
        workspace_form(workspace, default_mode="audit-web", threshold_overrides='{"audit_scor": 0.9}'),
    )
    assert response.status_code == 200
    assert "unknown threshold(s): audit_scor" in response.content.decode()
    workspace.refresh_from_db()
    assert workspace.default_mode == "normal" and workspace.threshold_overrides == {}
    assert not AuditEvent.objects.filter(action__startswith="admin.").exists()


def test_it_refuses_an_allow_list_that_is_not_a_list_of_domains(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/workspace/{workspace.pk}/change/",
        workspace_form(workspace, web_allowed_domains='"arxiv.org"'),
    )
    assert response.status_code == 200 and "Give a list of domain names" in response.content.decode()


def test_it_records_mode_toggles_of_users_and_conversations_from_the_lists(
    client, admin_user_obj, analyst, workspace
):
    conversation = Conversation.objects.create(workspace=workspace, external_id="conv-1")
    profile = UserProfile.objects.get(user=analyst)
    client.force_login(admin_user_obj)
    response = client.post(
        "/admin/audit/conversation/",
        {
            "form-TOTAL_FORMS": "1",
            "form-INITIAL_FORMS": "1",
            "form-MIN_NUM_FORMS": "0",
            "form-MAX_NUM_FORMS": "1000",
            "form-0-id": str(conversation.pk),
            "form-0-default_mode": "audit-local",
            "_save": "Save",
        },
    )
    assert response.status_code == 302
    event = AuditEvent.objects.get(action="admin.conversation_changed")
    assert event.details["changes"] == {"default_mode": {"from": "", "to": "audit-local"}}
    response = client.post(
        f"/admin/audit/userprofile/{profile.pk}/change/",
        {"user": str(analyst.pk), "workspace": str(workspace.pk), "default_mode": "audit-web"},
    )
    assert response.status_code == 302
    event = AuditEvent.objects.get(action="admin.userprofile_changed")
    assert event.details["changes"] == {"default_mode": {"from": "", "to": "audit-web"}}
    assert event.workspace == workspace


def test_it_records_calendar_holidays_and_notification_targets(client, admin_user_obj, workspace):
    from escalation.models import BusinessCalendar, NotificationTarget

    client.force_login(admin_user_obj)
    response = client.post(
        "/admin/escalation/businesscalendar/add/",
        {
            "workspace": str(workspace.pk),
            "timezone": "Europe/Berlin",
            "working_days": ["0", "1", "2", "3", "4"],
            "day_start": "09:00",
            "day_end": "17:00",
            "holidays-TOTAL_FORMS": "1",
            "holidays-INITIAL_FORMS": "0",
            "holidays-MIN_NUM_FORMS": "0",
            "holidays-MAX_NUM_FORMS": "1000",
            "holidays-0-date": "2026-12-25",
            "holidays-0-name": "Christmas",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    calendar = BusinessCalendar.objects.get(workspace=workspace)
    assert AuditEvent.objects.filter(
        action="admin.businesscalendar_created", object_id=str(calendar.pk)
    ).exists()
    assert AuditEvent.objects.get(action="admin.holiday_created").workspace == workspace
    response = client.post(
        "/admin/escalation/notificationtarget/add/",
        {"workspace": str(workspace.pk), "channel": "email", "address": "oncall@example.org", "active": "on"},
    )
    assert response.status_code == 302
    target = NotificationTarget.objects.get()
    response = client.post(f"/admin/escalation/notificationtarget/{target.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and not NotificationTarget.objects.exists()
    actions = list(
        AuditEvent.objects.filter(object_type="escalation.notificationtarget").values_list(
            "action", flat=True
        )
    )
    assert sorted(actions) == ["admin.notificationtarget_created", "admin.notificationtarget_deleted"]


def test_it_records_each_row_of_a_bulk_delete(client, admin_user_obj, workspace):
    rows = [Conversation.objects.create(workspace=workspace, external_id=f"c{i}") for i in range(3)]
    client.force_login(admin_user_obj)
    response = client.post(
        "/admin/audit/conversation/",
        {"action": "delete_selected", "_selected_action": [str(r.pk) for r in rows], "post": "yes"},
    )
    assert response.status_code == 302
    assert not Conversation.objects.exists()
    assert AuditEvent.objects.filter(action="admin.conversation_deleted").count() == 3


def test_it_keeps_workspaces_the_admin_console_cannot_delete_silently(client, admin_user_obj):
    other = Workspace.objects.create(name="Scratch", slug="scratch")
    client.force_login(admin_user_obj)
    client.post(f"/admin/audit/workspace/{other.pk}/delete/", {"post": "yes"})
    assert Workspace.objects.filter(pk=other.pk).exists()  # another workspace: only after an explicit switch
    client.post("/workspace/switch", {"workspace": "scratch"})
    client.post(f"/admin/audit/workspace/{other.pk}/delete/", {"post": "yes"})
    assert not Workspace.objects.filter(pk=other.pk).exists()
    event = AuditEvent.objects.get(action="admin.workspace_deleted")
    assert event.details == {"object": "Scratch"} and event.actor == admin_user_obj
