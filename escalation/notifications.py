"""Escalation notifications: queued with the event that causes them, delivered once, by channel.

Every alerting transition (``ReviewEvent.NOTIFYING_KINDS``) queues one ``Notification`` per
target (``selectors.notification_targets``) in its transaction; delivery runs after commit on the
task worker (``notifications_deliver``), claims each notification by a conditional update so it
is sent at most once, retries failures up to ``NOTIFICATION_MAX_ATTEMPTS`` and recovers the ones a
crashed sender left behind. The transports are ``_send``'s branches: e-mail (Django's mail
backend) and the Slack-style webhook (through the Audit-Web fetch guard). A new channel is a
``Channel`` choice in ``models.py`` and its branch in ``_send``.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from audit import constants
from audit.pipeline.web.fetch import WebError, post_json

from . import policy, selectors
from .models import Channel, Notification, NotificationStatus, ReviewCase, ReviewEvent

if TYPE_CHECKING:
    from audit.selectors.facade import Answer, AuditEvent, Workspace

logger = logging.getLogger(__name__)


def notifications_queue(event: ReviewEvent) -> None:
    """Create one pending notification per target for ``event`` and deliver them after commit: the
    targets of every tier and those of the event's tier (``NotificationTarget.tier``), so the L2
    group hears of an unassigned case escalated to L2 and the L1 group does not."""
    case = event.case
    workspace = case.workspace
    # a tier's own targets hear of a case waiting for an owner at their tier, and of its SLA alerts
    waiting = event.kind not in selectors.CLOCK_START_KINDS or case.owner_id is None
    targets = selectors.notification_targets(workspace, tier=event.tier if waiting else None)
    Notification.objects.bulk_create(
        [
            Notification(workspace=workspace, event=event, channel=channel, address=address)
            for channel, address in targets
        ],
        ignore_conflicts=True,
    )
    if targets:
        transaction.on_commit(_enqueue_delivery)


def alert_queue(*, workspace: Workspace, subject: str, body: str) -> int:
    """Queue one workspace alert (no case event) to every target; return how many were queued."""
    targets = selectors.notification_targets(workspace)
    Notification.objects.bulk_create(
        [
            Notification(
                workspace=workspace, channel=channel, address=address, subject=subject[:200], body=body
            )
            for channel, address in targets
        ]
    )
    if targets:
        transaction.on_commit(_enqueue_delivery)
    return len(targets)


def notifications_queue_for_answer_decision(*, answer: Answer, audit_event: AuditEvent) -> int:
    """Queue one notification per target of the answer's workspace for a decision on the answer.

    Registered as audit's ``answer_decided`` hook (a held revision accepted or rejected): the
    front end learns it like a case decision, through the same targets, delivery and retries.
    Returns how many were queued.
    """
    targets = selectors.notification_targets(answer.workspace)
    Notification.objects.bulk_create(
        [
            Notification(
                workspace=answer.workspace, audit_event=audit_event, channel=channel, address=address
            )
            for channel, address in targets
        ],
        ignore_conflicts=True,
    )
    if targets:
        transaction.on_commit(_enqueue_delivery)
    return len(targets)


def review_agreement_alerts_queue(*, workspace: Workspace, alerts: list[dict[str, Any]]) -> int:
    """Alert the workspace's targets that reviewers agree less with the machine in some domains
    (the receiver of ``audit.hooks.reviewer_agreement_low``)."""
    if not alerts:
        return 0
    domains = ", ".join(a["domain"] for a in alerts)
    lines = [
        f"{a['domain']}: reviewers agreed with the machine on {a['agreement']:.0%} of {a['decisions']} decisions "
        f"in the last {a['window_days']} days (threshold {a['threshold']:.0%})"
        + (f"; commonest change {a['top_relabel']}" if a.get("top_relabel") else "")
        for a in alerts
    ]
    url = settings.THEORIA.get("PUBLIC_URL", "").rstrip("/") + _dashboard_path()
    body = "\n".join([f"Reviewer agreement fell in {workspace.name}:", *lines, f"Dashboard: {url}"])
    return alert_queue(
        workspace=workspace, subject=f"[{workspace.slug}] reviewer agreement low: {domains}", body=body
    )


def _dashboard_path() -> str:
    try:
        return reverse("dashboard")
    except NoReverseMatch:
        return "/dashboard/"


def _enqueue_delivery() -> None:
    from django_q.tasks import async_task

    async_task("escalation.tasks.deliver_notifications")


def _case_url(case: ReviewCase) -> str:
    """Link to the case page, absolute when THEORIA["PUBLIC_URL"] is set."""
    try:
        path = reverse("case-detail", args=[case.ticket])
    except NoReverseMatch:  # pages not installed: link the API record instead
        path = f"/api/v1/cases/{case.ticket}"
    public_url: str = settings.THEORIA.get("PUBLIC_URL", "")
    return public_url.rstrip("/") + path


def _clock_note(event: ReviewEvent) -> str:
    """'acknowledgement ' / 'resolution ': which clock an SLA event is about, where it says."""
    clock = (event.details or {}).get("clock")
    return {"acknowledge": "acknowledgement ", "resolve": "resolution "}.get(clock or "", "")


def _message(event: ReviewEvent) -> tuple[str, str]:
    case = event.case
    what_by_kind: dict[str, str] = {
        ReviewEvent.Kind.OPENED: "new case",
        ReviewEvent.Kind.ESCALATED: f"escalated to {policy.TIER_NAMES[case.tier]}",
        ReviewEvent.Kind.AT_RISK: _clock_note(event) + "SLA at risk",
        ReviewEvent.Kind.BREACHED: _clock_note(event) + "SLA breached",
        ReviewEvent.Kind.REOPENED: "reopened",
    }
    what = what_by_kind.get(event.kind, event.get_kind_display())
    subject = f"[{case.ticket}] {what} (L{event.tier}, risk {case.risk_score:.2f})"
    due = event.details.get("due_at") or (case.due_at.isoformat() if case.due_at else "-")
    body = "\n".join(
        [
            f"{case.ticket}: {what}",
            f"Tier: L{event.tier} ({policy.TIER_NAMES[event.tier]})",
            f"Due: {due}",
            f"Claim: {case.summary}",
            f"Reason: {event.reason}" if event.reason else "",
            f"Case: {_case_url(case)}",
        ]
    ).strip()
    return subject, body


def _answer_url(answer_id: str) -> str:
    try:
        path = reverse("answer-detail", args=[answer_id])
    except NoReverseMatch:
        path = f"/api/v1/answers/{answer_id}"
    public_url: str = settings.THEORIA.get("PUBLIC_URL", "")
    return public_url.rstrip("/") + path


def _decision_message(event: AuditEvent) -> tuple[str, str, dict[str, Any]]:
    """Subject, body and webhook fields of a decision on an answer (an audit event's details)."""
    details = event.details or {}
    answer_id = details.get("answer_id", event.object_id)
    status = details.get("status", "")
    subject = f"[{answer_id}] revision {status} by {event.actor_label or 'system'}"
    body = "\n".join(
        [
            f"Answer {answer_id}: the held revision was {status}.",
            f"Reason: {details.get('reason', '')}",
            f"Served text now: {'the revised text' if status == 'accepted' else 'the text as received'}",
            f"Answer: {_answer_url(answer_id)}",
        ]
    )
    fields = {"answer_id": answer_id, "revision": {"status": status, "reason": details.get("reason", "")}}
    return subject, body, fields


def _send(notification: Notification) -> None:
    if notification.event is not None:
        subject, body = _message(notification.event)
        fields = {"ticket": notification.event.case.ticket}
        event = notification.event.kind
    elif notification.audit_event is not None:
        subject, body, fields = _decision_message(notification.audit_event)
        event = notification.audit_event.action
    else:  # a workspace alert (reviewer drift): its text was stored when it was queued
        subject, body, fields, event = notification.subject, notification.body, {"ticket": ""}, "alert"
    if notification.channel == Channel.EMAIL:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [notification.address], fail_silently=False)
        return
    payload = {
        "channel": settings.THEORIA.get("SLACK_CHANNEL", ""),
        "text": f"*{subject}*\n{body}",
        **fields,
        "event": event,
    }
    # through the Audit-Web guard: http(s) only, no credentials, public addresses only (no loopback,
    # metadata or private hosts), the checked address pinned, no redirects, a timeout, a capped reply
    try:
        post_json(
            notification.address,
            payload,
            allow_private=bool(settings.THEORIA.get("WEB_ALLOW_PRIVATE_ADDRESSES")),
        )
    except WebError as exc:
        raise OSError(f"webhook refused or failed ({exc.reason.value}): {exc.message}") from None


