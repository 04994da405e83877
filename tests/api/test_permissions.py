"""The permission matrix, role by role: read, submit audits, act on escalations, change settings."""

from __future__ import annotations

import pytest

from audit import roles
from audit.models import Answer, AuditEvent, Document
from tests.api.conftest import build_answer

ROLES = {
    "anonymous": None,
    "no role": "",
    "submitter": roles.SUBMITTER,
    "L1 analyst": roles.L1_ANALYST,
    "L2 expert": roles.L2_EXPERT,
    "L3 lead": roles.L3_LEAD,
    "auditor": roles.AUDITOR,
    "admin": roles.ADMIN,
}
# who may do what (anonymous is 401 everywhere, a user without the right role 403)
MATRIX = {
    "read": {"submitter", "L1 analyst", "L2 expert", "L3 lead", "auditor", "admin"},
    "submit": {"submitter", "L1 analyst", "L2 expert", "L3 lead", "admin"},
    "escalate": {"L1 analyst", "L2 expert", "L3 lead", "admin"},
    "settings": {"admin"},
}


@pytest.fixture
def client_as(make_user, client_for):
    def factory(role_name: str):
        role = ROLES[role_name]
        if role is None:
            return client_for()
        return client_for(make_user(role_name.replace(" ", "_"), role or None))

    return factory


def attempt(client, action: str, workspace):
    answer, _ = build_answer(workspace)
    document = Document.objects.create(
        workspace=workspace, title="Doc", uri="kb://doc", content_hash="sha256:" + "0" * 64
    )
    if action == "read":
        return [
            client.get("/api/v1/claims"),
            client.get(f"/api/v1/answers/{answer.public_id}"),
            client.get("/api/v1/claim-cards/export?format=csv"),
            client.get("/api/v1/documents"),
            client.get("/api/v1/settings/workspace"),
        ]
    if action == "submit":
        return [
            client.post(
                "/api/v1/audits", {"query": "q", "answer": "An answer.", "mode": "normal"}, format="json"
            )
        ]
    if action == "escalate":
        return [
            client.post(
                "/api/v1/cases/open",
                {"answer_id": answer.public_id, "claim_id": "c2", "reason": "Looks wrong to me."},
                format="json",
            )
        ]
    return [
        client.patch("/api/v1/settings/workspace", {"default_mode": "audit-local"}, format="json"),
        client.put(
            "/api/v1/settings/thresholds",
            {"threshold_overrides": {"audit_score_threshold": 0.7}},
            format="json",
        ),
        client.put("/api/v1/settings/conversations/c-1", {"default_mode": "normal"}, format="json"),
        client.delete(f"/api/v1/documents/{document.pk}"),
    ]


@pytest.mark.parametrize("action", list(MATRIX))
@pytest.mark.parametrize("role_name", list(ROLES))
def test_it_enforces_the_permission_matrix(client_as, workspace, role_name, action):
    client = client_as(role_name)
    answers_before = Answer.objects.count()

    responses = attempt(client, action, workspace)

    codes = [r.status_code for r in responses]
    if role_name == "anonymous":
        assert set(codes) == {401}, codes
    elif role_name in MATRIX[action]:
        assert all(code < 400 for code in codes), [(r.status_code, r.content[:200]) for r in responses]
    else:
        assert set(codes) == {403}, codes
        assert Answer.objects.count() == answers_before + 1  # only the fixture's answer
        assert not AuditEvent.objects.filter(action__startswith="settings.").exists()
        assert Document.objects.count() == 1


def test_it_accepts_a_logged_in_session_as_well_as_a_token(client, make_user):
    user = make_user("sess", roles.AUDITOR)
    client.force_login(user)

    assert client.get("/api/v1/claims").status_code == 200


def test_it_requires_the_csrf_token_for_session_writes(make_user):
    from django.test import Client

    user = make_user("sess", roles.ADMIN)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)

    response = browser.patch(
        "/api/v1/settings/workspace", {"default_mode": "audit-local"}, content_type="application/json"
    )

    assert response.status_code == 403
    assert not AuditEvent.objects.filter(action__startswith="settings.").exists()
