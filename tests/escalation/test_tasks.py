"""The SLA sweep and its alerts: marks at the deadlines, notifies exactly once by mail and webhook.

The webhook is a real HTTP server on 127.0.0.1 (a Slack stand-in); mail goes to Django's
locmem outbox. Tasks run through django-q2 in sync mode.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import time_machine
from django.core import mail
from django.core.management import call_command
from django_q.models import Schedule
from django_q.tasks import async_task

from escalation import services
from escalation.models import Notification, NotificationTarget, ReviewEvent

pytestmark = pytest.mark.django_db

MONDAY_10 = datetime(2026, 11, 23, 10, 0, tzinfo=dt_timezone.utc)


class Webhook:
    """A local Slack-compatible endpoint that records each POSTed JSON body."""

    def __init__(self):
        self.received: list[dict] = []
        self.fail_next = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if hook.fail_next:
                    hook.fail_next -= 1
                    self.send_response(500)
                    self.end_headers()
                    return
                hook.received.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/compliance-alerts"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook(settings):
    hook = Webhook()
    settings.THEORIA = {
        **settings.THEORIA,
        "SLACK_WEBHOOK_URL": hook.url,
        "ONCALL_EMAIL": "oncall@example.test",
        "PUBLIC_URL": "https://theoria.example.test/",
        "WEB_ALLOW_PRIVATE_ADDRESSES": True,  # the stand-in listens on loopback, which the guard refuses otherwise
    }
    yield hook
    hook.close()


def sweep(now, capture):
    """Run the scheduled task the way the cluster does (django-q2, sync in tests)."""
    with time_machine.travel(now, tick=False), capture(execute=True):
        async_task("escalation.tasks.sweep_overdue_cases")


def open_case(make_answer, capture, now=MONDAY_10):
    with time_machine.travel(now, tick=False), capture(execute=True):
        (case,) = services.cases_open_for_answer(answer=make_answer([("REFUTED", 0.1)]))
    return case


def test_a_new_case_alerts_once_by_email_and_webhook(
    make_answer, webhook, django_capture_on_commit_callbacks
):
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    assert [m.to for m in mail.outbox] == [["oncall@example.test"]]
    assert case.ticket in mail.outbox[0].subject and "new case" in mail.outbox[0].subject
    assert f"https://theoria.example.test/escalations/{case.ticket}/" in mail.outbox[0].body
    assert len(webhook.received) == 1
    assert webhook.received[0]["channel"] == "#compliance-alerts"
    assert webhook.received[0]["ticket"] == case.ticket and webhook.received[0]["event"] == "opened"
    sweep(MONDAY_10 + timedelta(minutes=1), django_capture_on_commit_callbacks)
    sweep(MONDAY_10 + timedelta(minutes=2), django_capture_on_commit_callbacks)
    assert len(mail.outbox) == 1 and len(webhook.received) == 1


def test_the_sweep_marks_at_risk_and_breach_at_their_deadlines_and_alerts_once_each(
    make_answer, webhook, django_capture_on_commit_callbacks
):
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    mail.outbox.clear()
    webhook.received.clear()
    steps = [
        (timedelta(minutes=24) - timedelta(seconds=1), "on_track", 0),
        (timedelta(minutes=24), "at_risk", 1),
        (timedelta(minutes=25), "at_risk", 1),  # second run: nothing new
        (timedelta(minutes=30), "at_risk", 1),  # at the deadline: still on time
        (timedelta(minutes=30, seconds=1), "breached", 2),
        (timedelta(minutes=31), "breached", 2),
        (timedelta(minutes=31), "breached", 2),
    ]
    for offset, state, alerts in steps:
        sweep(MONDAY_10 + offset, django_capture_on_commit_callbacks)
        case.refresh_from_db()
        assert (offset, case.sla_state) == (offset, state)
        assert (offset, len(mail.outbox), len(webhook.received)) == (offset, alerts, alerts)
    assert "SLA at risk" in mail.outbox[0].subject and "SLA breached" in mail.outbox[1].subject
    assert [e["event"] for e in webhook.received] == ["at_risk", "breached"]
    assert list(case.events.values_list("kind", "actor_label")) == [
        ("opened", "intake"),
        ("at_risk", "sla_sweep"),
        ("breached", "sla_sweep"),
    ]


def test_a_case_acknowledged_in_time_is_never_breached_on_its_acknowledgement_clock(
    make_answer, analyst, webhook, django_capture_on_commit_callbacks
):
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    with time_machine.travel(MONDAY_10 + timedelta(minutes=29), tick=False):
        services.case_acknowledge(case=case, actor=analyst)
    # past the 30-minute acknowledgement deadline, before the resolution clock's at-risk line
    # (4 business hours from 10:29, at risk from 13:41)
    sweep(MONDAY_10 + timedelta(hours=3), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert case.sla_state == "on_track"
    assert not case.events.filter(kind__in=["at_risk", "breached"]).exists()


def test_an_acknowledged_l1_case_is_at_risk_then_breached_on_its_resolution_clock(
    make_answer, analyst, webhook, django_capture_on_commit_callbacks
):
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    with time_machine.travel(MONDAY_10 + timedelta(minutes=10), tick=False):
        services.case_acknowledge(case=case, actor=analyst)
    sweep(MONDAY_10 + timedelta(hours=3, minutes=30), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert case.sla_state == "at_risk"
    sweep(MONDAY_10 + timedelta(hours=4, minutes=11), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert (case.status, case.sla_state) == ("acknowledged", "breached")
    breach = case.events.get(kind="breached")
    assert (breach.tier, breach.details["clock"]) == (1, "resolve")
    assert breach.details["due_at"] == (MONDAY_10 + timedelta(hours=4, minutes=10)).isoformat()


def test_a_late_acknowledgement_the_sweep_has_not_seen_is_recorded_as_a_breach_then_a_fresh_clock_runs(
    make_answer, analyst, webhook, django_capture_on_commit_callbacks
):
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    with (
        time_machine.travel(MONDAY_10 + timedelta(minutes=45), tick=False),
        django_capture_on_commit_callbacks(execute=True),
    ):
        case = services.case_acknowledge(case=case, actor=analyst)
    # the alert names the clock that was missed
    assert f"[{case.ticket}] acknowledgement SLA breached (L1" in mail.outbox[-1].subject
    assert [e.kind for e in case.events.order_by("at", "id")] == ["opened", "breached", "acknowledged"]
    assert case.events.get(kind="breached").details["clock"] == "acknowledge"
    assert case.events.get(kind="acknowledged").details["within_sla"] is False
    assert (case.sla_state, case.due_at) == ("on_track", MONDAY_10 + timedelta(hours=4, minutes=45))


def test_a_paused_case_is_not_breached_and_its_clock_resumes_where_it_stopped(
    make_answer, analyst, webhook, django_capture_on_commit_callbacks
):
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    with time_machine.travel(MONDAY_10 + timedelta(minutes=20), tick=False):
        case = services.case_pause(case=case, actor=analyst, reason="Waiting for the source")
    sweep(MONDAY_10 + timedelta(hours=2), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert (case.status, case.sla_state) == ("paused", "on_track")
    resume = MONDAY_10 + timedelta(hours=2)
    with time_machine.travel(resume, tick=False):
        case = services.case_resume(case=case, actor=analyst)
    assert case.due_at == resume + timedelta(minutes=10)
    assert case.at_risk_at == resume + timedelta(minutes=4)
    sweep(resume + timedelta(minutes=10), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert case.sla_state == "at_risk"
    sweep(resume + timedelta(minutes=10, seconds=1), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert case.sla_state == "breached"


def test_an_l2_case_breaches_after_4_business_hours_not_over_the_weekend(
    make_answer, analyst, webhook, django_capture_on_commit_callbacks
):
    friday_15 = datetime(2026, 11, 27, 15, 0, tzinfo=dt_timezone.utc)
    case = open_case(make_answer, django_capture_on_commit_callbacks, now=friday_15)
    with time_machine.travel(friday_15 + timedelta(minutes=5), tick=False):
        case = services.case_escalate(case=case, actor=analyst, reason="expert needed")
    monday_due = datetime(2026, 11, 30, 11, 5, tzinfo=dt_timezone.utc)
    assert case.due_at == monday_due
    sweep(
        datetime(2026, 11, 29, 23, 0, tzinfo=dt_timezone.utc), django_capture_on_commit_callbacks
    )  # Sunday night
    case.refresh_from_db()
    assert case.sla_state == "on_track"
    sweep(monday_due + timedelta(seconds=1), django_capture_on_commit_callbacks)
    case.refresh_from_db()
    assert case.sla_state == "breached"


def test_a_failed_webhook_is_retried_by_the_next_sweep_without_resending_the_email(
    make_answer, webhook, django_capture_on_commit_callbacks
):
    webhook.fail_next = 1
    case = open_case(make_answer, django_capture_on_commit_callbacks)
    hook_row = Notification.objects.get(channel="webhook")
    assert (hook_row.status, hook_row.attempts) == ("failed", 1)
    assert "500" in hook_row.last_error
    assert len(mail.outbox) == 1 and webhook.received == []
    sweep(MONDAY_10 + timedelta(minutes=1), django_capture_on_commit_callbacks)
    hook_row.refresh_from_db()
    assert (hook_row.status, hook_row.attempts) == ("sent", 2)
    assert len(mail.outbox) == 1 and len(webhook.received) == 1
    assert webhook.received[0]["ticket"] == case.ticket


def test_workspace_targets_are_notified_in_addition_to_the_deployment_defaults(
    make_answer, workspace, webhook, django_capture_on_commit_callbacks
):
    NotificationTarget.objects.create(workspace=workspace, channel="email", address="team@example.test")
    NotificationTarget.objects.create(
        workspace=workspace, channel="email", address="off@example.test", active=False
    )
    open_case(make_answer, django_capture_on_commit_callbacks)
    assert sorted(m.to[0] for m in mail.outbox) == ["oncall@example.test", "team@example.test"]


def test_without_configured_targets_nothing_is_queued(
    make_answer, settings, django_capture_on_commit_callbacks
):
    settings.THEORIA = {**settings.THEORIA, "SLACK_WEBHOOK_URL": "", "ONCALL_EMAIL": ""}
    open_case(make_answer, django_capture_on_commit_callbacks)
    assert Notification.objects.count() == 0 and mail.outbox == []
    assert ReviewEvent.objects.filter(kind="opened").count() == 1


def test_setup_schedules_installs_the_sweep_every_minute_idempotently():
    call_command("setup_schedules")
    call_command("setup_schedules")
    (schedule,) = Schedule.objects.filter(name="escalation.sweep_overdue_cases")
    assert (schedule.func, schedule.schedule_type, schedule.minutes) == (
        "escalation.tasks.sweep_overdue_cases",
        Schedule.MINUTES,
        1,
    )


def test_the_sweep_command_reports_what_it_did_and_is_idempotent(
    make_answer, webhook, django_capture_on_commit_callbacks
):
    from io import StringIO

    open_case(make_answer, django_capture_on_commit_callbacks)
    outputs = []
    for _ in range(2):
        out = StringIO()
        with time_machine.travel(MONDAY_10 + timedelta(hours=1), tick=False):
            call_command("sweep_cases", stdout=out)
        outputs.append(out.getvalue().strip())
    assert outputs == [
        "at risk: 0, breached: 1, alerts sent: 2, failed: 0",
        "at risk: 0, breached: 0, alerts sent: 0, failed: 0",
    ]


def test_a_decision_on_a_held_revision_is_notified_once_by_email_and_webhook(
    make_answer, analyst, webhook, django_capture_on_commit_callbacks
):
    from audit.services.revision import answer_revision_decide

    answer = make_answer([("REFUTED", 0.1)])
    type(answer).objects.filter(pk=answer.pk).update(
        revision_status="proposed", proposed_text="The revised text.", text="The text as received."
    )
    answer.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        answer_revision_decide(answer=answer, actor=analyst, decision="reject", reason="Still wrong.")
    (body,) = webhook.received
    assert body["event"] == "answer.revision_rejected" and body["answer_id"] == answer.public_id
    assert body["revision"] == {"status": "rejected", "reason": "Still wrong."}
    assert "revision rejected by analyst1" in body["text"] and "the text as received" in body["text"]
    (message,) = mail.outbox
    assert f"[{answer.public_id}] revision rejected by analyst1" == message.subject
    assert f"https://theoria.example.test/answers/{answer.public_id}/" in message.body
    notifications_before = Notification.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        async_task("escalation.tasks.deliver_notifications")
    assert len(webhook.received) == 1 and Notification.objects.count() == notifications_before
