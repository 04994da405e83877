"""The admin console changes curation items and documents only through the services (an audit
event each; a document's new domain or date is searched at once), refuses malformed numbers and
JSON beside the field, and accepts only public host names on the web allow-list."""

from __future__ import annotations

import datetime as dt

import pytest

from audit.models import AuditEvent, Document, Workspace
from tests.ui.test_admin import workspace_form

pytestmark = pytest.mark.django_db

HUGE = "1" + "0" * 399  # a 400-digit integer


def _document(workspace, *, domain="general", published_at=None):
    from audit.services.ingestion import DocumentInput, document_ingest

    doc = DocumentInput(
        uri="kb://ltp",
        title="LTP notes",
        text="Long-term potentiation in CA1 depends on NMDA receptors.",
        domain=domain,
        published_at=published_at,
        source_path="test",
    )
    return document_ingest(workspace=workspace, doc=doc)[0]


def test_editing_a_documents_domain_in_the_admin_moves_kb_version_and_search_sees_it(
    client, admin_user_obj, workspace
):
    from rest_framework.test import APIClient

    document = _document(workspace)
    api = APIClient()
    api.force_authenticate(admin_user_obj)
    body = {"query": "NMDA receptors and long-term potentiation", "domain": "neuroscience"}
    assert api.post("/api/v1/retrieve", body, format="json").json()["results"] == []  # indexed as general
    version = Workspace.objects.get(pk=workspace.pk).kb_version
    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/document/{document.pk}/change/",
        {"title": "LTP notes", "domain": "Neuroscience", "published_at": "2024-03-01"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    document.refresh_from_db()
    assert (document.domain, document.published_at) == ("neuroscience", dt.date(2024, 3, 1))
    assert Workspace.objects.get(pk=workspace.pk).kb_version == version + 1
    event = AuditEvent.objects.filter(action="kb.document_updated").latest("id")
    assert event.actor == admin_user_obj and event.details["fields"] == ["domain", "published_at"]
    assert event.details["changes"]["domain"] == {"from": "general", "to": "neuroscience"}
    results = api.post("/api/v1/retrieve", body, format="json").json()["results"]
    assert [r["title"] for r in results] == ["LTP notes"] and results[0]["published_at"] == "2024-03-01"


def test_saving_a_document_unchanged_in_the_admin_writes_nothing(client, admin_user_obj, workspace):
    document = _document(workspace)
    version = Workspace.objects.get(pk=workspace.pk).kb_version
    client.force_login(admin_user_obj)
    client.post(f"/admin/audit/document/{document.pk}/change/", {"title": "LTP notes", "domain": "general"})
    assert Workspace.objects.get(pk=workspace.pk).kb_version == version
    assert not AuditEvent.objects.filter(action="kb.document_updated").exists()


def _curation_item(workspace):
    from escalation.services import curation_item_open

    return curation_item_open(workspace=workspace, source="manual", reason="Check the LTP notes.")


def test_rewording_a_curation_item_in_the_admin_is_an_audit_event(client, admin_user_obj, workspace):
    item = _curation_item(workspace)
    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/escalation/curationitem/{item.pk}/change/", {"reason": "Check the LTP notes' date."}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    item.refresh_from_db()
    assert item.reason == "Check the LTP notes' date."
    event = AuditEvent.objects.get(action="curation.changed")
    assert event.actor == admin_user_obj and event.workspace == workspace
    assert event.details["changes"]["reason"] == {
        "from": "Check the LTP notes.",
        "to": "Check the LTP notes' date.",
    }


def test_deleting_curation_items_in_the_admin_leaves_an_audit_event_each(client, admin_user_obj, workspace):
    from escalation.models import CurationItem

    first, second = _curation_item(workspace), _curation_item(workspace)
    client.force_login(admin_user_obj)
    client.post(f"/admin/escalation/curationitem/{first.pk}/delete/", {"post": "yes"})
    client.post(
        "/admin/escalation/curationitem/",
        {"action": "delete_selected", "_selected_action": [second.pk], "post": "yes"},
    )
    assert not CurationItem.objects.exists()
    events = AuditEvent.objects.filter(action="curation.deleted").order_by("id")
    assert [e.object_id for e in events] == [str(first.pk), str(second.pk)]
    assert all(e.actor == admin_user_obj and e.details["reason"] == "Check the LTP notes." for e in events)


@pytest.mark.parametrize("field", ["retention_days", "llm_token_budget"])
def test_a_400_digit_number_in_the_workspace_form_is_refused_beside_its_field(
    client, admin_user_obj, workspace, field
):
    client.force_login(admin_user_obj)
    response = client.post(
        f"/admin/audit/workspace/{workspace.pk}/change/", workspace_form(workspace, **{field: HUGE})
    )
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    assert Workspace.objects.get(pk=workspace.pk).retention_days == workspace.retention_days


def test_a_400_digit_number_in_the_workspace_json_fields_is_refused_beside_its_field(
    client, admin_user_obj, workspace
):
    client.force_login(admin_user_obj)
    for changes in (
        {"threshold_overrides": '{"max_revisions": %s}' % HUGE},
        {"freshness_policy": '{"general": %s}' % HUGE},
        {"threshold_overrides": "[" * 50_000 + "]" * 50_000},
    ):
        response = client.post(
            f"/admin/audit/workspace/{workspace.pk}/change/", workspace_form(workspace, **changes)
        )
        assert response.status_code == 200, changes
        html = response.content.decode()
        assert "errorlist" in html and ("digits" in html or "nested more than" in html)


@pytest.mark.parametrize("field", ["t__max_revisions", "t__retrieval_top_k", "t__max_claims_per_answer"])
def test_a_400_digit_threshold_on_the_settings_page_is_refused_beside_its_field(
    client, admin_user_obj, workspace, field
):
    from tests.ui.test_admin_settings import settings_post

    client.force_login(admin_user_obj)
    response = settings_post(client, workspace, **{field: HUGE})
    assert response.status_code == 400 and "Must be between" in response.content.decode()
    workspace.refresh_from_db()
    assert not workspace.threshold_overrides


@pytest.mark.parametrize("entry", ["*", "localhost", "169.254.169.254", "metadata.google.internal", "[::1]"])
def test_the_web_allow_list_takes_public_host_names_only(client, admin_user_obj, workspace, entry):
    from rest_framework.test import APIClient

    client.force_login(admin_user_obj)
    form = workspace_form(workspace, web_allowed_domains=f'["arxiv.org", "{entry}"]')
    response = client.post(f"/admin/audit/workspace/{workspace.pk}/change/", form)
    from html import unescape

    from audit.pipeline.web.fetch import allowed_domain_problem

    assert response.status_code == 200
    assert allowed_domain_problem(entry) in unescape(response.content.decode())
    api = APIClient()
    api.force_authenticate(admin_user_obj)
    response = api.patch(
        "/api/v1/settings/workspace", {"web_allowed_domains": ["arxiv.org", entry]}, format="json"
    )
    assert response.status_code == 400, response.content
    assert list(response.json()["errors"]) == [f"web_allowed_domains[{0 if entry < 'arxiv.org' else 1}]"]
    assert "arxiv.org" in Workspace.objects.get(pk=workspace.pk).web_allowed_domains
    assert entry not in Workspace.objects.get(pk=workspace.pk).web_allowed_domains


def test_a_document_left_with_a_domain_it_had_keeps_its_version(workspace):
    from audit.services.ingestion import document_metadata_update

    document = _document(workspace)
    version = Workspace.objects.get(pk=workspace.pk).kb_version
    assert document_metadata_update(document=document, domain="General").domain == "general"
    assert Workspace.objects.get(pk=workspace.pk).kb_version == version
    assert Document.objects.get(pk=document.pk).updated_at == document.updated_at
