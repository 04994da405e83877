"""The answer list, the submit form and "Audit now" over HTTP (test client)."""

from __future__ import annotations

import pytest

from tests.ui.conftest import build_answer

pytestmark = pytest.mark.django_db


def normal_answer(workspace, text="Dopamine neurons signal reward prediction errors.", **extra):
    from audit.models import Answer

    return Answer.objects.create(
        workspace=workspace,
        query="What do dopamine neurons signal?",
        text=text,
        original_text=text,
        mode="normal",
        domain=extra.pop("domain", "neuroscience"),
        contexts=[{"id": "1", "title": "Dopamine", "text": text}],
        **extra,
    )


def test_it_lists_every_answer_and_marks_normal_ones_not_audited(client, analyst, workspace):
    audited, _ = build_answer(workspace)
    normal = normal_answer(workspace)
    client.force_login(analyst)
    html = client.get("/answers/").content.decode()
    assert audited.public_id in html and normal.public_id in html
    assert "2 answers" in html
    row = html.split(f'data-answer="{normal.public_id}"')[1].split("</tr>")[0]
    assert "not audited" in row and "Audit now" in row
    row = html.split(f'data-answer="{audited.public_id}"')[1].split("</tr>")[0]
    assert "✓ 1" in row and "✗ 1" in row and "not audited" not in row


def test_it_filters_answers_by_mode_domain_date_flagged_and_refuted(client, analyst, workspace):
    import datetime as dt

    from django.utils import timezone

    from audit.models import Claim

    flagged, _ = build_answer(workspace)
    clean, _ = build_answer(workspace, domain="compliance", created_at=timezone.now() - dt.timedelta(days=3))
    Claim.objects.filter(answer=clean).update(label="SUPPORTED")
    normal = normal_answer(workspace)
    client.force_login(analyst)

    def ids(query):
        response = client.get("/answers/?" + query)
        assert response.status_code == 200, response.content
        html = response.content.decode()
        return {a.public_id for a in (flagged, clean, normal) if a.public_id in html}

    assert ids("mode=normal") == {normal.public_id}
    assert ids("mode=AUDIT-LOCAL") == {flagged.public_id, clean.public_id}  # any letter case
    assert ids("domain=Compliance") == {clean.public_id}
    assert ids("flagged=true") == {flagged.public_id}
    assert ids("refuted=true") == {flagged.public_id}
    assert ids("refuted=false&mode=audit-local") == {clean.public_id}
    day = (timezone.now() - dt.timedelta(days=3)).date().isoformat()
    assert ids(f"date_from={day}&date_to={day}") == {clean.public_id}


def test_a_reversed_date_range_is_said_beside_the_filters_which_keep_what_was_typed(
    client, analyst, workspace
):
    answer, _ = build_answer(workspace)
    client.force_login(analyst)
    response = client.get("/answers/?date_from=2026-02-02&date_to=2026-01-01&q=potentiation&mode=audit-local")
    html = response.content.decode()
    assert response.status_code == 400
    assert '<a href="#f-from">From: Must not be after date_to.</a>' in html
    assert 'id="f-from" type="date" name="date_from" value="2026-02-02" aria-invalid="true"' in html
    assert 'value="2026-01-01"' in html and 'value="potentiation"' in html
    assert '<option value="audit-local" selected>' in html
    assert f'data-answer="{answer.public_id}"' in html  # the list is still there, unfiltered


def test_a_normal_answer_page_says_not_audited_and_never_counts_labels(client, analyst, workspace):
    normal = normal_answer(workspace)
    client.force_login(analyst)
    html = client.get(f"/answers/{normal.public_id}/").content.decode()
    assert "not audited" in html and 'id="audit-now"' in html
    assert "0 Refuted" not in html and "0 Supported" not in html and "Claims of this answer" not in html


def test_audit_now_audits_a_normal_answer_once_and_links_both_ways(client, analyst, workspace):
    from audit.models import Answer

    normal = normal_answer(workspace)
    client.force_login(analyst)
    response = client.post(f"/answers/{normal.public_id}/audit")
    assert response.status_code == 302
    audited = Answer.objects.exclude(pk=normal.pk).get()
    assert response["Location"] == f"/answers/{audited.public_id}/"
    assert audited.mode == "audit-local" and audited.claims.exists()
    assert audited.original_text == normal.text and audited.query == normal.query
    normal.refresh_from_db()
    assert normal.mode == "normal"  # the record of what was returned is kept
    html = client.get("/answers/").content.decode()
    row = html.split(f'data-answer="{normal.public_id}"')[1].split("</tr>")[0]
    assert f"audited as {audited.public_id}" in row and "Audit now" not in row
    again = client.post(f"/answers/{normal.public_id}/audit", follow=True)
    assert f"already audited as {audited.public_id}" in again.content.decode()
    assert Answer.objects.count() == 2


def test_audit_now_needs_a_role_that_may_submit(client, auditor, workspace):
    normal = normal_answer(workspace)
    client.force_login(auditor)
    assert client.post(f"/answers/{normal.public_id}/audit").status_code == 403
    assert "Audit now" not in client.get("/answers/").content.decode()


