"""POST /api/v1/audits: Normal mode, idempotency, mode resolution and every kind of bad input."""

from __future__ import annotations

import json

import pytest

from audit.models import Answer, AuditEvent, Claim, IdempotencyKey

URL = "/api/v1/audits"

CONTEXTS = [
    {
        "id": "kb1",
        "title": "Synaptic Plasticity Overview",
        "uri": "kb://synaptic",
        "text": "LTP depends on NMDA receptors.",
        "published_at": "2024-05-01",
    },
    {"id": "kb2", "title": "Hippocampus", "text": "The hippocampus has three layers."},
]
BODY = {
    "query": "What does LTP require?",
    "answer": "LTP requires NMDA receptors [1]. It has three layers [cite:kb2].",
    "contexts": CONTEXTS,
    "mode": "normal",
    "conversation_id": "conv-1",
    "domain": "neuroscience",
}


def post(client, body, **headers):
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(URL, data=raw, content_type="application/json", **headers)


def snapshot():
    return (
        Answer.objects.count(),
        Claim.objects.count(),
        AuditEvent.objects.count(),
        IdempotencyKey.objects.count(),
    )


# --- Normal mode ---------------------------------------------------------------------------


def test_it_stores_and_returns_a_normal_answer_with_its_citations_and_no_verification(client_for, submitter):
    response = post(client_for(submitter), BODY)

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["mode"] == "normal"
    assert data["answer"] == BODY["answer"]
    assert data["claims"] == [] and data["audit"] is None and data["escalations"] == []
    assert [(c["anchor"], c["id"]) for c in data["citations"]] == [("1", "kb1"), ("cite:kb2", "kb2")]
    answer = Answer.objects.get(public_id=data["answer_id"])
    assert answer.mode == "normal" and answer.user == submitter and answer.conversation_id == "conv-1"
    assert answer.contexts[0]["published_at"] == "2024-05-01"
    assert not answer.runs.exists() and not answer.claims.exists()
    assert AuditEvent.objects.filter(action="answer.recorded", object_id=str(answer.pk)).exists()


def test_it_marks_a_citation_that_names_no_context_as_dangling(client_for, submitter):
    response = post(client_for(submitter), {**BODY, "answer": "LTP requires NMDA receptors [7]."})

    assert response.json()["citations"] == [{"anchor": "7", "id": None, "title": "", "uri": ""}]


def test_it_requires_an_answer_when_no_llm_is_configured_to_draft_one(client_for, submitter, settings):
    settings.THEORIA = {**settings.THEORIA, "LLM_BASE_URL": ""}
    body = {k: v for k, v in BODY.items() if k != "answer"}
    before = snapshot()

    response = post(client_for(submitter), body)

    # valid by the schema, impossible without an LLM: 409 (a 400 would say the request is wrong)
    assert response.status_code == 409
    assert "answer" in response.json()["errors"]
    assert snapshot() == before


# --- Idempotency ---------------------------------------------------------------------------


def test_it_returns_the_first_result_when_a_request_is_retried_with_its_key(client_for, submitter):
    client = client_for(submitter)
    first = post(client, BODY, HTTP_IDEMPOTENCY_KEY="req-42")
    # the same body with its keys in another order and other spacing is the same request
    retry = post(
        client, json.dumps(dict(reversed(list(BODY.items()))), indent=2), HTTP_IDEMPOTENCY_KEY="req-42"
    )

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json()
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert Answer.objects.count() == 1 and IdempotencyKey.objects.count() == 1


def test_it_refuses_the_same_key_with_a_different_body_and_changes_nothing(client_for, submitter):
    client = client_for(submitter)
    post(client, BODY, HTTP_IDEMPOTENCY_KEY="req-42")
    before = snapshot()

    response = post(client, {**BODY, "answer": "Something else entirely."}, HTTP_IDEMPOTENCY_KEY="req-42")

    assert response.status_code == 409
    assert "req-42" in response.json()["detail"]
    assert snapshot() == before