def notifications_deliver(*, limit: int = 200) -> dict[str, Any]:
    """Send pending (and failed, up to the attempt limit) notifications, each at most once.

    A notification is claimed by a conditional update (pending/failed -> sending) before it is
    sent, so two workers never send the same one. Runs outside a transaction on purpose: the
    claim must be visible to other workers at once.
    """
    counts = {"sent": 0, "failed": 0, "stuck": 0}
    _recover_stuck(counts)
    due = (
        Notification.objects.filter(
            status__in=[NotificationStatus.PENDING, NotificationStatus.FAILED],
            attempts__lt=constants.NOTIFICATION_MAX_ATTEMPTS,
        )
        .select_related("event__case", "audit_event")
        .order_by("id")[:limit]
    )
    for notification in list(due):
        claimed = Notification.objects.filter(
            id=notification.id, status=notification.status, attempts=notification.attempts
        ).update(status=NotificationStatus.SENDING, attempts=F("attempts") + 1, claimed_at=timezone.now())
        if claimed != 1:
            continue
        _attempt(notification, counts)
    return counts


def _attempt(notification: Notification, counts: dict[str, Any]) -> None:
    """Send one claimed notification and record the outcome."""
    try:
        _send(notification)
    except Exception as exc:  # noqa: BLE001 — any delivery failure is recorded and retried
        logger.warning("notification %s to %s failed: %s", notification.id, notification.address, exc)
        Notification.objects.filter(id=notification.id).update(
            status=NotificationStatus.FAILED, last_error=str(exc)[:2000]
        )
        counts["failed"] += 1
    else:
        Notification.objects.filter(id=notification.id).update(
            status=NotificationStatus.SENT, sent_at=timezone.now()
        )
        counts["sent"] += 1


