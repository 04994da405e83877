"""Calibration you can see: the reliability diagram, agreement over time, label drift and its alert."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.core import mail
from django.utils import timezone

from audit import constants
from audit.models import AuditEvent, ReviewedExample
from audit.selectors.learning import agreement_by_day, drift_by_domain, learning_summary, reliability
from audit.services.review_drift import review_drift_check
from escalation.models import Notification, NotificationTarget
from escalation.notifications import notifications_deliver
from tests.learning.conftest import generate, store

NOW = dt.datetime(2026, 11, 20, 12, tzinfo=dt.timezone.utc)


def _row(days_ago: float, domain: str, machine: str, reviewer: str, confidence: float = 0.9) -> tuple:
    return (NOW - dt.timedelta(days=days_ago), domain, machine, confidence, reviewer)


def test_the_reliability_diagram_bins_confidence_against_the_share_reviewers_found_supported():
    rows = [
        _row(1, "finance", "SUPPORTED", "SUPPORTED", 0.95),
        _row(1, "finance", "SUPPORTED", "NEI", 0.91),
        _row(1, "finance", "SUPPORTED", "NEI", 0.93),
        _row(1, "finance", "NEI", "NEI", 0.15),
    ]

    rel = reliability(rows)

    assert rel["n"] == 4
    assert rel["bins"] == [
        {"low": 0.1, "high": 0.2, "confidence": 0.15, "supported": 0.0, "n": 1},
        {"low": 0.9, "high": 1.0, "confidence": 0.93, "supported": 0.3333, "n": 3},
    ]
    # ECE: 1/4 * |0 - 0.15| + 3/4 * |1/3 - 0.93|
    assert rel["ece"] == pytest.approx(0.25 * 0.15 + 0.75 * (0.93 - 1 / 3), abs=1e-4)
    assert reliability([]) == {"bins": [], "n": 0, "ece": None}


def test_agreement_is_counted_per_day_with_empty_days_left_empty():
    rows = [
        _row(2, "a", "SUPPORTED", "SUPPORTED"),
        _row(2, "a", "SUPPORTED", "NEI"),
        _row(0, "a", "NEI", "NEI"),
    ]

    out = agreement_by_day(rows, (NOW - dt.timedelta(days=2)).date(), NOW.date())

    assert out["decisions"] == [2, 0, 1] and out["agreement"] == [0.5, None, 1.0]
    assert out["total"] == 3 and out["overall"] == pytest.approx(2 / 3, abs=1e-4)


def test_label_drift_compares_each_domain_with_the_window_before_and_flags_low_agreement():
    window = constants.REVIEW_DRIFT_WINDOW_DAYS
    rows = [_row(1, "finance", "SUPPORTED", "NEI") for _ in range(8)]
    rows += [_row(2, "finance", "SUPPORTED", "SUPPORTED") for _ in range(4)]
    rows += [_row(window + 2, "finance", "SUPPORTED", "SUPPORTED") for _ in range(5)]
    rows += [_row(1, "security", "NEI", "REFUTED") for _ in range(3)]  # too few to judge
    rows += [_row(2 * window + 1, "finance", "SUPPORTED", "NEI")]  # older than both windows

    finance, security = drift_by_domain(rows, NOW)

    assert finance["decisions"] == 12 and finance["agreement"] == pytest.approx(4 / 12, abs=1e-4)
    assert finance["decisions_before"] == 5 and finance["agreement_before"] == 1.0
    assert finance["top_relabel"] == ("SUPPORTED → NEI", 8) and finance["low"] is True
    assert security["agreement"] == 0.0 and security["low"] is False  # 3 < REVIEW_DRIFT_MIN_EXAMPLES


def _disagreeing(workspace, reviewer, n=12, domain="finance", decided_at=None):
    items = [g for g in generate(200, seed=21) if g.kind == "numeric" and g.label == "NEI"][:n]
    for g in items:
        g.domain = domain
    return store(workspace, items, reviewer=reviewer, decided_at=decided_at)


def test_low_agreement_in_a_domain_alerts_the_notification_targets_once_a_window(
    workspace, reviewer, settings
):
    settings.THEORIA = {**settings.THEORIA, "ONCALL_EMAIL": "", "SLACK_WEBHOOK_URL": ""}
    NotificationTarget.objects.create(workspace=workspace, channel="email", address="compliance@example.com")
    _disagreeing(workspace, reviewer)
    now = timezone.now() + dt.timedelta(minutes=1)

    alerts = review_drift_check(workspace=workspace, now=now)

    assert [a["domain"] for a in alerts] == ["finance"]
    assert alerts[0]["agreement"] == 0.0 and alerts[0]["decisions"] == 12
    event = AuditEvent.objects.get(action="review.agreement_low")
    assert event.workspace == workspace and event.details["domain"] == "finance"
    note = Notification.objects.get()
    assert note.workspace == workspace and note.event is None and "finance" in note.subject
    assert notifications_deliver()["sent"] == 1
    assert (
        mail.outbox[-1].to == ["compliance@example.com"]
        and "reviewer agreement low" in mail.outbox[-1].subject
    )
    assert "0% of 12 decisions" in mail.outbox[-1].body
    # the same window does not alert twice
    assert review_drift_check(workspace=workspace, now=now + dt.timedelta(hours=1)) == []
    assert Notification.objects.count() == 1


def test_the_daily_task_checks_every_workspace(workspace, reviewer):
    from audit.tasks import review_drift_check as task

    _disagreeing(workspace, reviewer)

    (result,) = task()

    assert result["workspace"] == workspace.slug and [a["domain"] for a in result["alerts"]] == ["finance"]
    assert AuditEvent.objects.filter(action="review.agreement_low").count() == 1


def test_the_dashboard_shows_the_reliability_agreement_and_drift_panel(workspace, reviewer, analyst, client):
    _disagreeing(workspace, reviewer)
    store(workspace, generate(6, seed=22), reviewer=reviewer)
    client.force_login(analyst)

    page = client.get("/dashboard/")

    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="review-panel"' in html and "No calibration is in force" in html
    for key in ("review-reliability", "review-agreement", "review-drift"):
        figure = page.context["review_figures"][key]
        assert figure["data"] and figure["layout"]["title"]["text"]
        assert json.loads(json.dumps(figure)) == figure  # embedded as JSON
        assert f'id="chart-{key}"' in html and f'id="{key}"' in html
    reliability_fig = page.context["review_figures"]["review-reliability"]
    assert reliability_fig["data"][1]["y"] and max(reliability_fig["data"][1]["x"]) <= 1
    assert "Alert: agreement under" in html and 'id="drift-table"' in html
    assert ReviewedExample.objects.count() == 18


def test_the_dashboard_says_when_no_reviewer_has_decided_yet(analyst, client):
    client.force_login(analyst)
    html = client.get("/dashboard/").content.decode()
    assert 'id="review-empty"' in html and 'id="chart-review-reliability"' not in html


def _calibration_version(workspace, **fields):
    from audit.models import CalibrationVersion

    return CalibrationVersion.objects.create(
        workspace=workspace, number=1, judge="features", judge_version="features:x", depth="full", **fields
    )


def test_the_panel_reads_one_period_and_names_the_calibration_in_force(workspace, reviewer):

    store(workspace, generate(4, seed=23), reviewer=reviewer)
    _calibration_version(workspace, status="active", params={"threshold": 0.7})
    start = timezone.now() - dt.timedelta(days=1)
    summary = learning_summary(workspace=workspace, start=start, end=timezone.now() + dt.timedelta(minutes=1))

    assert summary["reliability"]["n"] == 4 and summary["agreement"]["total"] == 4
    assert summary["calibration"].number == 1


def test_the_panel_tells_an_analyst_what_each_figure_means_and_an_admin_where_to_recalibrate(
    workspace, reviewer, analyst, admin_user_obj, client
):

    _disagreeing(workspace, reviewer)
    store(workspace, generate(6, seed=22), reviewer=reviewer)
    _calibration_version(
        workspace,
        status="declined",
        metrics={"reason": "balanced accuracy fell by 0.02 on held-out answers"},
        fitted_by="admin1",
    )
    client.force_login(analyst)
    page = client.get("/dashboard/")
    html = page.content.decode()
    for key in ("review-reliability", "review-agreement", "review-drift"):  # each chart's data as a table
        table = html.split(f'<details class="chart-data" id="data-{key}">')[1].split("</details>")[0]
        assert "<table" in table and table.count("<tr>") >= 2, key
    reliability_table = html.split('id="data-review-reliability"')[1].split("</details>")[0]
    assert "found SUPPORTED by reviewers" in reliability_table and " points</td>" in reliability_table
    assert "ECE (expected calibration error) is how far" in html and "percentage points" in html
    assert "Drift compares, per domain" in html
    assert "below the alert threshold" not in html and "<strong>Alert: agreement under " in html
    decisions = page.context["review_figures"]["review-agreement"]["layout"]["yaxis2"]
    assert decisions["tickformat"] == "d" and decisions["dtick"] >= 1 and decisions["tick0"] == 0
    last = html.split('id="review-last-fit">')[1].split("</p>")[0]
    assert "v1" in last and "declined, nothing changed: balanced accuracy fell by 0.02" in last
    assert 'id="calibrate-link"' not in html  # not an admin
    client.force_login(admin_user_obj)
    html = client.get("/dashboard/").content.decode()
    link = html.split('id="review-last-fit">')[1].split("</p>")[0]
    assert (
        f'href="/admin/audit/workspace/{workspace.pk}/settings/#calibration-settings" id="calibrate-link"'
        in link
    )
