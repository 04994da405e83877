"""The escalation queue API over real HTTP requests (Django test client, session auth)."""

from __future__ import annotations

import pytest
from django.test import Client

from audit import roles
from audit.models import Claim
from escalation import services
from escalation.models import ReviewCase

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_user():
    def login(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return login


def post(client, path, data=None):
    return client.post(path, data or {}, content_type="application/json")


def test_the_queue_lists_cases_in_risk_order_with_their_sla(make_answer, workspace, analyst, as_user):
    workspace.regulated_domains = ["finance"]
    workspace.save(update_fields=["regulated_domains"])
    services.cases_open_for_answer(answer=make_answer([("NEI", 0.55)], importance="minor"))
    services.cases_open_for_answer(
        answer=make_answer([("REFUTED", 0.02)], domain="finance", importance="critical")
    )
    response = as_user(analyst).get("/api/v1/cases")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert [r["ticket"] for r in rows] == ["COMP-ESC-000002", "COMP-ESC-000001"]
    assert rows[0]["risk_score"] > rows[1]["risk_score"]
    assert rows[0]["tier"] == 1 and rows[0]["sla_state"] == "on_track" and rows[0]["due_at"]
    assert rows[0]["claim"]["label"] == "REFUTED"


def test_the_queue_filters_by_tier_status_owner_and_domain(make_answer, analyst, as_user):
    a, b, c = (
        services.cases_open_for_answer(answer=make_answer([("REFUTED", 0.1)], domain=d))[0]
        for d in ("med", "law", "med")
    )
    services.case_acknowledge(case=a, actor=analyst)
    services.case_escalate(case=b, actor=analyst, reason="expert needed")
    client = as_user(analyst)

    def tickets(query):
        response = client.get("/api/v1/cases?" + query)
        assert response.status_code == 200, response.content
        return sorted(r["ticket"] for r in response.json()["results"])

    assert tickets("tier=2") == [b.ticket]
    assert tickets("status=acknowledged") == [a.ticket]
    assert tickets("owner=me") == [a.ticket]
    assert tickets("owner=none&domain=MED") == [c.ticket]
    assert tickets("status=open&status=acknowledged&tier=1") == [a.ticket, c.ticket]


def test_a_bad_filter_value_answers_400_naming_the_field(case, analyst, as_user):
    response = as_user(analyst).get("/api/v1/cases?tier=7")
    assert response.status_code == 400
    assert "tier" in response.json()["errors"] or "tier" in response.json()


def test_the_queue_costs_the_same_number_of_queries_for_3_or_12_cases(
    make_answer, analyst, as_user, django_assert_max_num_queries
):
    client = as_user(analyst)
    for _ in range(3):
        services.cases_open_for_answer(answer=make_answer([("REFUTED", 0.1)]))
    client.get("/api/v1/cases")  # warm the session and role caches
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as small:
        assert client.get("/api/v1/cases").status_code == 200
    for _ in range(9):
        services.cases_open_for_answer(answer=make_answer([("NEI", 0.3)]))
    with django_assert_max_num_queries(len(small.captured_queries)):
        response = client.get("/api/v1/cases")
    assert response.json()["count"] == 12


def test_the_detail_shows_claim_context_evidence_and_events(case, analyst, as_user):
    response = as_user(analyst).get(f"/api/v1/cases/{case.ticket}")
    assert response.status_code == 200
    body = response.json()
    assert body["ticket"] == case.ticket
    assert body["answer"]["query"] == "What does the policy say?"
    assert body["evidence"][0]["hash"].startswith("sha256:")
    assert [e["kind"] for e in body["events"]] == ["opened"]
    assert as_user(analyst).get("/api/v1/cases/COMP-ESC-999999").status_code == 404


def test_an_anonymous_caller_or_a_user_without_role_is_refused(case, make_user, as_user):
    assert Client().get("/api/v1/cases").status_code in (401, 403)
    nobody = make_user("nobody")
    assert as_user(nobody).get("/api/v1/cases").status_code == 403


def test_an_auditor_may_read_but_not_act(case, auditor, as_user):
    client = as_user(auditor)
    assert client.get(f"/api/v1/cases/{case.ticket}").status_code == 200
    assert post(client, f"/api/v1/cases/{case.ticket}/acknowledge").status_code == 403
    case.refresh_from_db()
    assert case.status == "open"


def test_acknowledging_twice_answers_409_the_second_time(case, analyst, make_user, as_user):
    other = make_user("analyst2", roles.L1_ANALYST)
    first = post(as_user(analyst), f"/api/v1/cases/{case.ticket}/acknowledge")
    assert first.status_code == 200
    assert first.json()["status"] == "acknowledged" and first.json()["owner"] == "analyst1"
    second = post(as_user(other), f"/api/v1/cases/{case.ticket}/acknowledge")
    assert second.status_code == 409
    assert "acknowledged" in second.json()["detail"]
    assert (
        second.json()["code"] in ("case_conflict", "transition_not_allowed") and second.json()["errors"] == {}
    )


def test_acting_on_a_stale_version_answers_409_and_changes_nothing(case, analyst, as_user):
    client = as_user(analyst)
    stale = case.version
    assert post(client, f"/api/v1/cases/{case.ticket}/assign", {"owner": "analyst1"}).status_code == 200
    response = post(client, f"/api/v1/cases/{case.ticket}/escalate", {"reason": "expert", "version": stale})
    assert response.status_code == 409
    assert "changed by someone else" in response.json()["detail"]
    case.refresh_from_db()
    assert case.tier == 1


def test_escalating_without_a_note_answers_400_naming_reason(case, analyst, as_user):
    response = post(as_user(analyst), f"/api/v1/cases/{case.ticket}/escalate", {"reason": ""})
    assert response.status_code == 400
    assert "reason" in response.content.decode()
    case.refresh_from_db()
    assert case.tier == 1 and case.events.count() == 1


def test_resolving_with_a_bad_decision_answers_400_naming_decision(case, analyst, as_user):
    response = post(
        as_user(analyst), f"/api/v1/cases/{case.ticket}/resolve", {"decision": "maybe", "rationale": "x"}
    )
    assert response.status_code == 400
    assert "decision" in response.content.decode()
    case.refresh_from_db()
    assert case.status == "open"


def test_assigning_to_an_unknown_user_answers_400_naming_owner(case, analyst, as_user):
    owner_before = case.owner_id
    response = post(as_user(analyst), f"/api/v1/cases/{case.ticket}/assign", {"owner": "ghost"})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["owner"]
    case.refresh_from_db()
    assert case.owner_id == owner_before and case.events.count() == 1


def test_a_full_walk_through_the_tiers_ends_with_the_label_on_the_claim(case, analyst, expert, lead, as_user):
    path = f"/api/v1/cases/{case.ticket}"
    assert post(as_user(analyst), f"{path}/acknowledge").status_code == 200
    assert post(as_user(analyst), f"{path}/note", {"note": "Evidence looks thin"}).status_code == 200
    assert post(as_user(analyst), f"{path}/escalate", {"reason": "Needs a domain expert"}).json()["tier"] == 2
    assert (
        post(as_user(expert), f"{path}/pause", {"reason": "Waiting for the author"}).json()["status"]
        == "paused"
    )
    assert post(as_user(expert), f"{path}/resume").json()["status"] == "open"
    assert (
        post(as_user(expert), f"{path}/escalate", {"reason": "Dispute: legal must look"}).json()["tier"] == 3
    )
    body = post(
        as_user(lead), f"{path}/resolve", {"decision": "relabel_nei", "rationale": "Source is ambiguous"}
    ).json()
    assert body["status"] == "resolved" and body["decision"] == "relabel_nei"
    kinds = [e["kind"] for e in body["events"]]
    assert kinds == [
        "opened",
        "acknowledged",
        "note",
        "escalated",
        "paused",
        "resumed",
        "escalated",
        "resolved",
    ]
    claim = Claim.objects.get(pk=case.claim_id)
    assert (claim.label, claim.machine_label) == ("NEI", "REFUTED")
    reopened = post(as_user(lead), f"{path}/reopen", {"reason": "New source arrived"})
    assert reopened.status_code == 200 and reopened.json()["status"] == "open"


def test_a_moderator_opens_a_case_for_a_claim_by_answer_and_claim_id(make_answer, analyst, as_user):
    answer = make_answer([("SUPPORTED", 0.97)])
    client = as_user(analyst)
    response = post(
        client,
        "/api/v1/cases/open",
        {"answer_id": answer.public_id, "claim_id": "c1", "reason": "User report"},
    )
    assert response.status_code == 201
    assert response.json()["trigger"] == "manual"
    again = post(
        client, "/api/v1/cases/open", {"answer_id": answer.public_id, "claim_id": "c1", "reason": "again"}
    )
    assert again.status_code == 409
    missing = post(
        client, "/api/v1/cases/open", {"answer_id": answer.public_id, "claim_id": "c9", "reason": "x"}
    )
    assert missing.status_code == 404 and "claim_id" in missing.json()["errors"]  # a row, as a path
    assert ReviewCase.objects.count() == 1


def test_a_knowledge_base_correction_shows_in_the_curation_list(case, analyst, as_user):
    client = as_user(analyst)
    post(
        client,
        f"/api/v1/cases/{case.ticket}/resolve",
        {"decision": "kb_correction", "rationale": "Page 3 is outdated"},
    )
    rows = client.get("/api/v1/curation-items?status=open").json()["results"]
    assert [(r["ticket"], r["reason"], r["source"]) for r in rows] == [
        (case.ticket, "Page 3 is outdated", "review")
    ]
    assert client.get("/api/v1/curation-items?status=nope").status_code == 400


def test_the_openapi_schema_documents_each_transition_with_its_own_input():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    paths = schema["paths"]
    for name in ("acknowledge", "assign", "note", "escalate", "pause", "resume", "resolve", "reopen"):
        body = paths[f"/api/v1/cases/{{ticket}}/{name}"]["post"]["requestBody"]["content"][
            "application/json"
        ]["schema"]
        assert body["$ref"].endswith(f"Case{name.capitalize()}ApiInput")
    assert set(schema["components"]["schemas"]["CaseResolveApiInput"]["required"]) == {
        "decision",
        "rationale",
    }
    listed = paths["/api/v1/cases"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert listed["$ref"].endswith("PaginatedCaseList")


def test_escalation_errors_are_theoria_errors_mapped_to_http_by_the_one_handler():
    from audit.api.exceptions import api_exception_handler
    from audit.errors import Conflict, TheoriaError
    from escalation.errors import CaseConflict, EscalationError, NotPermitted

    assert issubclass(EscalationError, TheoriaError)
    for error, status, code in (
        (CaseConflict("COMP-ESC-000001 changed"), 409, "case_conflict"),
        (NotPermitted("an L1 analyst may not resolve at L3"), 403, "not_permitted"),
        (Conflict("key reused"), 409, "conflict"),
    ):
        response = api_exception_handler(error, {})
        assert response.status_code == status
        assert response.data == {"detail": str(error), "code": code, "errors": {}}
