"""The cost budget of one audit request: an audit over the inline budget runs on the task queue
(202 and a job URL to poll), and no audit reads more claims than its read budget (the rest are NEI,
flagged and counted on the result)."""

from __future__ import annotations

import pytest

from audit import roles

pytestmark = pytest.mark.django_db

SENTENCES = [
    "Place cells in the hippocampus fire when a rat occupies one location.",
    "Grid cells in the entorhinal cortex fire in a hexagonal pattern.",
    "Dopamine neurons signal the difference between expected and received reward.",
    "Long-term potentiation strengthens synapses after high-frequency stimulation.",
    "The hippocampus is needed to form new declarative memories.",
]
ANSWER = " ".join(SENTENCES)


@pytest.fixture
def small_budgets(monkeypatch):
    """An inline budget any five-sentence answer passes, and a read budget of two sentences."""
    from audit import constants
    from audit.pipeline import audit as pipeline_audit

    monkeypatch.setattr(constants, "AUDIT_INLINE_COST_BUDGET", 100)
    per_claim = pipeline_audit.AUDIT_READ_COST_PER_CLAIM
    monkeypatch.setattr(
        pipeline_audit, "AUDIT_READ_BUDGET_CHARS", len(SENTENCES[0]) + len(SENTENCES[1]) + 2 * per_claim
    )


def test_an_audit_over_the_inline_budget_answers_202_and_its_job_url_gives_the_answer(
    client_for, make_user, small_budgets, django_capture_on_commit_callbacks
):
    from audit.models import Answer

    client = client_for(make_user("frontend", roles.SUBMITTER))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post(
            "/api/v1/audits",
            {"query": "What do neurons do?", "answer": ANSWER, "mode": "audit-local"},
            format="json",
        )
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and body["kind"] == "audit" and body["answer"] is None
    assert response["Location"] == body["url"] == f"/api/v1/jobs/{body['job']}"
    assert body["result"]["estimated_cost"]["units"] > body["result"]["estimated_cost"]["inline_budget"]
    assert not Answer.objects.exists()  # nothing was audited in the request
    assert client.get(body["url"]).json()["status"] == "queued"

    for callback in queued:  # the commit hands the job to the task queue (synchronous in tests)
        callback()

    done = client.get(body["url"]).json()
    assert done["status"] == "done" and done["progress"] == {"done": 1, "total": 1}, done
    answer = client.get(done["answer_url"]).json()
    assert answer["answer_id"] == done["answer"] and answer["mode"] == "audit-local"
    texts = {c["claim_id"]: c["text"] for c in answer["claims"]}
    assert len(texts) == 5
    run_flags = [f for f in answer["audit"]["risk_flags"] if f["type"] == "over_read_budget"]
    unread = [texts[f["claim_id"]] for f in run_flags]
    assert unread == SENTENCES[2:]  # the read budget held the first two; the rest are not read
    assert all(f["severity"] == "high" and "read budget" in f["description"] for f in run_flags)
    assert all(
        c["label"] == "NEI" and not c["verification_methods"] for c in answer["claims"] if c["text"] in unread
    )


