"""The admin console's settings page of a workspace: named, typed thresholds with values, units and defaults."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def settings_post(form_html_client, workspace, **changes):
    """POST the settings form as the page renders it, with ``changes`` applied."""
    from audit.admin.workspace_settings import WorkspaceSettingsForm

    form = WorkspaceSettingsForm(workspace=workspace)
    data = {
        name: ("on" if value is True else "" if value in (False, None) else value)
        for name, value in ((n, form.initial.get(n)) for n in form.fields)
    }
    data.update(changes)
    return form_html_client.post(f"/admin/audit/workspace/{workspace.pk}/settings/", data)


def test_the_admin_index_links_each_workspaces_settings(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    html = client.get("/admin/").content.decode()
    assert f'href="/admin/audit/workspace/{workspace.pk}/settings/"' in html and "default mode" in html


def test_it_shows_every_threshold_with_its_value_unit_and_default(client, admin_user_obj, workspace):
    workspace.threshold_overrides = {"audit_score_threshold": 0.85}
    workspace.save()
    client.force_login(admin_user_obj)
    html = client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").content.decode()
    row = html.split('data-threshold="audit_score_threshold"')[1].split("</tr>")[0]
    assert 'value="0.85"' in row and "score 0–1; default 0.8" in row and 'type="number"' in row
    assert 'data-threshold="freshness_months__neuroscience"' in html and "months; default 18" in html
    assert '<select name="t__verification_depth"' in html
    assert "Overridden now: audit_score_threshold." in html


def test_saving_keeps_only_values_that_differ_from_the_seed_and_records_an_event(
    client, admin_user_obj, workspace
):
    from audit.models import AuditEvent

    client.force_login(admin_user_obj)
    response = settings_post(
        client,
        workspace,
        t__low_confidence_threshold="0.5",
        t__freshness_months__neuroscience="24",
        default_mode="audit-local",
    )
    assert response.status_code == 302
    workspace.refresh_from_db()
    assert workspace.threshold_overrides == {
        "low_confidence_threshold": 0.5,
        "freshness_months": {"neuroscience": 24},
    }
    assert workspace.default_mode == "audit-local"
    assert AuditEvent.objects.filter(action="settings.thresholds_changed").exists()


def test_a_bad_threshold_is_refused_beside_its_field_and_nothing_is_saved(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    response = settings_post(client, workspace, t__audit_score_threshold="1.7", default_mode="audit-local")
    html = response.content.decode()
    assert response.status_code == 400 and 'id="settings-errors"' in html
    row = html.split('data-threshold="audit_score_threshold"')[1].split("</tr>")[0]
    assert "id_t__audit_score_threshold-error" in row
    before = workspace.default_mode
    workspace.refresh_from_db()
    assert not (workspace.threshold_overrides or {}) and workspace.default_mode == before != "audit-local"
    response = settings_post(client, workspace, t__audit_score_threshold="lots")
    assert response.status_code == 400 and "Enter a number." in response.content.decode()


def test_the_settings_page_is_for_admins_only(client, analyst, workspace):
    client.force_login(analyst)
    assert client.get(f"/admin/audit/workspace/{workspace.pk}/settings/").status_code == 302


def test_the_settings_page_of_another_workspace_is_not_found(client, admin_user_obj, workspace):
    from audit.models import Workspace

    other = Workspace.objects.create(name="Other", slug="other")
    client.force_login(admin_user_obj)
    assert client.get(f"/admin/audit/workspace/{other.pk}/settings/").status_code == 404
    assert f"/admin/audit/workspace/{other.pk}/settings/" not in client.get("/admin/").content.decode()


def test_every_bad_field_is_named_at_once_and_an_at_risk_share_of_0_is_refused(
    client, admin_user_obj, workspace
):
    client.force_login(admin_user_obj)
    response = settings_post(
        client,
        workspace,
        t__audit_score_threshold="1.7",
        t__sla_at_risk_share="0",
        t__retrieval_top_k="lots",
        t__max_revisions="99",
    )
    html = response.content.decode()
    assert response.status_code == 400
    summary = html.split('id="error-summary"')[1].split("</div>")[0]
    assert "4 fields need another value" in summary
    for name, message in [
        ("audit_score_threshold", "Must be a number between 0 and 1."),
        ("sla_at_risk_share", "Must be above 0 and at most 1"),
        ("retrieval_top_k", "Enter a whole number."),
        ("max_revisions", "Must be between 0 and 10."),
    ]:
        assert f'href="#id_t__{name}"' in summary and message in summary
        row = html.split(f'data-threshold="{name}"')[1].split("</tr>")[0]
        assert f'aria-invalid="true" aria-describedby="id_t__{name}-error"' in row
        assert f'id="id_t__{name}-error"' in row
    workspace.refresh_from_db()
    assert not workspace.threshold_overrides


def test_the_api_refuses_an_at_risk_share_of_0_naming_the_field(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    response = client.put(
        "/api/v1/settings/thresholds",
        {"threshold_overrides": {"sla_at_risk_share": 0}},
        content_type="application/json",
    )
    assert response.status_code == 400 and "sla_at_risk_share" in response.content.decode()


def test_the_settings_page_chooses_whether_revisions_are_held_for_approval(client, admin_user_obj, workspace):
    client.force_login(admin_user_obj)
    response = settings_post(
        client, workspace, revision_approval="regulated", revision_approval_domains="Compliance, neuroscience"
    )
    assert response.status_code == 302
    workspace.refresh_from_db()
    assert workspace.revision_approval == "regulated"
    assert workspace.revision_approval_domains == ["compliance", "neuroscience"]
    assert workspace.holds_revisions("compliance") and not workspace.holds_revisions("cardiology")
