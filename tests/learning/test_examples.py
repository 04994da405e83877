"""Reviewer decisions become labelled examples; they are read, exported and evaluated per workspace."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from audit.evaluation.bench_data import CLAIM_LABELS, read_jsonl
from audit.models import ReviewedExample
from audit.selectors.learning import benchmark_rows, examples_for_calibration
from audit.services.reviewed_examples import revision_review_example_record
from escalation import services
from tests.factories import AnswerFactory, ClaimFactory, EvidenceFactory, WorkspaceFactory
from tests.learning.conftest import generate, store

BENCHMARK_KEYS = {"id", "dataset", "claim", "evidence", "label", "fine_label", "domain", "meta"}


@pytest.fixture
def audited_claim(workspace):
    """A claim as the audit stores it: the judge's result with its version, two evidence passages."""
    answer = AnswerFactory(workspace=workspace, domain="finance", query="How long are invoices kept?")
    claim = ClaimFactory(
        answer=answer,
        claim_id="c1",
        text="Invoices are kept for ten years.",
        label="REFUTED",
        confidence=0.12,
        method_results={
            "entailment": {
                "ran": True,
                "score": 0.12,
                "details": {
                    "judge": "features",
                    "judge_version": "features:abc123",
                    "calibration": 4,
                    "logit": -1.75,
                },
            }
        },
    )
    EvidenceFactory(claim=claim, rank=0, source_id="kb_chunk_7", snippet="Invoices are kept for seven years.")
    EvidenceFactory(claim=claim, rank=1, source_id="kb_chunk_9", snippet="Receipts are scanned monthly.")
    return claim


@pytest.mark.parametrize(
    "decision, reviewer_label",
    [
        ("confirm", "REFUTED"),
        ("relabel_supported", "SUPPORTED"),
        ("relabel_refuted", "REFUTED"),
        ("relabel_nei", "NEI"),
        ("suppress", "REFUTED"),
    ],
)
def test_every_resolution_of_a_case_is_kept_as_a_labelled_example(
    audited_claim, lead, decision, reviewer_label
):
    (case,) = services.cases_open_for_answer(answer=audited_claim.answer)

    services.case_resolve(case=case, actor=lead, decision=decision, rationale="Checked the handbook")

    example = ReviewedExample.objects.get()
    assert (example.workspace, example.claim, example.source) == (
        audited_claim.answer.workspace,
        audited_claim,
        "case",
    )
    assert (example.decision, example.reviewer_label, example.reference) == (
        decision,
        reviewer_label,
        case.ticket,
    )
    assert (example.machine_label, example.machine_confidence, example.machine_logit) == (
        "REFUTED",
        0.12,
        -1.75,
    )
    assert (example.judge, example.judge_version, example.calibration_version) == (
        "features",
        "features:abc123",
        4,
    )
    assert example.claim_text == "Invoices are kept for ten years." and example.domain == "finance"
    assert [e["id"] for e in example.evidence] == ["kb_chunk_7", "kb_chunk_9"]
    assert example.evidence[0]["text"] == "Invoices are kept for seven years."
    assert (example.reviewer, example.reviewer_name, example.rationale) == (
        lead,
        "lead1",
        "Checked the handbook",
    )
    case.refresh_from_db()
    assert example.decided_at == case.resolved_at
    assert case.events.get(kind="resolved").details["reviewed_example"] == example.pk


def test_a_suppressed_answer_makes_a_supported_claim_a_not_supported_example(audited_claim, lead):
    ReviewedExample.objects.all().delete()
    type(audited_claim).objects.filter(pk=audited_claim.pk).update(
        label="SUPPORTED", machine_label="SUPPORTED"
    )
    case = services.case_open(
        claim=type(audited_claim).objects.get(pk=audited_claim.pk), actor=lead, reason="look"
    )

    services.case_resolve(case=case, actor=lead, decision="suppress", rationale="Not for customers")

    assert ReviewedExample.objects.get().reviewer_label == "NEI"


def test_a_knowledge_base_correction_is_no_verdict_on_the_claim(audited_claim, analyst):
    (case,) = services.cases_open_for_answer(answer=audited_claim.answer)

    services.case_resolve(case=case, actor=analyst, decision="kb_correction", rationale="The handbook is old")

    assert not ReviewedExample.objects.exists()


def test_an_accepted_or_rejected_revision_is_an_example_of_its_own_wording(audited_claim, expert):
    audited_claim.revision = {
        "strategy": "correct",
        "text": "Invoices are kept for seven years.",
        "label": "SUPPORTED",
        "confidence": 0.93,
        "passage_id": "kb_chunk_7",
    }
    audited_claim.save(update_fields=["revision"])

    accepted = revision_review_example_record(
        claim=audited_claim, accepted=True, actor=expert, rationale="ok"
    )
    rejected = revision_review_example_record(claim=audited_claim, accepted=False, actor=expert)

    assert (accepted.source, accepted.decision, accepted.reviewer_label) == (
        "revision",
        "revision_accepted",
        "SUPPORTED",
    )
    assert (rejected.decision, rejected.reviewer_label) == ("revision_rejected", "NEI")
    assert accepted.claim_text == "Invoices are kept for seven years."
    assert (accepted.machine_label, accepted.machine_confidence, accepted.machine_logit) == (
        "SUPPORTED",
        0.93,
        None,
    )
    assert [e["id"] for e in accepted.evidence] == ["kb_chunk_7"]  # the passage the revision rests on
    assert accepted.reference == "revision:correct" and accepted.judge_version == "features:abc123"
    audited_claim.revision = {"strategy": "remove", "text": "", "label": None}
    assert revision_review_example_record(claim=audited_claim, accepted=True, actor=expert) is None


