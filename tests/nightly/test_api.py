"""The nightly report API: latest, by date, history, CSV and zip bundle; errors and permissions."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import zipfile

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import NightlyItem, NightlyReport, Workspace

DAY = dt.date(2026, 11, 20)
NOON = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)

BODY = {
    "date": DAY.isoformat(),
    "counts": {
        "claims_selected": 1,
        "claims_processed": 1,
        "labels_changed": 1,
        "review_recommended": 0,
        "stale_sources": 1,
    },
    "top_failing_documents": [],
    "stale_sources": [
        {
            "document_id": 1,
            "title": "Old",
            "uri": "kb://old",
            "domain": "neuroscience",
            "published_at": "2020-01-01",
            "age_months": 82,
            "limit_months": 18,
        }
    ],
    "review_recommended": [],
    "label_drift": {"transitions": {"NEI->SUPPORTED": 1}, "claims": []},
}


def _client(user) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def reports(workspace, store_answer):
    """Two finished days and one running day in the default workspace, one day in another."""
    answer = store_answer(workspace, NOON, claims=[("LTP needs NMDA receptors.", "SUPPORTED", 0.9)])
    done = NightlyReport.objects.create(
        workspace=workspace,
        date=DAY,
        status="done",
        finished_at=NOON,
        claims_selected=1,
        claims_processed=1,
        labels_changed=1,
        report=BODY,
    )
    NightlyItem.objects.create(
        report=done,
        claim=answer.claims.get(),
        old_label="NEI",
        old_confidence=0.3,
        processed=True,
        processed_at=NOON,
        attempt=1,
        new_label="SUPPORTED",
        new_confidence=0.9,
        changed=True,
        result={"documents": [1]},
    )
    NightlyReport.objects.create(
        workspace=workspace,
        date=DAY - dt.timedelta(days=1),
        status="done",
        finished_at=NOON,
        report={"counts": {}},
    )
    NightlyReport.objects.create(workspace=workspace, date=DAY + dt.timedelta(days=1))  # still running
    other = Workspace.objects.create(name="Other", slug="other")
    NightlyReport.objects.create(
        workspace=other, date=DAY + dt.timedelta(days=2), status="done", finished_at=NOON
    )
    return done


def test_it_returns_the_latest_finished_report_of_the_callers_workspace(reports, auditor):
    response = _client(auditor).get("/api/v1/reports/nightly/")

    assert response.status_code == 200
    data = response.json()
    assert (data["date"], data["workspace"], data["status"]) == ("2026-11-20", "default", "done")
    assert data["report"]["label_drift"]["transitions"] == {"NEI->SUPPORTED": 1}


def test_it_returns_a_report_by_date(reports, analyst):
    response = _client(analyst).get("/api/v1/reports/nightly/2026-11-19/")

    assert response.status_code == 200 and response.json()["date"] == "2026-11-19"


def test_it_lists_the_reports_newest_first(reports, auditor):
    response = _client(auditor).get("/api/v1/reports/nightly/history/")

    assert [r["date"] for r in response.json()["results"]] == ["2026-11-21", "2026-11-20", "2026-11-19"]


def test_a_bad_date_gets_400_naming_the_field(reports, auditor):
    response = _client(auditor).get("/api/v1/reports/nightly/20-11-2026/")

    assert response.status_code == 400
    assert "date" in response.json()["detail"]


def test_a_day_without_a_report_gets_404(reports, auditor):
    response = _client(auditor).get("/api/v1/reports/nightly/2026-01-01/")

    assert response.status_code == 404
    assert "2026-01-01" in response.json()["detail"]


def test_no_finished_report_gets_404(db, auditor):
    assert _client(auditor).get("/api/v1/reports/nightly/").status_code == 404


def test_it_needs_a_theoria_role(reports, make_user):
    assert _client(None).get("/api/v1/reports/nightly/").status_code == 401
    assert _client(make_user("norole")).get("/api/v1/reports/nightly/").status_code == 403


def test_the_claims_csv_lists_every_rechecked_claim(reports, auditor):
    response = _client(auditor).get("/api/v1/reports/nightly/2026-11-20/claims.csv")

    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["claim_id"], r["old_label"], r["new_label"], r["changed"]) for r in rows] == [
        ("c1", "NEI", "SUPPORTED", "True")
    ]


def test_the_bundle_holds_the_report_json_and_its_tables(reports, auditor):
    response = _client(auditor).get("/api/v1/reports/nightly/2026-11-20/bundle.zip")

    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert "theoria-nightly-default-2026-11-20.zip" in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as zf:
        assert set(zf.namelist()) == {
            "report.json",
            "claims.csv",
            "review_recommended.csv",
            "label_drift.csv",
            "top_failing_documents.csv",
            "stale_sources.csv",
        }
        header = json.loads(zf.read("report.json"))
        stale = list(csv.DictReader(io.StringIO(zf.read("stale_sources.csv").decode())))
    assert header["date"] == "2026-11-20" and header["report"]["counts"]["stale_sources"] == 1
    assert [(s["uri"], s["age_months"]) for s in stale] == [("kb://old", "82")]


def test_the_admin_lists_reports_read_only(reports, client, admin_user_obj):
    client.force_login(admin_user_obj)

    listing = client.get("/admin/audit/nightlyreport/")

    assert listing.status_code == 200 and b"Nov. 20, 2026" in listing.content
    assert client.get("/admin/audit/nightlyreport/add/").status_code == 403


def test_every_nightly_csv_neutralises_formula_cells(workspace):
    import csv
    import io
    import zipfile

    from audit.web.nightly_export import bundle_zip

    report = NightlyReport.objects.create(
        workspace=workspace,
        date=DAY,
        status="done",
        finished_at=NOON,
        report={
            "review_recommended": [{"claim": 1, "text": "=cmd|' /C calc'!A0", "old_label": "+SUM(1)"}],
            "top_failing_documents": [{"title": "@evil", "uri": "-1+2"}],
        },
    )
    with zipfile.ZipFile(io.BytesIO(bundle_zip(report, header={}))) as zf:
        for name in zf.namelist():
            if name.endswith(".csv"):
                for row in csv.reader(io.StringIO(zf.read(name).decode())):
                    assert not any(
                        cell[:1] in "=+@" or (cell[:1] == "-" and not cell[1:].replace(".", "").isdigit())
                        for cell in row
                        if cell
                    ), (name, row)
        review = zf.read("review_recommended.csv").decode()
    assert "'=cmd" in review and "'+SUM(1)" in review