def test_the_submit_form_runs_the_api_service_and_opens_the_answer(client, analyst, workspace):
    from audit.models import Answer

    client.force_login(analyst)
    assert client.get("/answers/new/").status_code == 200
    response = client.post(
        "/answers/new/",
        {
            "query": "What does LTP require?",
            "answer": "Long-term potentiation requires NMDA receptor activation [1].",
            "mode": "audit-local",
            "domain": "neuroscience",
            "passage-TOTAL_FORMS": "2",
            "passage-INITIAL_FORMS": "0",
            "passage-MIN_NUM_FORMS": "0",
            "passage-MAX_NUM_FORMS": "50",
            "passage-0-title": "Synaptic Plasticity",
            "passage-0-uri": "kb://synaptic",
            "passage-0-published_at": "2025-03-01",
            "passage-0-text": "LTP at CA1 synapses is dependent on NMDA receptor activation.",
            "passage-1-text": "",
        },
    )
    answer = Answer.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/answers/{answer.public_id}/"
    assert answer.mode == "audit-local" and answer.domain == "neuroscience"
    assert answer.contexts == [
        {
            "id": "1",
            "title": "Synaptic Plasticity",
            "uri": "kb://synaptic",
            "text": "LTP at CA1 synapses is dependent on NMDA receptor activation.",
            "published_at": "2025-03-01",
        }
    ]
    assert answer.claims.exists() and answer.runs.exists()


def test_the_submit_form_keeps_what_was_typed_and_names_the_bad_field(client, analyst, workspace):
    from audit.models import Answer

    client.force_login(analyst)
    response = client.post(
        "/answers/new/",
        {
            "query": "What does LTP require?",
            "answer": "   ",
            "mode": "normal",
            "passage-TOTAL_FORMS": "1",
            "passage-INITIAL_FORMS": "0",
            "passage-MIN_NUM_FORMS": "0",
            "passage-MAX_NUM_FORMS": "50",
            "passage-0-title": "Only a title",
            "passage-0-text": "",
        },
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert '<a href="#id_answer">Answer: Paste the answer to audit.</a>' in html
    assert '<a href="#id_passage-0-text">Passage 1 Text: A passage needs its text' in html
    assert 'aria-invalid="true" aria-describedby="id_answer-error"' in html
    assert '<p class="error field-error" id="id_passage-0-text-error">A passage needs its text' in html
    assert "What does LTP require?" in html and 'value="Only a title"' in html
    assert not Answer.objects.exists()


def test_the_submit_form_is_refused_to_an_auditor(client, auditor):
    client.force_login(auditor)
    assert client.get("/answers/new/").status_code == 403


def test_claim_filters_accept_any_letter_case(client, analyst, audited_answer):
    client.force_login(analyst)
    response = client.get("/claims/?label=nei")
    assert response.status_code == 200
    assert "1 claim." in response.content.decode()
    assert (
        client.get("/claims/?label=Refuted,supported&mode=AUDIT-LOCAL").content.decode().count("badge--") >= 2
    )


def test_the_site_has_a_favicon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")


def test_the_answer_list_searches_questions_and_answer_text(client, analyst, workspace):
    from tests.ui.conftest import build_answer

    ltp, _ = build_answer(workspace)
    other, _ = build_answer(
        workspace, text="Dopamine neurons signal reward. The striatum has 3 parts. Levodopa helps."
    )
    client.force_login(analyst)

    def ids(q):
        import re

        return set(re.findall(r'data-answer="([^"]+)"', client.get("/answers/", {"q": q}).content.decode()))

    assert ids("NMDA receptor") == {ltp.public_id}
    assert ids("dopamine") == {ltp.public_id, other.public_id}  # "Dopamine neurons project…" in the first
    assert ids("levodopa") == {other.public_id}
    assert ids("nothing-like-this") == set()


def test_the_claim_list_searches_claim_text_and_shows_a_bad_filter_inline(client, analyst, workspace):
    from tests.ui.conftest import build_answer

    build_answer(workspace)
    client.force_login(analyst)
    html = client.get("/claims/", {"q": "hippocampus layers"}).content.decode()
    import re

    rows = re.findall(r'<td data-label="Text">([^<]+)</td>', html)
    assert rows == ["The hippocampus has 12 layers."]
    bad = client.get("/claims/", {"confidence_min": "2", "date_from": "2026-02-02", "date_to": "2026-01-01"})
    text = bad.content.decode()
    assert bad.status_code == 400
    assert '<a href="#f-cmin">P(supported) ≥: Must be between 0 and 1.</a>' in text
    assert '<a href="#f-from">From: Must not be after date_to.</a>' in text  # every bad filter at once
    assert len(re.findall(r'<td data-label="Text">', text)) == 3


def test_each_audit_now_button_of_the_list_names_its_answer(client, analyst, workspace):
    import re

    first, second = normal_answer(workspace), normal_answer(workspace)
    client.force_login(analyst)
    html = client.get("/answers/").content.decode()
    names = re.findall(r'class="small">Audit now<span class="sr-only"> ([^<]+)</span></button>', html)
    assert sorted(names) == sorted([first.public_id, second.public_id])