def test_a_claim_decided_again_counts_once_as_decided_last(audited_claim, lead):
    (case,) = services.cases_open_for_answer(answer=audited_claim.answer)
    services.case_resolve(case=case, actor=lead, decision="confirm", rationale="first look")
    case = services.case_reopen(case=case, actor=lead, reason="new evidence")
    services.case_resolve(case=case, actor=lead, decision="relabel_supported", rationale="second look")

    assert ReviewedExample.objects.count() == 2
    (kept,) = examples_for_calibration(workspace=audited_claim.answer.workspace)
    assert kept.decision == "relabel_supported"


def test_the_export_is_jsonl_in_the_benchmark_claim_format_that_evaluate_reads(workspace, reviewer, tmp_path):
    from audit.evaluation.bench_data import group_key
    from audit.evaluation.cli import claim_evidence
    from audit.evaluation.entailment_fit import load_dev

    examples = store(workspace, generate(6, seed=11), reviewer=reviewer)
    path = tmp_path / "reviewed.jsonl"

    call_command("export_reviewed_examples", "--workspace", workspace.slug, "--output", str(path))

    good, bad = read_jsonl(path, ("id", "claim", "evidence", "label"))
    assert not bad and len(good) == 6
    rows = [rec for _, rec in good]
    assert all(set(r) == BENCHMARK_KEYS and r["label"] in CLAIM_LABELS for r in rows)
    newest = examples[-1]
    row = next(r for r in rows if r["id"] == f"{workspace.slug}-review-{newest.pk}")
    assert row["dataset"] == f"review:{workspace.slug}" and row["claim"] == newest.claim_text
    assert row["evidence"] == [
        {"id": newest.evidence[0]["id"], "title": "Handbook", "text": newest.evidence[0]["text"]}
    ]
    assert row["fine_label"] == newest.decision and row["domain"] == newest.domain
    meta = row["meta"]
    assert (
        meta["machine_label"] == newest.machine_label
        and meta["machine_confidence"] == newest.machine_confidence
    )
    assert meta["judge_version"].startswith("features:") and meta["reviewer"] == "reviewer1"
    assert meta["answer_id"] == newest.claim.answer.public_id and meta["decided_at"]
    assert load_dev(path)[0]["id"] == rows[0]["id"]  # the loader of `evaluate --claims`
    assert claim_evidence(row)[0]["text"] == newest.evidence[0]["text"] and group_key(row)


def test_the_export_command_refuses_an_unknown_workspace_in_one_sentence(db):
    with pytest.raises(CommandError, match="no workspace with the slug 'nowhere'"):
        call_command("export_reviewed_examples", "--workspace", "nowhere")


def test_reads_and_exports_are_scoped_to_the_callers_workspace(workspace, reviewer, client, make_user):
    from audit import roles

    store(workspace, generate(3, seed=12), reviewer=reviewer)
    other = WorkspaceFactory(slug="other-ws")
    other_reviewer = make_user("other-rev", roles.L1_ANALYST)
    from audit.models import UserProfile

    UserProfile.objects.filter(user=other_reviewer).update(workspace=other)
    store(other, generate(2, seed=13), reviewer=other_reviewer)

    assert len(list(benchmark_rows(workspace=other))) == 2
    client.force_login(other_reviewer)
    listed = client.get("/api/v1/reviewed-examples").json()
    assert listed["count"] == 2 and {r["reviewer"] for r in listed["results"]} == {"other-rev"}
    export = client.get("/api/v1/reviewed-examples/export")
    assert export.status_code == 200 and export["Content-Type"].startswith("application/x-ndjson")
    lines = b"".join(export.streaming_content).decode().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["dataset"] == "review:other-ws" for line in lines)
    assert 'filename="reviewed-examples-other-ws-' in export["Content-Disposition"]
    client.force_login(reviewer)
    assert client.get("/api/v1/reviewed-examples").json()["count"] == 3
    assert client.get("/api/v1/reviewed-examples?source=revision").json()["count"] == 0
    assert client.get("/api/v1/reviewed-examples?decision=shrug").status_code == 400


def test_the_admin_downloads_selected_examples_as_jsonl(workspace, reviewer, admin_user_obj, client):
    examples = store(workspace, generate(3, seed=14), reviewer=reviewer)
    client.force_login(admin_user_obj)

    response = client.post(
        "/admin/audit/reviewedexample/",
        {"action": "download_jsonl", "_selected_action": [e.pk for e in examples[:2]]},
    )

    assert response.status_code == 200
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(f"{workspace.slug}-review-{e.pk}" for e in examples[:2])