def test_it_scopes_keys_to_the_client_so_two_clients_may_use_the_same_key(client_for, submitter, analyst):
    a = post(client_for(submitter), BODY, HTTP_IDEMPOTENCY_KEY="k1")
    b = post(client_for(analyst), {**BODY, "answer": "Other text."}, HTTP_IDEMPOTENCY_KEY="k1")

    assert a.status_code == b.status_code == 201
    assert a.json()["answer_id"] != b.json()["answer_id"]


def test_it_refuses_a_key_with_spaces_or_control_characters(client_for, submitter):
    response = post(client_for(submitter), BODY, HTTP_IDEMPOTENCY_KEY="has space")

    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["errors"]
    assert Answer.objects.count() == 0


def test_it_does_not_store_a_key_for_a_rejected_request_so_a_corrected_retry_succeeds(client_for, submitter):
    client = client_for(submitter)
    assert post(client, {**BODY, "mode": "turbo"}, HTTP_IDEMPOTENCY_KEY="k2").status_code == 400

    assert post(client, BODY, HTTP_IDEMPOTENCY_KEY="k2").status_code == 201


# --- Mode resolution through the API ---------------------------------------------------------


def test_it_uses_the_conversation_default_when_the_request_names_no_mode(
    client_for, submitter, admin_user_obj
):
    admin = client_for(admin_user_obj)
    admin.put("/api/v1/settings/conversations/conv-9", {"default_mode": "normal"}, format="json")
    body = {k: v for k, v in BODY.items() if k != "mode"}

    response = post(client_for(submitter), {**body, "conversation_id": "conv-9", "domain": "general"})

    assert response.status_code == 201
    assert response.json()["mode_decision"] == {"mode": "normal", "source": "conversation", "triggers": []}


# --- Bad input ---------------------------------------------------------------------------------

BAD_BODIES = [
    pytest.param(b'{"query": "x", "answer": ', "body", id="malformed-json"),
    pytest.param(b"", "query", id="empty-body"),
    pytest.param(b"[1, 2]", "body", id="not-an-object"),
    pytest.param(b'{"query": "q", "answer": "a", "confidence": NaN}', "body", id="nan"),
    pytest.param({"answer": "a"}, "query", id="missing-query"),
    pytest.param({"query": 12, "answer": "a"}, "query", id="mistyped-query"),
    pytest.param({"query": "  ", "answer": "a"}, "query", id="blank-query"),
    pytest.param({"query": "q", "answer": ""}, "answer", id="empty-answer"),
    pytest.param({"query": "q", "answer": "   \n"}, "answer", id="whitespace-answer"),
    pytest.param({"query": "q", "answer": ["a"]}, "answer", id="mistyped-answer"),
    pytest.param({"query": "q", "answer": "a", "mode": "turbo"}, "mode", id="unknown-mode"),
    pytest.param({"query": "q", "answer": "a", "mode": "Audit-Local"}, "mode", id="mode-display-name"),
    pytest.param({"query": "q", "answer": "a", "contexts": {"id": 1}}, "contexts", id="contexts-not-a-list"),
    pytest.param(
        {"query": "q", "answer": "a", "contexts": [{"id": "1"}]}, "contexts[0].text", id="context-no-text"
    ),
    pytest.param(
        {"query": "q", "answer": "a", "contexts": [{"id": "1", "text": "t"}, {"text": "t"}]},
        "contexts[1].id",
        id="context-no-id",
    ),
    pytest.param(
        {"query": "q", "answer": "a", "contexts": [{"id": True, "text": "t"}]},
        "contexts[0].id",
        id="context-bool-id",
    ),
    pytest.param(
        {"query": "q", "answer": "a", "contexts": [{"id": "1", "text": "t", "published_at": "last May"}]},
        "contexts[0].published_at",
        id="context-bad-date",
    ),
    pytest.param(
        {"query": "q", "answer": "a", "contexts": [{"id": "1", "text": "t", "colour": "red"}]},
        "contexts[0].colour",
        id="context-unknown-field",
    ),
    pytest.param(
        {"query": "q", "answer": "a", "contexts": ["just text"]}, "contexts[0]", id="context-not-object"
    ),
    pytest.param(
        {"query": "q", "answer": "a", "conversation_id": "c" * 201}, "conversation_id", id="long-conversation"
    ),
    pytest.param({"query": "q", "answer": "a", "anwser": "typo"}, "anwser", id="unknown-field"),
    pytest.param({"query": "q", "answer": "bad \u0000 nul"}, "answer", id="nul-character"),
    pytest.param(b'{"query": "q", "answer": "lone \\ud800 surrogate"}', "answer", id="lone-surrogate"),
    pytest.param(
        b'{"query": "q", "answer": "a", "contexts": [{"id": "1", "text": "caf\xe9"}]}',
        "contexts[0].text",
        id="latin1-bytes",
    ),
    pytest.param(b'{"query": "q", "answer": "a"}\xff', "body", id="bad-byte-outside-strings"),
    pytest.param(
        b'{"query": "q", "answer": "a", "contexts": ' + b"[" * 50000 + b"]" * 50000 + b"}",
        "body",
        id="nested-too-deeply",
    ),
    pytest.param(
        b'{"query": "q", "answer": "a", "contexts": [{"id": ' + b"9" * 5000 + b', "text": "t"}]}',
        "contexts[0].id",
        id="integer-too-long",
    ),
]


