"""Reads: answers, claim cards with every filter, evidence, runs, exports and the daily bundle."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
from django.utils import timezone

from tests.api.conftest import build_answer

DAY = dt.datetime(2026, 3, 10, 9, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def reader(client_for, auditor):
    return client_for(auditor)


@pytest.fixture
def two_answers(workspace):
    """A neuroscience Audit-Local answer on DAY and a general Audit-Web answer the day after."""
    first = build_answer(workspace, created_at=DAY)
    second = build_answer(
        workspace,
        created_at=DAY + dt.timedelta(days=1),
        mode="audit-web",
        domain="general",
        specs=(("SUPPORTED", "supported", 0.97, "Doc A", "a"), ("NEI", "weak", 0.55, "Doc B", "b")),
    )
    return first, second


def claim_keys(response):
    return sorted((c["answer_id"], c["claim_id"]) for c in response.json()["results"])


def test_it_lists_answers_newest_first_with_claim_counts(reader, two_answers):
    (first, _), (second, _) = two_answers

    data = reader.get("/api/v1/answers").json()

    assert [a["answer_id"] for a in data["results"]] == [second.public_id, first.public_id]
    assert [a["claims"] for a in data["results"]] == [2, 3]


def test_it_returns_one_answer_with_claim_cards_audit_block_and_escalations(reader, two_answers):
    (first, _), _ = two_answers

    data = reader.get(f"/api/v1/answers/{first.public_id}").json()

    assert [c["claim_id"] for c in data["claims"]] == ["c1", "c2", "c3"]
    assert set(data["audit"]) == {
        "audit_score",
        "faithfulness",
        "answer_relevance",
        "context_precision",
        "context_recall",
        "coverage",
        "unsupported_rate",
        "risk_flags",
        "warnings",
        "duration_ms",
        "llm_calls",
        "rag_score",
        "verification_profile",
        "run_id",
        "deep_checks",
    }
    assert data["audit"]["audit_score"] == 0.62
    assert data["escalations"] == []
    assert data["original_answer"] == data["answer"]  # not revised: the text received is the text returned
    assert "revisions" not in data


def test_it_includes_the_original_answer_and_the_revision_ledger_when_revised(reader, workspace):
    answer, _ = build_answer(workspace)
    answer.text = "Revised text."
    answer.revisions = [{"attempt": 1, "edits": [{"claim_id": "c2", "action": "removed"}]}]
    answer.save(update_fields=["text", "revisions"])

    data = reader.get(f"/api/v1/answers/{answer.public_id}").json()

    assert data["answer"] == "Revised text."
    assert data["original_answer"] == answer.original_text
    assert data["revisions"][0]["edits"][0]["action"] == "removed"


def test_it_answers_404_for_an_unknown_answer_or_claim(reader, two_answers):
    (first, _), _ = two_answers

    assert reader.get("/api/v1/answers/a-nope").status_code == 404
    assert reader.get(f"/api/v1/answers/{first.public_id}/claims/c9").status_code == 404
    assert reader.get(f"/api/v1/answers/{first.public_id}/claims/c2").json()["label"] == "REFUTED"


def test_it_hides_answers_of_another_workspace(reader, workspace):
    from audit.models import Workspace

    other = Workspace.objects.create(name="Other", slug="other")
    answer, _ = build_answer(other)

    assert reader.get(f"/api/v1/answers/{answer.public_id}").status_code == 404
    assert reader.get("/api/v1/claims").json()["count"] == 0


@pytest.mark.parametrize(
    "query, expected",
    [
        ("label=REFUTED", [("a", "c2")]),
        ("label=REFUTED,NEI", [("a", "c2"), ("a", "c3"), ("b", "c2")]),
        ("label=SUPPORTED&label=NEI", [("a", "c1"), ("a", "c3"), ("b", "c1"), ("b", "c2")]),
        ("confidence_min=0.3&confidence_max=0.6", [("a", "c3"), ("b", "c2")]),
        ("confidence_max=0.08", [("a", "c2")]),
        ("date_from=2026-03-11", [("b", "c1"), ("b", "c2")]),
        ("date_to=2026-03-10", [("a", "c1"), ("a", "c2"), ("a", "c3")]),
        ("date_from=2026-03-10&date_to=2026-03-10&label=NEI", [("a", "c3")]),
        ("mode=audit-web", [("b", "c1"), ("b", "c2")]),
        ("domain=neuroscience&label=SUPPORTED", [("a", "c1")]),
        ("escalation=none&label=REFUTED", [("a", "c2")]),
        ("escalation=open", []),
    ],
)
def test_it_filters_claim_cards(reader, two_answers, query, expected):
    (first, _), (second, _) = two_answers
    names = {"a": first.public_id, "b": second.public_id}

    response = reader.get(f"/api/v1/claims?{query}")

    assert response.status_code == 200, response.content
    assert claim_keys(response) == sorted((names[a], c) for a, c in expected)


@pytest.mark.parametrize(
    "query, field",
    [
        ("label=MAYBE", "label"),
        ("confidence_min=high", "confidence_min"),
        ("confidence_max=1.5", "confidence_max"),
        ("date_from=2026-13-45", "date_from"),
        ("date_from=", "date_from"),
        ("mode=fast", "mode"),
        ("escalation=maybe", "escalation"),
    ],
)
def test_it_answers_a_bad_filter_with_400_naming_the_parameter(reader, two_answers, query, field):
    response = reader.get(f"/api/v1/claims?{query}")

    assert response.status_code == 400
    assert field in response.json()["errors"]


def test_it_paginates_claim_cards_with_a_page_size(reader, two_answers):
    page1 = reader.get("/api/v1/claims?page_size=2").json()
    page3 = reader.get("/api/v1/claims?page_size=2&page=3").json()

    assert page1["count"] == 5 and len(page1["results"]) == 2 and page1["next"]
    assert len(page3["results"]) == 1 and page3["next"] is None
    assert reader.get("/api/v1/claims?page=99").status_code == 404


def test_it_lists_claim_cards_in_a_fixed_number_of_queries(reader, workspace, django_assert_max_num_queries):
    for day in range(6):
        build_answer(workspace, created_at=DAY + dt.timedelta(days=day))
    reader.get("/api/v1/claims")  # warm up (auth token, session, profile lookups)

    with django_assert_max_num_queries(9):
        data = reader.get("/api/v1/claims?page_size=100").json()

    assert data["count"] == 18


def test_it_shows_review_cases_on_claim_cards_and_filters_by_escalation_state(reader, two_answers):
    from escalation.models import ReviewCase

    (first, claims), _ = two_answers
    ReviewCase.objects.create(
        workspace=first.workspace,
        number=7,
        ticket="COMP-ESC-000007",
        claim=claims[1],
        trigger=ReviewCase.Trigger.LOW_CONFIDENCE,
        tier=1,
        due_at=timezone.now() + dt.timedelta(minutes=30),
        clock_started_at=timezone.now(),
    )

    open_cards = reader.get("/api/v1/claims?escalation=open").json()["results"]
    answer = reader.get(f"/api/v1/answers/{first.public_id}").json()

    assert [
        (c["claim_id"], c["escalations"][0]["ticket"], c["escalations"][0]["type"]) for c in open_cards
    ] == [("c2", "COMP-ESC-000007", "review")]
    assert answer["escalations"][0]["ticket"] == "COMP-ESC-000007" and answer["escalations"][0]["tier"] == 1
    assert reader.get("/api/v1/claims?escalation=resolved").json()["count"] == 0
    assert reader.get("/api/v1/claims?escalation=none").json()["count"] == 4


def test_it_lists_evidence_and_runs_with_filters(reader, two_answers):
    (first, _), (second, _) = two_answers

    evidence = reader.get(f"/api/v1/evidence?answer={first.public_id}&claim_id=c2").json()["results"]
    runs = reader.get("/api/v1/runs?mode=audit-web").json()["results"]

    assert [(e["claim_id"], e["source_id"], e["provenance"]) for e in evidence] == [
        ("c2", "kb_chunk_2", {"method": "hybrid"})
    ]
    assert [r["answer_id"] for r in runs] == [second.public_id]
    assert reader.get("/api/v1/runs?kind=weekly").status_code == 400


# --- Exports -----------------------------------------------------------------------------


def test_it_streams_a_filtered_csv_export_of_claim_cards(reader, two_answers):
    response = reader.get("/api/v1/claim-cards/export?format=csv&label=REFUTED,NEI&mode=audit-local")

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["claim_id"], r["label"], r["mode"]) for r in rows] == [
        ("c2", "REFUTED", "Audit-Local"),
        ("c3", "NEI", "Audit-Local"),
    ]
    assert rows[0]["evidence_source_ids"] == "kb_chunk_2"
    assert rows[0]["confidence"] == "0.08"


def test_it_streams_a_json_export_made_of_claim_cards(reader, two_answers):
    from tests.api.test_serializers import CARD_EXAMPLE

    response = reader.get("/api/v1/claim-cards/export?format=json&domain=general")

    cards = json.loads(b"".join(response.streaming_content))
    assert response["Content-Type"] == "application/json"
    assert len(cards) == 2 and all(list(card) == list(CARD_EXAMPLE) for card in cards)


def test_it_neutralises_spreadsheet_formulas_in_csv_cells(reader, workspace):
    _answer, claims = build_answer(workspace)
    claims[0].text = '=HYPERLINK("http://evil")'
    claims[0].save(update_fields=["text"])

    response = reader.get("/api/v1/claim-cards/export?format=csv&label=SUPPORTED")

    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0]["text"].startswith("'=")


def test_it_refuses_an_unknown_export_format_or_filter(reader, two_answers):
    bad_format = reader.get("/api/v1/claim-cards/export?format=xlsx")
    bad_filter = reader.get("/api/v1/claim-cards/export?format=csv&confidence_min=x")

    assert bad_format.status_code == 400 and "format" in bad_format.json()["errors"]
    assert bad_filter.status_code == 400 and "confidence_min" in bad_filter.json()["errors"]


def test_it_bundles_the_days_low_confidence_refuted_and_nei_claims(reader, two_answers):
    response = reader.get("/api/v1/claim-cards/daily-bundle?date=2026-03-11&format=json")
    looser = reader.get("/api/v1/claim-cards/daily-bundle?date=2026-03-10&format=csv&threshold=0.3")

    cards = json.loads(b"".join(response.streaming_content))
    # day 2: NEI at 0.55 < 0.60 is in; SUPPORTED at 0.97 is not
    assert [(c["claim_id"], c["label"]) for c in cards] == [("c2", "NEI")]
    rows = list(csv.DictReader(io.StringIO(b"".join(looser.streaming_content).decode())))
    assert [r["claim_id"] for r in rows] == ["c2"]  # REFUTED 0.08 < 0.3; NEI 0.35 is not
    assert "low-confidence-claims-2026-03-10.csv" in looser["Content-Disposition"]


def test_it_uses_the_workspace_low_confidence_threshold_for_the_bundle(reader, two_answers, workspace):
    workspace.threshold_overrides = {"low_confidence_threshold": 0.5}
    workspace.save(update_fields=["threshold_overrides"])

    cards = json.loads(
        b"".join(reader.get("/api/v1/claim-cards/daily-bundle?date=2026-03-11&format=json").streaming_content)
    )

    assert cards == []  # NEI at 0.55 is no longer below the threshold


@pytest.mark.parametrize(
    "url, field",
    [
        ("/api/v1/claims?domain=%00", "domain"),
        ("/api/v1/claims?confidence_min=NaN", "confidence_min"),
        ("/api/v1/claims?confidence_min=1e999", "confidence_min"),
        ("/api/v1/answers/a%00b", "answer_id"),
        ("/api/v1/claims?date_from=99999-01-01", "date_from"),
        ("/api/v1/claim-cards/daily-bundle?date=2026-02-30", "date"),
        ("/api/v1/settings/conversations/%00", "conversation_id"),
        ("/api/v1/documents?domain=%00", "domain"),
        ("/api/v1/evidence?answer=%00", "answer"),
        ("/api/v1/runs?answer=ok&%00=1", "query"),
    ],
)
def test_it_answers_400_never_500_for_unstorable_or_invalid_query_values(reader, two_answers, url, field):
    response = reader.get(url)

    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]


def test_it_refuses_a_nul_character_in_a_multipart_field(client_for, admin_user_obj):
    from audit.models import Document

    response = client_for(admin_user_obj).post(
        "/api/v1/documents", {"title": "bad\x00title", "text": "Some text."}, format="multipart"
    )

    assert response.status_code == 400 and "title" in response.json()["errors"]
    assert not Document.objects.exists()


def test_it_filters_claims_whose_cases_are_all_resolved(reader, two_answers):
    from escalation.models import ReviewCase

    (first, claims), _ = two_answers
    now = timezone.now()
    ReviewCase.objects.create(
        workspace=first.workspace,
        number=8,
        ticket="COMP-ESC-000008",
        claim=claims[2],
        trigger=ReviewCase.Trigger.LOW_CONFIDENCE,
        tier=2,
        status=ReviewCase.Status.RESOLVED,
        resolved_at=now,
        decision=ReviewCase.Decision.CONFIRM,
        rationale="Checked.",
    )

    resolved = reader.get("/api/v1/claims?escalation=resolved").json()["results"]
    ever = reader.get("/api/v1/claims?escalation=any").json()["results"]

    assert [(c["claim_id"], c["escalations"][0]["status"]) for c in resolved] == [("c3", "resolved")]
    assert [c["claim_id"] for c in ever] == ["c3"]
    assert reader.get("/api/v1/claims?escalation=open").json()["count"] == 0


def test_it_logs_the_audit_web_reverification_on_the_claim_card(reader, workspace):
    answer, claims = build_answer(workspace, mode="audit-web")
    claims[2].method_results = {
        "web": {
            "reasons": ["no_local_support"],
            "providers": ["pubmed"],
            "verified_at": "2026-03-10T09:30:05+00:00",
        }
    }
    claims[2].save(update_fields=["method_results"])

    card = reader.get(f"/api/v1/answers/{answer.public_id}/claims/c3").json()
    answer_body = reader.get(f"/api/v1/answers/{answer.public_id}").json()

    assert card["escalations"] == [
        {
            "type": "audit-web",
            "ticket": "",
            "tier": None,
            "status": "verified",
            "due_at": None,
            "reasons": ["no_local_support"],
            "at": "2026-03-10T09:30:05Z",
        }
    ]
    assert answer_body["escalations"] == []  # the answer lists human-review cases only


@pytest.mark.parametrize(
    "query", ["confidence_min=0.9&confidence_max=0.1", "date_from=2026-03-12&date_to=2026-03-10"]
)
def test_a_range_the_wrong_way_round_is_an_empty_list_not_an_error(reader, two_answers, query):
    # each value is valid by the schema on its own, which cannot say that one exceeds the other
    response = reader.get(f"/api/v1/claims?{query}")

    assert response.status_code == 200 and response.json()["count"] == 0


def test_an_empty_value_of_a_filter_that_is_not_text_is_a_400_naming_it_while_an_empty_search_is_any(
    reader, two_answers
):
    refused = reader.get("/api/v1/claims?date_from=&label=")
    assert refused.status_code == 400
    assert set(refused.json()["errors"]) == {"date_from", "label"}

    assert reader.get("/api/v1/claims?q=").status_code == 200
