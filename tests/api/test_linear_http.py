"""Every HTTP path that reads user text costs time roughly linear in the text's length, proved
through the Django test client on the adversarial families of ``tests/pipeline/scaling.py``.

A scaling check, not a time limit: each path's CPU time is measured at three or more sizes and
the growth exponent is fitted over them (about 1 for a linear path, 2 for a quadratic one; the
limit is ``scaling.MAX_EXPONENT``). Before these checks the answer page of ``"`a " x 30,000`` held
a worker for five minutes (the revision's word diff) and ``"[cite:" x 20,000`` never came back
from an audit.

The audit paths (API, answer form, knowledge-base upload, the page, queue, case and export of
the audited answer, the revision's decision and the nightly re-check) run on the families of the
probe of the running server; the answer page, which any stored answer reaches, on every family.
"""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from tests.pipeline import scaling

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

AUDIT_SIZES = (8_000, 16_000, 32_000)
PAGE_SIZES = (16_000, 32_000, 64_000)


def _read(response) -> bytes:
    assert response.status_code == 200, response.status_code
    return b"".join(response.streaming_content) if response.streaming else response.content


FORM_FAMILIES = ("citation starts", "number pairs", "code words")


@pytest.fixture
def paths(request, client_for, submitter, lead, admin_user_obj, workspace, settings):
    """run(text) -> {path: CPU seconds} of every HTTP path over one planted answer."""
    from django.test import Client

    from audit.models import Answer, Claim, Document, NightlyReport
    from audit.services.nightly import nightly_audit_run
    from escalation.models import ReviewCase

    with_form = request.node.callspec.params["family"] in FORM_FAMILIES  # the audit again, through the form
    settings.THEORIA = {**settings.THEORIA, "API_MAX_BODY_BYTES": 2_000_000}
    workspace.revision_approval = "all"  # the revision is held: the queue page shows its diff
    workspace.allow_external_calls = False
    workspace.save(update_fields=["revision_approval", "allow_external_calls"])
    api, admin_api, reader_api = client_for(submitter), client_for(admin_user_obj), client_for(lead)
    web, author = Client(), Client()
    web.force_login(lead)
    author.force_login(submitter)

    def status(expected: int, response) -> None:
        assert response is None or response.status_code == expected, response.content[:300]

    def run(text: str) -> dict[str, float]:
        from django.core.cache import cache

        cache.clear()  # the throttles count each request
        timer = scaling.StepTimer()
        body = {
            "query": "What is it?",
            "answer": text,
            "mode": "audit-local",
            "contexts": [{"id": "1", "text": text}],
        }
        status(
            201,
            timer(
                "API audit",
                lambda: api.post("/api/v1/audits", data=json.dumps(body), content_type="application/json"),
            ),
        )
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


@pytest.mark.parametrize("family", scaling.PROBE_FAMILIES)
def test_every_http_path_over_a_planted_answer_grows_linearly(paths, family):
    exponents = scaling.path_exponents(paths, scaling.ADVERSARIAL[family], AUDIT_SIZES)
    costs = {
        step: {n: round(c, 2) for n, c in by_size.items()} for step, by_size in scaling.LAST_COSTS.items()
    }
    assert {step: round(e, 2) for step, e in exponents.items() if e > scaling.MAX_EXPONENT} == {}, costs


def test_the_answer_page_of_a_revised_answer_grows_linearly_on_every_family(client, lead, workspace):
    """A stored revised answer (claims over its sentences, the returned text a few sentences
    shorter) on every family: the page draws both texts, their diff and the claims' badges."""
    from audit.models import Answer
    from audit.pipeline.extraction import extract_claims
    from tests.factories import AnswerFactory, ClaimFactory, VerificationRunFactory

    client.force_login(lead)

    def run(text: str) -> dict[str, float]:
        revised = text[: len(text) // 3] + "This was revised. " + text[len(text) // 3 + 200 :]
        answer = AnswerFactory(workspace=workspace, query="q", text=revised, original_text=text)
        VerificationRunFactory(answer=answer)
        for draft in extract_claims(text)[:50]:
            ClaimFactory(
                answer=answer,
                claim_id=draft.claim_id,
                text=draft.text[:2000],
                span_start=draft.span[0],
                span_end=draft.span[1],
            )
        timer = scaling.StepTimer()
        response = timer("answer page", lambda: client.get(f"/answers/{answer.public_id}/"))
        assert response is None or response.status_code == 200
        Answer.objects.filter(pk=answer.pk).delete()
        return timer.costs

    found = {}
    for name, family in scaling.ADVERSARIAL.items():
        exponent = scaling.path_exponents(run, family, PAGE_SIZES)["answer page"]
        if exponent > scaling.MAX_EXPONENT:
            found[name] = round(exponent, 2)
    assert found == {}
