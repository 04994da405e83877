"""Outbound safety of alerts: webhooks go through the Audit-Web guard, a notification left
'sending' by a crash is retried exactly once, and mail has a timeout."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.utils import timezone

from escalation import notifications
from escalation.models import Notification

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "address, reason",
    [
        ("http://127.0.0.1:9/hook", "private_address"),
        ("http://169.254.169.254/latest/meta-data/", "private_address"),
        ("file:///etc/passwd", "scheme"),
        ("http://user:secret@hooks.example.test/x", "invalid_url"),
    ],
)
def test_a_webhook_to_a_private_or_odd_address_is_refused_before_any_byte_is_sent(case, address, reason):
    Notification.objects.all().delete()
    event = case.events.order_by("id").first()
    Notification.objects.create(
        workspace=event.case.workspace, event=event, channel="webhook", address=address
    )
    counts = notifications.notifications_deliver()
    row = Notification.objects.get(address=address)
    assert counts["failed"] == 1 and row.status == "failed"
    assert reason in row.last_error


def test_a_notification_stuck_in_sending_is_retried_exactly_once(case):
    Notification.objects.exclude(channel="email").delete()
    row = Notification.objects.get(channel="email")
    long_ago = timezone.now() - dt.timedelta(hours=1)
    Notification.objects.filter(pk=row.pk).update(status="sending", attempts=1, claimed_at=long_ago)

    counts = notifications.notifications_deliver()
    row.refresh_from_db()
    assert counts["stuck"] == 1 and row.status == "sent" and row.stuck_retried and len(mail.outbox) == 1

    Notification.objects.filter(pk=row.pk).update(status="sending", sent_at=None, claimed_at=long_ago)
    notifications.notifications_deliver()
    row.refresh_from_db()
    assert row.status == "failed" and "given up" in row.last_error
    notifications.notifications_deliver()
    assert len(mail.outbox) == 1  # never sent a third time


def test_a_notification_sending_right_now_is_left_alone(case):
    row = Notification.objects.filter(channel="email").first()
    Notification.objects.filter(pk=row.pk).update(status="sending", attempts=1, claimed_at=timezone.now())
    assert notifications.notifications_deliver()["stuck"] == 0
    row.refresh_from_db()
    assert row.status == "sending" and not mail.outbox


def test_every_outbound_channel_has_a_timeout(settings):
    from audit import constants

    assert settings.EMAIL_TIMEOUT and settings.EMAIL_TIMEOUT > 0
    assert (
        constants.WEBHOOK_TIMEOUT_S > 0
        and settings.THEORIA["LLM_TIMEOUT_S"] > 0
        and constants.WEB_TIMEOUT_S > 0
    )


def test_a_notification_left_sending_before_claimed_at_existed_is_recovered(case):
    Notification.objects.exclude(channel="email").delete()
    row = Notification.objects.get(channel="email")
    Notification.objects.filter(pk=row.pk).update(status="sending", attempts=1, claimed_at=None)

    counts = notifications.notifications_deliver()
    row.refresh_from_db()
    assert counts["stuck"] == 1 and row.status == "sent" and row.stuck_retried and len(mail.outbox) == 1