@pytest.mark.parametrize("body, field", BAD_BODIES)
def test_it_answers_bad_input_with_400_naming_the_field_and_stores_nothing(
    client_for, submitter, audited_answer, body, field
):
    before = snapshot()

    response = post(client_for(submitter), body)

    assert response.status_code == 400, response.content
    data = response.json()
    assert field in data["errors"], data
    assert data["detail"].startswith(field) or f"; {field}" in data["detail"]
    assert snapshot() == before


def test_it_refuses_more_contexts_than_the_configured_limit(client_for, submitter, settings):
    settings.THEORIA = {**settings.THEORIA, "API_MAX_CONTEXTS": 3}
    contexts = [{"id": str(i), "text": f"passage {i}"} for i in range(4)]

    response = post(client_for(submitter), {"query": "q", "answer": "a", "contexts": contexts})

    assert response.status_code == 400
    assert "At most 3 contexts" in response.json()["errors"]["contexts"][0]


def test_it_refuses_a_body_over_the_configured_size_limit(client_for, submitter, settings):
    settings.THEORIA = {**settings.THEORIA, "API_MAX_BODY_BYTES": 2000}

    response = post(client_for(submitter), {"query": "q", "answer": "x" * 3000})

    assert response.status_code == 400
    assert "2000 bytes" in response.json()["errors"]["body"][0]
    assert Answer.objects.count() == 0


def test_it_answers_415_for_a_body_that_is_not_json(client_for, submitter):
    response = client_for(submitter).post(
        URL, data="query=q", content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 415
    assert Answer.objects.count() == 0


def test_it_answers_401_without_credentials_and_with_a_wrong_token(db, client_for):
    anonymous = post(client_for(), BODY)
    client = client_for()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")

    assert anonymous.status_code == 401
    assert post(client, BODY).status_code == 401
    assert Answer.objects.count() == 0


def test_it_drafts_a_missing_answer_with_the_configured_llm_and_keeps_its_citations(
    client_for, submitter, settings
):
    from tests.llm.fake_llm import FakeLLMServer, ok

    server = FakeLLMServer().start()
    try:
        server.route("TASK: draft_answer", ok("LTP depends on NMDA receptors [1]."))
        settings.THEORIA = {
            **settings.THEORIA,
            "LLM_BASE_URL": server.base_url,
            "LLM_MODEL": "test-model",
            "LLM_MAX_RETRIES": 0,
        }
        body = {k: v for k, v in BODY.items() if k != "answer"}

        response = post(client_for(submitter), body)
    finally:
        server.stop()

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["answer"] == "LTP depends on NMDA receptors [Synaptic]."  # the natural mode's citation key
    assert [c["id"] for c in data["citations"]] == ["kb1"]
    assert len(server.calls("TASK: draft_answer")) == 1
    event = AuditEvent.objects.get(action="answer.recorded")
    assert event.details["drafted"]["method"] == "llm_draft"
