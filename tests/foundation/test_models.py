"""The database constraints hold the audit invariants, on SQLite and PostgreSQL alike."""

import pytest
from django.db import IntegrityError, transaction

from audit.models import Answer, AuditEvent, Chunk, Claim, Document, Evidence, VerificationRun, Workspace
from audit.models.events import AppendOnlyError

pytestmark = pytest.mark.django_db


@pytest.fixture
def answer(workspace):
    return Answer.objects.create(workspace=workspace, query="q", text="t", mode=Answer.Mode.AUDIT_LOCAL)


def violates(**kwargs):
    """Return True when creating a Claim with these fields breaks a constraint."""
    try:
        with transaction.atomic():
            Claim.objects.create(**kwargs)
    except IntegrityError:
        return True
    return False


def test_it_keeps_confidence_within_zero_and_one(answer):
    assert violates(answer=answer, claim_id="c1", text="x", confidence=1.01)
    assert violates(answer=answer, claim_id="c1", text="x", confidence=-0.01)
    assert not violates(answer=answer, claim_id="c1", text="x", confidence=1.0)
    assert not violates(answer=answer, claim_id="c2", text="x", confidence=0.0)


def test_it_allows_one_claim_id_per_answer(answer, workspace):
    Claim.objects.create(answer=answer, claim_id="c1", text="x")
    assert violates(answer=answer, claim_id="c1", text="y")
    other = Answer.objects.create(workspace=workspace, query="q", text="t", mode=Answer.Mode.NORMAL)
    assert not violates(answer=other, claim_id="c1", text="y")


@pytest.mark.parametrize(
    "field, value",
    [
        ("label", "TRUE"),
        ("machine_label", "maybe"),
        ("claim_type", "opinion"),
        ("importance", "huge"),
        ("verdict", "perhaps"),
        ("claim_id", "claim-1"),
        ("claim_id", "c0"),
    ],
)
def test_it_refuses_values_outside_the_choices(answer, field, value):
    fields = {"answer": answer, "claim_id": "c1", "text": "x", field: value}
    assert violates(**fields)


def test_it_refuses_a_span_that_ends_before_it_starts(answer):
    assert violates(answer=answer, claim_id="c1", text="x", span_start=10, span_end=5)


def test_it_refuses_an_unknown_mode(workspace):
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(workspace=workspace, query="q", mode="audit-everything")


def test_it_keeps_evidence_scores_in_range_and_hashes_prefixed(answer):
    claim = Claim.objects.create(answer=answer, claim_id="c1", text="x")
    base = {"claim": claim, "source_type": "kb", "source_id": "kb_chunk_1", "hash": "sha256:" + "0" * 64}
    for bad in ({"relevance": 1.5}, {"entailment": -0.2}, {"hash": "md5:abc"}, {"source_type": "rumour"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Evidence.objects.create(**{**base, **bad})
    Evidence.objects.create(**base, relevance=0.5, entailment=0.9)


def test_it_keeps_run_metrics_in_range(answer):
    with pytest.raises(IntegrityError), transaction.atomic():
        VerificationRun.objects.create(answer=answer, mode="audit-local", audit_score=1.2)
    with pytest.raises(IntegrityError), transaction.atomic():
        VerificationRun.objects.create(answer=answer, mode="audit-local", context_recall=-1)
    VerificationRun.objects.create(answer=answer, mode="audit-local", context_recall=None)


def test_it_refuses_a_workspace_without_retention(workspace):
    with pytest.raises(IntegrityError), transaction.atomic():
        Workspace.objects.filter(pk=workspace.pk).update(retention_days=0)


def test_it_allows_one_document_per_uri_in_a_workspace(workspace):
    Document.objects.create(workspace=workspace, title="a", uri="kb://a", content_hash="sha256:1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Document.objects.create(workspace=workspace, title="b", uri="kb://a", content_hash="sha256:2")


def test_it_refuses_chunk_offsets_out_of_order(workspace):
    doc = Document.objects.create(workspace=workspace, title="a", uri="kb://a", content_hash="sha256:1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Chunk.objects.create(
            document=doc,
            ordinal=0,
            text="t",
            start_offset=9,
            end_offset=3,
            content_hash="sha256:x",
            embedding=b"",
        )


def test_it_never_changes_or_deletes_an_audit_event(workspace):
    event = AuditEvent.objects.create(action="test.done", object_type="x", object_id="1")
    event.details = {"changed": True}
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.filter(pk=event.pk).update(action="tampered")
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get(pk=event.pk).action == "test.done"


def test_it_gives_answers_readable_unique_public_ids(workspace):
    a = Answer.objects.create(workspace=workspace, query="q", mode="normal")
    b = Answer.objects.create(workspace=workspace, query="q", mode="normal")
    assert a.public_id.startswith("a-") and a.public_id != b.public_id


def test_it_creates_the_role_groups():
    from django.contrib.auth.models import Group

    from audit import roles

    assert set(Group.objects.values_list("name", flat=True)) >= set(roles.ALL_ROLES)


def test_the_admin_console_cannot_add_change_or_delete_audit_events(client, admin_user_obj):
    event = AuditEvent.objects.create(action="test.done", object_type="x", object_id="1")
    client.force_login(admin_user_obj)
    assert client.get("/admin/audit/auditevent/add/").status_code == 403
    assert client.post(f"/admin/audit/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get(f"/admin/audit/auditevent/{event.pk}/change/").status_code == 200  # viewable
    assert AuditEvent.objects.filter(pk=event.pk).exists()
