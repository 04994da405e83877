"""The answer form goes through the API's cost budget: an answer over the inline budget is audited on
the task queue (the form opens the job's page, which links to the answer once it is audited), and the
form shares the API's limit of queued audits per user."""

from __future__ import annotations

import pytest

from audit import roles

pytestmark = pytest.mark.django_db

ANSWER = (
    "Place cells in the hippocampus fire when a rat occupies one location. "
    "Grid cells in the entorhinal cortex fire in a hexagonal pattern. "
    "Dopamine neurons signal the difference between expected and received reward."
)


def _form(answer: str = ANSWER) -> dict[str, str]:
    return {
        "query": "What do neurons do?",
        "answer": answer,
        "mode": "audit-local",
        "passage-TOTAL_FORMS": "1",
        "passage-INITIAL_FORMS": "0",
        "passage-MIN_NUM_FORMS": "0",
        "passage-MAX_NUM_FORMS": "50",
        "passage-0-text": "",
    }


@pytest.fixture
def small_inline_budget(monkeypatch):
    """An inline budget that a three-sentence answer passes."""
    from audit import constants

    monkeypatch.setattr(constants, "AUDIT_INLINE_COST_BUDGET", 100)


def test_an_answer_over_the_inline_budget_opens_its_job_page_and_the_page_links_to_the_answer(
    client, make_user, small_inline_budget, django_capture_on_commit_callbacks
):
    from audit.models import Answer, BackgroundJob

    client.force_login(make_user("ann", roles.SUBMITTER))
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post("/answers/new/", _form())
    job = BackgroundJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.kind == "audit" and job.user.username == "ann"
    assert not Answer.objects.exists()  # nothing was audited in the request

    waiting = client.get(response["Location"]).content.decode()
    assert "Status: <strong>Queued</strong>" in waiting and "job_progress.js" in waiting
    assert 'data-refresh-s="3"' in waiting and 'id="job-answer"' not in waiting

    for callback in queued:  # the commit hands the job to the task queue (synchronous in tests)
        callback()

    done = client.get(response["Location"]).content.decode()
    answer = Answer.objects.get()
    assert "Status: <strong>Done</strong>" in done and "job_progress.js" not in done
    assert f'<a href="/answers/{answer.public_id}/" id="job-answer">' in done
    assert answer.mode == "audit-local" and answer.claims.count() == 3
    assert client.get(f"/answers/{answer.public_id}/").status_code == 200


def test_an_answer_within_the_inline_budget_is_audited_in_the_request(client, make_user):
    from audit.models import Answer, BackgroundJob

    client.force_login(make_user("ann", roles.SUBMITTER))
    response = client.post("/answers/new/", _form())
    answer = Answer.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/answers/{answer.public_id}/"
    assert not BackgroundJob.objects.exists()


def test_the_form_and_the_api_share_the_limit_of_queued_audits_per_user(
    client, make_user, small_inline_budget, monkeypatch
):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from audit import constants
    from audit.models import BackgroundJob

    monkeypatch.setattr(constants, "QUEUED_AUDITS_PER_USER", 1)
    ann = make_user("ann", roles.SUBMITTER)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=ann).key}")
    body = {"query": "q", "answer": ANSWER, "mode": "audit-local"}
    assert api.post("/api/v1/audits", body, format="json").status_code == 202  # waits in the queue
    client.force_login(ann)
    refused = client.post("/answers/new/", _form())
    html = refused.content.decode()
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "QUEUED_AUDITS_PER_USER" in html and "What do neurons do?" in html  # what was typed is kept
    assert BackgroundJob.objects.count() == 1

    bob = make_user("bob", roles.SUBMITTER)
    client.force_login(bob)
    assert client.post("/answers/new/", _form()).status_code == 302  # another user is not held
    assert BackgroundJob.objects.filter(user=bob).count() == 1


def test_a_failed_job_says_why_and_a_job_of_another_workspace_is_404(client, make_user, workspace):
    from audit.models import BackgroundJob
    from tests.factories import UserFactory, WorkspaceFactory

    ann = make_user("ann", roles.SUBMITTER)
    job = BackgroundJob.objects.create(
        workspace=workspace,
        user=ann,
        kind=BackgroundJob.KIND_AUDIT,
        status="failed",
        error="answer: 201 claims, more than max_claims_per_answer (200).",
        error_status=413,
        result={"estimated_cost": {"units": 9000, "inline_budget": 8000}},
    )
    client.force_login(ann)
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Status: <strong>Failed</strong>" in html and "more than max_claims_per_answer" in html
    assert "job_progress.js" not in html

    stranger = UserFactory(
        username="stranger", role=roles.L1_ANALYST, workspace=WorkspaceFactory(slug="other")
    )
    client.force_login(stranger)
    assert client.get(f"/jobs/{job.pk}/").status_code == 404
