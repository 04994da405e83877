"""The admin console writes through the services: a document deletion moves kb_version, a claim
relabel leaves a human-decision entry; system-written records are read-only."""

from __future__ import annotations

import pytest

from audit.models import AuditEvent, Claim, Document, Evidence, VerificationRun, Workspace
from tests.api.conftest import build_answer

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(client, admin_user_obj):
    client.force_login(admin_user_obj)
    return client


def test_deleting_a_document_goes_through_the_ingestion_service(console, workspace):
    document = Document.objects.create(
        workspace=workspace, uri="kb://gone", title="Gone", content_hash="sha256:x"
    )
    version = Workspace.objects.get(pk=workspace.pk).kb_version
    response = console.post(f"/admin/audit/document/{document.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Document.objects.filter(pk=document.pk).exists()
    assert Workspace.objects.get(pk=workspace.pk).kb_version == version + 1
    assert AuditEvent.objects.filter(action="kb.document_deleted", object_id=str(document.pk)).exists()


def test_bulk_deleting_documents_moves_kb_version_once_per_document(console, workspace):
    docs = [
        Document.objects.create(
            workspace=workspace, uri=f"kb://d{n}", title=f"D{n}", content_hash=f"sha256:{n}"
        )
        for n in range(2)
    ]
    version = Workspace.objects.get(pk=workspace.pk).kb_version
    console.post(
        "/admin/audit/document/",
        {"action": "delete_selected", "_selected_action": [d.pk for d in docs], "post": "yes"},
    )
    assert not Document.objects.filter(pk__in=[d.pk for d in docs]).exists()
    assert Workspace.objects.get(pk=workspace.pk).kb_version == version + 2


def test_a_relabel_in_the_console_is_a_human_decision_with_a_reason(console, workspace):
    _, claims = build_answer(workspace)
    claim = claims[0]
    url = f"/admin/audit/claim/{claim.pk}/change/"
    refused = console.post(url, {"label": "REFUTED", "reason": ""})
    assert refused.status_code == 200 and Claim.objects.get(pk=claim.pk).label == "SUPPORTED"
    console.post(url, {"label": "REFUTED", "reason": "the passage says the opposite", "text": "edited"})
    stored = Claim.objects.get(pk=claim.pk)
    assert stored.label == "REFUTED" and stored.machine_label == "SUPPORTED" and stored.text == claim.text
    entry = stored.label_history[-1]
    assert (
        entry["by_human"] and entry["to"] == "REFUTED" and entry["reason"] == "the passage says the opposite"
    )


def test_system_written_records_are_read_only_in_the_console(console, workspace):
    answer, claims = build_answer(workspace)
    evidence = Evidence.objects.filter(claim=claims[0]).first()
    run = VerificationRun.objects.filter(answer=answer).first()
    for url in (f"/admin/audit/evidence/{evidence.pk}/change/", f"/admin/audit/answer/{answer.pk}/change/"):
        console.post(url, {"snippet": "rewritten", "query": "rewritten"})
    assert Evidence.objects.get(pk=evidence.pk).snippet == evidence.snippet
    assert type(answer).objects.get(pk=answer.pk).query == answer.query
    assert console.post(f"/admin/audit/claim/{claims[0].pk}/delete/", {"post": "yes"}).status_code == 403
    if run is not None:
        assert (
            console.post(f"/admin/audit/verificationrun/{run.pk}/delete/", {"post": "yes"}).status_code == 403
        )
    assert console.get("/admin/audit/claim/add/").status_code == 403
