"""The HTTP paths that read user text, over one planted answer: the flow that
``tests/api/test_linear_http.py`` fits and ``python -m tests.api.scaling_report`` prints."""

from __future__ import annotations

import json

from django.utils import timezone

from tests.pipeline import scaling


def _read(response) -> bytes:
    assert response.status_code == 200, response.status_code
    return b"".join(response.streaming_content) if response.streaming else response.content


def planted_answer_paths(*, workspace, submitter, lead, admin, with_form: bool, timers: list | None = None):
    """run(text) -> {path: CPU seconds} of every HTTP path over one planted answer (``timers``,
    when given, collects each run's ``scaling.StepTimer``, wall-clock times included).

    The caller raises ``THEORIA["API_MAX_BODY_BYTES"]`` above the largest text.
    """
    from django.test import Client
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from audit.models import Answer, Claim, Document, NightlyReport
    from audit.services.nightly import nightly_audit_run
    from escalation.models import ReviewCase

    workspace.revision_approval = "all"  # the revision is held: the queue page shows its diff
    workspace.citation_only_revisions = "hold"  # even one that only adds citations
    workspace.allow_external_calls = False
    workspace.save(update_fields=["revision_approval", "citation_only_revisions", "allow_external_calls"])

    def client_for(user) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
        return client

    api, admin_api, reader_api = client_for(submitter), client_for(admin), client_for(lead)
    web, author = Client(), Client()
    web.force_login(lead)
    author.force_login(submitter)

    def status(expected: int, response) -> None:
        assert response is None or response.status_code == expected, response.content[:300]

    def run(text: str) -> dict[str, float]:
        from django.core.cache import cache

        cache.clear()  # the throttles count each request
        timer = scaling.StepTimer()
        if timers is not None:
            timers.append(timer)
        body = {
            "query": "What is it?",
            "answer": text,
            "mode": "audit-local",
            "contexts": [{"id": "1", "text": text}],
        }
        audited = timer(
            "API audit",
            lambda: api.post("/api/v1/audits", data=json.dumps(body), content_type="application/json"),
        )
        if audited is None:  # stopped: unbounded, and no answer to read
            return timer.costs
        status(201, audited)
        answer = Answer.objects.order_by("-pk").first()
        assert answer.revision_status == "proposed" or answer.original_text == answer.text
        status(200, timer("answer page", lambda: web.get(f"/answers/{answer.public_id}/")))
        status(200, timer("queue page", lambda: web.get("/escalations/")))
        case = ReviewCase.objects.filter(claim__answer=answer).first()
        if case is not None:
            status(200, timer("case page", lambda: web.get(f"/escalations/{case.ticket}/")))
        timer("export", lambda: _read(reader_api.get("/api/v1/claim-cards/export?format=csv")))
        decision = {"decision": "accept", "reason": "Checked."}
        status(
            302,
            timer("revision decision", lambda: web.post(f"/answers/{answer.public_id}/revision", decision)),
        )
        claims = Claim.objects.filter(answer=answer)
        claims.update(label="NEI", machine_label="NEI", confidence=0.1)  # weak: the nightly takes them again
        report = timer(
            "nightly re-check",
            lambda: nightly_audit_run(workspace=workspace, day=timezone.localdate(), depth="full"),
        )
        assert report is None or report.report.claims_selected == claims.count()
        document = {"title": "Planted", "uri": f"kb://planted-{len(text)}", "text": text}
        status(
            201,
            timer(
                "document upload",
                lambda: admin_api.post(
                    "/api/v1/documents", data=json.dumps(document), content_type="application/json"
                ),
            ),
        )
        if with_form:
            form = {
                "query": "What is it?",
                "answer": text,
                "mode": "audit-local",
                "domain": "",
                "passage-TOTAL_FORMS": "1",
                "passage-INITIAL_FORMS": "0",
                "passage-MIN_NUM_FORMS": "0",
                "passage-MAX_NUM_FORMS": "50",
                "passage-0-text": text,
            }
            cache.clear()
            status(302, timer("answer form", lambda: author.post("/answers/new/", form)))
        Answer.objects.all().delete()  # the next size starts from an empty day
        Document.objects.all().delete()
        NightlyReport.objects.all().delete()  # the nightly runs once a day: this day runs again
        return timer.costs

    run("Warm up: LTP needs 2 NMDA receptors [1]. It was seen in 1973.")  # models loaded, templates read
    return run
