"""Limits of one audit request: claims per answer (413 naming the threshold), per workspace."""

from __future__ import annotations

import pytest

from audit import roles

pytestmark = pytest.mark.django_db


def _answer(n: int) -> str:
    return " ".join(f"Section {i} requires {i + 1} approvals." for i in range(1, n + 1))


def test_an_answer_with_more_claims_than_the_cap_gets_413_naming_the_threshold(client_for, make_user):
    from audit.models import Answer

    client = client_for(make_user("frontend", roles.SUBMITTER))
    response = client.post(
        "/api/v1/audits", {"query": "q", "answer": _answer(201), "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 413
    assert (
        "max_claims_per_answer" in response.json()["detail"]
        and "more than 200 claims" in response.json()["detail"]
    )
    assert "answer" in response.json()["errors"]
    assert not Answer.objects.exists()


def test_the_cap_is_a_workspace_threshold(client_for, make_user, admin_user_obj):
    from audit.models import Answer

    admin = client_for(admin_user_obj)
    assert (
        admin.put(
            "/api/v1/settings/thresholds",
            {"threshold_overrides": {"max_claims_per_answer": 3}},
            format="json",
        ).status_code
        == 200
    )
    client = client_for(make_user("frontend", roles.SUBMITTER))
    response = client.post(
        "/api/v1/audits", {"query": "q", "answer": _answer(4), "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 413 and "at most 3 claims" in response.json()["detail"]
    normal = client.post(
        "/api/v1/audits", {"query": "q", "answer": _answer(4), "mode": "normal"}, format="json"
    )
    assert normal.status_code == 201  # Normal mode verifies nothing, so it has no claims to cap
    assert Answer.objects.count() == 1


def test_an_answer_over_the_maximum_size_gets_413_naming_the_limit_before_anything_is_read(
    client_for, make_user, settings
):
    from audit import constants
    from audit.models import Answer

    settings.THEORIA = {**settings.THEORIA, "API_MAX_BODY_BYTES": 2_000_000}
    client = client_for(make_user("frontend", roles.SUBMITTER))
    text = "Section one requires two approvals. " * (constants.MAX_ANSWER_CHARS // 36 + 1)
    response = client.post(
        "/api/v1/audits", {"query": "q", "answer": text, "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 413
    assert f"at most {constants.MAX_ANSWER_CHARS:,}" in response.json()["detail"]
    assert "answer" in response.json()["errors"] and not Answer.objects.exists()


def test_the_claims_cap_stops_the_extraction_at_the_first_claim_past_it():
    """40,000 tiny sentences were all read (5.2 s of CPU) before the 413 (issue 46)."""
    from audit.pipeline.extraction import extract_claims

    text = " ".join(f"Rule {i} holds." for i in range(40_000))
    claims = extract_claims(text, limit=200)
    assert len(claims) == 201 and claims[-1].text == "Rule 200 holds."
    assert len(extract_claims(_answer(5), limit=200)) == 5


def test_one_user_runs_one_expensive_audit_at_a_time_and_others_are_not_held(client_for, make_user):
    """Two requests of long answers from one client held every worker (issue 46): while one of the
    user's expensive audits runs, their next one is refused with 429 and Retry-After."""
    from audit import constants
    from audit.services.submission_compute import expensive_audit_slot

    ann, bob = make_user("ann", roles.SUBMITTER), make_user("bob", roles.SUBMITTER)
    long = _answer(2_000)[: constants.EXPENSIVE_AUDIT_CHARS]
    body = {"query": "q", "answer": long, "mode": "normal"}

    with expensive_audit_slot(ann, long):  # ann's first expensive audit, still running
        refused = client_for(ann).post("/api/v1/audits", body, format="json")
        short = client_for(ann).post("/api/v1/audits", {**body, "answer": _answer(3)}, format="json")
        other = client_for(bob).post("/api/v1/audits", body, format="json")

    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "answer" in refused.json()["errors"] and "running" in refused.json()["detail"]
    assert short.status_code == 201 and other.status_code == 201
    assert client_for(ann).post("/api/v1/audits", body, format="json").status_code == 201  # given back