def test_a_retry_with_the_same_key_gets_the_same_job_and_another_body_409(
    client_for, make_user, small_budgets
):
    client = client_for(make_user("frontend", roles.SUBMITTER))
    body = {"query": "q", "answer": ANSWER, "mode": "audit-local"}
    first = client.post("/api/v1/audits", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = client.post("/api/v1/audits", body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    other = client.post(
        "/api/v1/audits", {**body, "query": "other"}, format="json", HTTP_IDEMPOTENCY_KEY="k-1"
    )
    assert first.status_code == again.status_code == 202
    assert again.json()["job"] == first.json()["job"]
    assert other.status_code == 409


def test_a_user_with_queued_audits_at_the_limit_gets_429_and_others_are_not_held(
    client_for, make_user, small_budgets, monkeypatch
):
    from audit import constants

    monkeypatch.setattr(constants, "QUEUED_AUDITS_PER_USER", 1)
    ann, bob = client_for(make_user("ann", roles.SUBMITTER)), client_for(make_user("bob", roles.SUBMITTER))
    body = {"query": "q", "answer": ANSWER, "mode": "audit-local"}
    assert ann.post("/api/v1/audits", body, format="json").status_code == 202  # waits in the queue
    refused = ann.post("/api/v1/audits", body, format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "QUEUED_AUDITS_PER_USER" in refused.json()["detail"]
    assert bob.post("/api/v1/audits", body, format="json").status_code == 202


def test_the_claims_cap_answers_413_before_an_audit_is_queued(client_for, make_user, small_budgets):
    from audit.models import BackgroundJob

    client = client_for(make_user("frontend", roles.SUBMITTER))
    answer = " ".join(f"Section {i} requires {i + 1} approvals." for i in range(1, 202))
    response = client.post(
        "/api/v1/audits", {"query": "q", "answer": answer, "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 413 and "max_claims_per_answer" in response.json()["detail"]
    assert not BackgroundJob.objects.exists()


def test_a_job_of_another_workspace_is_404(client_for, make_user, small_budgets):
    from tests.factories import UserFactory, WorkspaceFactory

    client = client_for(make_user("frontend", roles.SUBMITTER))
    url = client.post(
        "/api/v1/audits", {"query": "q", "answer": ANSWER, "mode": "audit-local"}, format="json"
    ).json()["url"]
    stranger = UserFactory(
        username="stranger", role=roles.SUBMITTER, workspace=WorkspaceFactory(slug="other")
    )
    assert client_for(stranger).get(url).status_code == 404
    assert client.get(url).status_code == 200


def test_the_cost_estimate_grows_with_the_answer_the_evidence_and_the_sentences():
    from audit import constants
    from audit.pipeline.cost import audit_cost
    from audit.pipeline.types import Passage

    short = audit_cost(SENTENCES[0])
    assert short.inline and short.sentences == 1
    long = audit_cost(" ".join([ANSWER] * 40))
    assert not long.inline and long.sentences == 200
    capped = audit_cost("word " * 100_000)
    assert (
        capped.units - capped.sentences * constants.AUDIT_COST_PER_SENTENCE
        == constants.AUDIT_READ_BUDGET_CHARS
    )
    evidence = audit_cost(SENTENCES[0], [Passage(id="p", text="x" * 900_000)])
    assert not evidence.inline and evidence.evidence_chars == 900_000
    structured = audit_cost("", answer_json={"summary": SENTENCES[0]})
    assert structured.answer_chars > len(SENTENCES[0]) and structured.sentences >= 1


def test_an_answer_over_the_size_limit_is_refused_413_naming_the_limit(client_for, make_user, small_budgets):
    from audit import constants
    from audit.models import BackgroundJob

    client = client_for(make_user("frontend", roles.SUBMITTER))
    answer = "Cell fires. " * (constants.MAX_ANSWER_CHARS // 11 + 1)
    response = client.post(
        "/api/v1/audits", {"query": "q", "answer": answer, "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 413 and f"{constants.MAX_ANSWER_CHARS:,}" in response.json()["detail"]
    assert not BackgroundJob.objects.exists()


def test_a_lone_surrogate_in_a_strict_text_field_is_refused_with_its_code_point():
    from rest_framework.exceptions import ValidationError

    from audit.api.serializers import StrictCharField

    field = StrictCharField()
    assert field.run_validation("plain text " * 10_000).startswith("plain text")
    with pytest.raises(ValidationError, match="Surrogate characters are not allowed: U\\+DC80"):
        field.run_validation("text \udc80 more")


def test_a_full_queue_refuses_a_long_answer_before_its_claims_are_extracted(
    client_for, make_user, workspace, monkeypatch
):
    from audit import constants
    from audit.models import BackgroundJob
    from audit.pipeline import job as pipeline_job

    user = make_user("ann", roles.SUBMITTER)
    client = client_for(user)
    for _ in range(constants.QUEUED_AUDITS_PER_USER):
        BackgroundJob.objects.create(workspace=workspace, user=user, kind=BackgroundJob.KIND_AUDIT)
    extracted = []
    monkeypatch.setattr(pipeline_job, "extract_claims", lambda *a, **k: extracted.append(1) or [])
    long_answer = " ".join(SENTENCES * (constants.AUDIT_READ_BUDGET_CHARS // len(" ".join(SENTENCES)) + 1))
    refused = client.post(
        "/api/v1/audits", {"query": "q", "answer": long_answer, "mode": "audit-local"}, format="json"
    )
    assert refused.status_code == 429 and "QUEUED_AUDITS_PER_USER" in refused.json()["detail"]
    assert extracted == []  # the 429 cost a count, not the extraction
    short = client.post(
        "/api/v1/audits", {"query": "q", "answer": SENTENCES[0], "mode": "audit-local"}, format="json"
    )
    assert short.status_code == 201  # an answer within the inline budget is never held by the queue