def _recover_stuck(counts: dict[str, Any]) -> None:
    """Retry, exactly once, a notification left 'sending' by a sender that crashed mid-send.

    Whether it reached its target is unknown, so it is sent once more (a duplicate beats a lost
    breach alert) and marked; one stuck a second time is given up (failed, attempts exhausted).
    A notification with no ``claimed_at`` (left 'sending' before the column existed) has been
    stuck for at least as long as any other and is recovered the same way.
    """
    cutoff = timezone.now() - timedelta(seconds=constants.NOTIFICATION_STUCK_AFTER_S)
    stuck = Notification.objects.filter(
        Q(claimed_at__lt=cutoff) | Q(claimed_at__isnull=True), status=NotificationStatus.SENDING
    )
    Notification.objects.filter(pk__in=stuck.filter(stuck_retried=True).values("pk")).update(
        status=NotificationStatus.FAILED,
        attempts=constants.NOTIFICATION_MAX_ATTEMPTS,
        last_error="left 'sending' twice by a crashed sender; given up",
    )
    for notification in (
        stuck.filter(stuck_retried=False).select_related("event__case", "audit_event").order_by("id")
    ):
        claimed = Notification.objects.filter(
            id=notification.id,
            status=NotificationStatus.SENDING,
            claimed_at=notification.claimed_at,
            stuck_retried=False,
        ).update(stuck_retried=True, claimed_at=timezone.now())
        if claimed == 1:
            counts["stuck"] += 1
            _attempt(notification, counts)
