"""No model inference, network call or other long work inside a database transaction.

``tests/transaction_guard.py`` wraps the embedder, every judge and the LLM client for the whole
suite; these tests check the guard itself and the paths that used to break the rule ("Audit
now", document upload and re-ingest). The web step, the nightly auditor, deep checks and demo
seeding are held to it by their own tests, which run under the same guard.
"""

from __future__ import annotations

import pytest
from django.db import transaction

from tests import transaction_guard
from tests.ui.test_answers import normal_answer

pytestmark = pytest.mark.django_db


def test_the_guard_refuses_embedding_inside_a_transaction_the_code_opened():
    from audit.pipeline.embedding import get_embedder

    with (
        transaction_guard.expected() as found,
        transaction.atomic(),
        pytest.raises(transaction_guard.LongWorkInTransaction, match=r"Embedder\.encode ran inside"),
    ):
        get_embedder().encode(["The hippocampus consolidates memories."])
    assert len(found) == 1


def test_the_guard_lets_the_test_cases_own_transaction_be():
    from django.db import connection

    from audit.pipeline.embedding import get_embedder

    assert connection.in_atomic_block  # pytest-django's transaction around this test
    assert transaction_guard.open_transaction() is None
    assert get_embedder().encode(["The hippocampus consolidates memories."]).shape == (1, 384)


def test_the_guard_covers_every_judge_those_defined_later_and_the_llm_client():
    from audit.pipeline.judges import Judge, get_judge
    from audit.pipeline.llm.client import LLMClient, LLMConfig

    class LaterJudge(Judge):
        name = "later"

        def judge(self, pairs, ctx, progress=None):
            return []

    for judge in (get_judge("features"), LaterJudge()):
        with (
            transaction_guard.expected() as found,
            transaction.atomic(),
            pytest.raises(transaction_guard.LongWorkInTransaction, match="entailment judge ran inside"),
        ):
            judge.judge([], None)
        assert found
    client = LLMClient(LLMConfig(base_url="http://127.0.0.1:9/v1", api_key="k", model="m"))
    with (
        transaction_guard.expected() as found,
        transaction.atomic(),
        pytest.raises(transaction_guard.LongWorkInTransaction, match="LLM client ran inside"),
    ):
        client.complete(purpose="test", messages=[{"role": "user", "content": "hi"}])
    assert found


def test_audit_now_audits_outside_any_transaction_and_links_the_answers_in_a_short_one(analyst, workspace):
    from audit.models import AuditEvent
    from audit.services.audit_now import answer_audit_now

    normal = normal_answer(workspace)
    audited = answer_audit_now(
        answer=normal, user=analyst
    )  # the guard fails this test on any long work inside
    assert audited.mode == "audit-local" and audited.claims.exists()
    assert AuditEvent.objects.get(action="answer.audit_requested").details == {
        "audited_as": audited.public_id
    }


def test_two_audit_now_clicks_at_once_store_one_audited_copy(analyst, workspace, monkeypatch):
    from audit.errors import InvalidInput
    from audit.models import Answer
    from audit.services import audit_now

    normal = normal_answer(workspace)
    first = audit_now.answer_audit_now(answer=normal, user=analyst)
    real = audit_now.answer_audited_as
    checks = iter([""])  # the second click read "not audited" before the first one committed
    monkeypatch.setattr(
        audit_now, "answer_audited_as", lambda answer: next(checks, None) or real(answer=answer)
    )
    with pytest.raises(InvalidInput, match=f"already audited as {first.public_id}"):
        audit_now.answer_audit_now(answer=normal, user=analyst)
    assert Answer.objects.filter(mode="audit-local").count() == 1


def test_a_document_changed_between_embedding_and_writing_is_embedded_again(workspace, monkeypatch):
    from audit.models import Document
    from audit.services import ingestion

    def doc(text):
        return ingestion.DocumentInput(uri="kb://policy", title="Policy", text=text, source_path="test")

    ingestion.document_ingest(workspace=workspace, doc=doc("Refunds take five business days."))
    real_prepare = ingestion.documents_prepare
    embedded: list[list[str]] = []
    interfered: list[bool] = []

    def prepare_then_someone_else_writes(**kwargs):
        prepared = real_prepare(**kwargs)
        if not interfered:  # the stored text changes after this one was prepared (found unchanged)
            interfered.append(True)
            ingestion.document_ingest(workspace=workspace, doc=doc("Refunds take ten business days."))
        return prepared

    def embed(texts):
        embedded.append(texts)
        return ingestion._embed(texts)

    monkeypatch.setattr(ingestion, "documents_prepare", prepare_then_someone_else_writes)
    document, outcome = ingestion.document_ingest(
        workspace=workspace, doc=doc("Refunds take five business days."), embed=embed
    )
    assert outcome == "updated" and embedded == [["Refunds take five business days."]]
    assert [c.text for c in Document.objects.get(pk=document.pk).chunks.all()] == [
        "Refunds take five business days."
    ]


def test_an_upload_of_several_documents_is_embedded_first_and_stored_all_or_none(client, admin_user_obj):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    from audit.models import Document

    api = APIClient()
    api.force_authenticate(admin_user_obj)
    good = b'{"id": "a", "text": "Refunds take five business days."}\n{"id": "b", "text": "Claims need a receipt."}\n'
    response = api.post(
        "/api/v1/documents", {"file": SimpleUploadedFile("records.jsonl", good)}, format="multipart"
    )
    assert response.status_code == 201 and [d["outcome"] for d in response.json()] == ["created", "created"]
    bad = b'{"id": "c", "text": "Appeals take a week."}\n{"id": "d", "text": "   "}\n'
    response = api.post(
        "/api/v1/documents", {"file": SimpleUploadedFile("more.jsonl", bad)}, format="multipart"
    )
    assert response.status_code == 400 and "line 2 has no text" in response.json()["detail"]
    assert Document.objects.count() == 2
