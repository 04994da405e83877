"""The analyst pages over HTTP (Django test client): content, permissions, bad input, query counts."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def test_it_sends_anonymous_visitors_to_the_login_page(client):
    for path in ("/dashboard/", "/escalations/", "/claims/", "/reports/nightly/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_it_refuses_a_user_without_a_role(client, make_user):
    client.force_login(make_user("nobody"))
    assert client.get("/dashboard/").status_code == 403


def test_it_links_every_page_from_the_home_page(client, analyst):
    client.force_login(analyst)
    html = client.get("/").content.decode()
    for path in ("/dashboard/", "/escalations/", "/claims/", "/reports/nightly/"):
        assert f'href="{path}"' in html


def test_it_marks_each_claim_of_an_answer_with_a_badge_and_tooltip(client, analyst, audited_answer):
    answer, _claims = audited_answer
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert html.count('class="claim-mark"') == 3
    for text in ("Supported", "Refuted", "Needs Evidence"):
        assert text in html
    assert (
        'role="tooltip"' in html and "Supported: the evidence backs this claim (P(supported) 0.91)." in html
    )
    assert "Top evidence: <em>Synaptic Plasticity Overview</em>" in html
    assert "Revision" not in html


def test_it_shows_the_revision_diff_of_a_revised_answer(client, analyst, workspace):
    original = "Long-term potentiation requires NMDA receptor activation. The hippocampus has 12 layers. Dopamine neurons project to the striatum."
    revised = (
        "Long-term potentiation requires NMDA receptor activation. Dopamine neurons project to the striatum."
    )
    answer, _ = build_answer(workspace, text=original, revised_text=revised)
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.pk}/").content.decode()
    assert "<del>The hippocampus has 12 layers. </del>" in html
    assert "Revision attempts" in html and "contradicted by Hippocampus Anatomy" in html


def test_it_answers_404_for_an_answer_of_another_workspace(client, analyst, audited_answer):
    from audit.models import Workspace

    other = Workspace.objects.create(name="Other", slug="other")
    answer, _ = build_answer(other)
    client.force_login(analyst)
    assert client.get(f"/answers/{answer.public_id}/").status_code == 404


def test_it_shows_provenance_escalations_and_decisions_on_the_claim_card(client, lead, audited_answer):
    from escalation import services

    _, claims = audited_answer
    case = open_case(claims[1])
    case = services.case_acknowledge(case=case, actor=lead)
    services.case_resolve(
        case=case, actor=lead, decision="confirm", rationale="Three layers, per the anatomy text."
    )
    client.force_login(lead)
    html = client.get(f"/claims/{claims[1].pk}/").content.decode()
    assert claims[1].evidence.first().hash in html
    assert "kb://hippocampus_anatomy" in html
    assert case.ticket in html and "Three layers, per the anatomy text." in html
    assert "nli" in html and "Audit-Local" in html


def test_it_filters_the_claim_list_and_rejects_a_bad_filter_naming_the_field(client, analyst, audited_answer):
    client.force_login(analyst)
    html = client.get("/claims/", {"label": "REFUTED"}).content.decode()
    assert "The hippocampus has 12 layers." in html and "Dopamine neurons" not in html
    response = client.get("/claims/", {"confidence_max": "2"})
    assert response.status_code == 400
    assert "confidence_max" in response.content.decode()
    response = client.get("/claims/", {"date_from": "yesterday"})
    assert response.status_code == 400 and "date_from" in response.content.decode()


def test_it_links_the_filtered_list_to_the_claim_card_export_with_the_same_filters(
    client, analyst, audited_answer
):
    answer, claims = audited_answer
    client.force_login(analyst)
    html = client.get("/claims/", {"label": "NEI"}).content.decode()
    href = re.search(r'id="export-csv" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert "label=NEI" in href
    response = client.get(href)
    assert response["Content-Disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(r["answer_id"], r["claim_id"], r["label"]) for r in rows] == [(answer.public_id, "c3", "NEI")]
    assert rows[0]["evidence_hashes"] == claims[2].evidence.first().hash
    href = re.search(r'id="export-json" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    cards = json.loads(b"".join(client.get(href).streaming_content))
    assert [c["claim_id"] for c in cards] == ["c3"]


# session, user, roles, workspace, then the page's own reads: the count must not grow with rows.
# The dashboard's 17th query is the LLM-usage aggregate (one GROUP BY day over the period's runs);
# issue 16 added six: SLA attainment per day, the per-domain breakdown and the success metrics (4);
# the answer list counts and cuts its page, then reads the page's figures in one more query;
# the queue's 7th reads the business calendar once per workspace on the page (countdowns in business time);
# the reviewer-agreement panel adds two: the period's reviewed examples and the calibration in force.
# its 8th to 10th: the caller's workspace, who may own cases (the bulk bar's menu), held revisions.
# Issue 35 added ten to the dashboard's cold read: the answers per domain (one), the data version of
# the figures' cache key (three MAX reads), the cache read, and the database cache's write (five);
# a warm read skips every figure query (tests/ui/test_dashboard_cache.py).
# the queue reads the breaches of its page in one query; the dashboard reads per domain its score,
# open cases and SLA attainment, and the domains of its filter (issue 47)
PAGE_QUERIES = {"/claims/": 7, "/escalations/": 11, "/dashboard/": 39, "/answers/": 8}


@pytest.mark.parametrize("path", sorted(PAGE_QUERIES))
def test_it_reads_each_list_page_in_a_fixed_number_of_queries(
    client, lead, workspace, path, django_assert_num_queries
):
    _, claims = build_answer(workspace)
    open_case(claims[1])
    client.force_login(lead)
    with django_assert_num_queries(PAGE_QUERIES[path]):
        assert client.get(path).status_code == 200
    for _ in range(5):
        _, more = build_answer(workspace)
        open_case(more[1])
        open_case(more[2])
    with django_assert_num_queries(PAGE_QUERIES[path]):
        assert client.get(path).status_code == 200


def nightly_report_of(workspace, claim, day):
    from django.utils import timezone

    from audit.models import NightlyReport

    body = {
        "date": day.isoformat(),
        "workspace": workspace.slug,
        "counts": {"claims_selected": 2, "claims_processed": 2, "labels_changed": 1, "review_recommended": 1},
        "top_failing_documents": [
            {
                "document_id": 1,
                "title": "Hippocampus Anatomy",
                "uri": "kb://hippocampus_anatomy",
                "failing_claims": 2,
                "refuted": 1,
                "nei": 1,
            }
        ],
        "stale_sources": [
            {
                "document_id": 1,
                "title": "Old Atlas",
                "uri": "kb://old_atlas",
                "domain": "neuroscience",
                "published_at": "2020-01-01",
                "age_months": 70,
                "limit_months": 18,
            }
        ],
        "review_recommended": [
            {
                "claim": claim.pk,
                "answer": claim.answer.public_id,
                "claim_id": claim.claim_id,
                "text": claim.text,
                "importance": "material",
                "old_label": "NEI",
                "new_label": "REFUTED",
                "old_confidence": 0.35,
                "new_confidence": 0.1,
            }
        ],
        "label_drift": {"transitions": {"NEI->REFUTED": 1}, "claims": []},
    }
    return NightlyReport.objects.create(
        workspace=workspace,
        date=day,
        status=NightlyReport.Status.DONE,
        finished_at=timezone.now(),
        claims_selected=2,
        claims_processed=2,
        labels_changed=1,
        review_recommended=1,
        claims_per_s=180.0,
        report=body,
    )


def test_it_shows_the_latest_nightly_report_on_its_page_and_the_dashboard(
    client, analyst, workspace, audited_answer
):
    import datetime as dt

    from django.utils import timezone

    _, claims = audited_answer
    today = timezone.localdate()
    nightly_report_of(workspace, claims[2], today - dt.timedelta(days=1))
    nightly_report_of(workspace, claims[2], today)
    client.force_login(analyst)
    html = client.get("/reports/nightly/").content.decode()
    assert f"Latest: {today.isoformat()}" in html
    assert "Hippocampus Anatomy" in html and "Old Atlas" in html and "70 / 18" in html
    assert "NEI-&gt;REFUTED: 1" in html and f'href="/claims/{claims[2].pk}/"' in html
    assert (
        html.count('<td data-label="Day"><a href="/reports/nightly/?day=20') == 2
    )  # both days listed, linked
    dashboard = client.get("/dashboard/").content.decode()
    assert "Latest nightly audit" in dashboard and "2 of 2" in dashboard and "180.0 claims/s" in dashboard


def test_it_refuses_a_dashboard_range_that_is_reversed_or_too_long(client, analyst):
    client.force_login(analyst)
    response = client.get("/dashboard/", {"date_from": "2026-05-02", "date_to": "2026-05-01"})
    assert response.status_code == 400 and "date_to" in response.content.decode()
    response = client.get("/dashboard/", {"date_from": "2020-01-01", "date_to": "2026-01-01"})
    assert response.status_code == 400 and "date_from" in response.content.decode()


def test_it_counts_the_dashboard_figures_of_the_chosen_range_only(client, lead, workspace):
    import datetime as dt
    import json as _json

    from django.utils import timezone

    old = timezone.now() - dt.timedelta(days=40)
    build_answer(workspace, created_at=old)
    build_answer(workspace)
    client.force_login(lead)
    response = client.get("/dashboard/")
    labels = response.context["figures"]["label-distribution"]["data"][0]["y"]
    assert labels == [1, 1, 1]
    start = (old - dt.timedelta(days=1)).date().isoformat()
    response = client.get("/dashboard/", {"date_from": start})
    assert response.context["figures"]["label-distribution"]["data"][0]["y"] == [2, 2, 2]
    trend = response.context["figures"]["trust-trend"]["data"][0]
    assert trend["y"][1] == 0.62 and trend["y"][-1] == 0.62 and trend["y"][2] is None
    assert (
        _json.loads(
            re.search(
                r'<script id="trust-trend" type="application/json">(.*?)</script>',
                response.content.decode(),
                re.S,
            ).group(1)
        )["data"][0]["y"][1]
        == 0.62
    )


def test_it_counts_reviewer_relabels_and_breaches_in_the_incident_summary(client, lead, workspace):
    from escalation import services

    _, claims = build_answer(workspace)
    case = services.case_acknowledge(case=open_case(claims[1]), actor=lead)
    services.case_resolve(
        case=case, actor=lead, decision="relabel_nei", rationale="Not settled by the sources."
    )
    client.force_login(lead)
    response = client.get("/dashboard/")
    assert response.context["trust"]["human_relabels"] == 1
    assert response.context["queue"]["period"]["resolved"] == 1
    assert response.context["figures"]["label-distribution"]["data"][0]["y"] == [1, 0, 2]
    html = response.content.decode()
    assert (
        '<th scope="row">Labels changed by reviewers</th><td><a href="/claims/?relabelled=true&amp;' in html
    )
    assert re.search(r'Labels changed by reviewers</th><td><a href="[^"]+">1</a></td>', html)


def test_the_dashboard_says_a_bad_range_beside_the_form_and_shows_the_default_one(client, analyst):
    client.force_login(analyst)
    response = client.get("/dashboard/", {"date_from": "2026-05-02", "date_to": "2026-05-01"})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="range-error"' in html
    assert (
        "must not be before From: the range was not applied." in html
        and "Showing the last 30 days instead." in html
    )
    assert 'id="kpis"' in html  # the dashboard itself is still there


def test_the_dashboard_shows_the_success_metrics_and_a_per_domain_breakdown(client, lead, workspace):
    from audit.models import VerificationRun

    _answer, claims = build_answer(workspace)
    build_answer(workspace, domain="compliance")
    VerificationRun.objects.update(duration_ms=420.0)
    open_case(claims[2])  # the NEI claim: escalated for missing evidence
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    supported = html.split('id="kpi-supported"')[1].split("</li>")[0]
    assert "33 %" in supported and "2 of 6 audited claims" in supported and "goal missed" in supported
    missing = html.split('id="kpi-missing"')[1].split("</li>")[0]
    assert "17 %" in missing and "1 of 6" in missing and "goal missed" in missing
    latency = html.split('id="kpi-latency"')[1].split("</li>")[0]
    assert "0.42 s" in latency and "goal met" in latency
    table = html.split('id="domain-table"')[1].split("</table>")[0]
    assert "compliance" in table and "neuroscience" in table and '">1</a> (33 %)' in table
    for key in ("label-rates", "sla-trend", "domains"):
        assert f'id="chart-{key}"' in html


def test_every_dashboard_trace_has_clean_hover_text(client, lead, workspace):
    import json as _json

    build_answer(workspace)
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    figures = re.findall(r'<script id="[^"]+" type="application/json">(.*?)</script>', html, re.S)
    assert len(figures) >= 9
    for figure in figures:
        for trace in _json.loads(figure)["data"]:
            assert trace["hovertemplate"].endswith("<extra></extra>"), trace.get("name")
