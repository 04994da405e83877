"""Human review: cases, their events, business calendars, curation items and notifications (docs/SPEC_NOTES.md#human-escalation)."""

from __future__ import annotations

import datetime as dt
from datetime import time
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from audit import constants

from . import policy


class CaseStatus(models.TextChoices):
    OPEN = "open", "Open"
    ACKNOWLEDGED = "acknowledged", "Acknowledged"
    PAUSED = "paused", "Paused (waiting on information)"
    RESOLVED = "resolved", "Resolved"


OPEN_CASE_STATUSES = (CaseStatus.OPEN, CaseStatus.ACKNOWLEDGED, CaseStatus.PAUSED)
CLOCK_STATUSES = (CaseStatus.OPEN, CaseStatus.ACKNOWLEDGED)  # statuses in which the clock may run


class SlaState(models.TextChoices):
    ON_TRACK = policy.SlaState.ON_TRACK, "On track"
    AT_RISK = policy.SlaState.AT_RISK, "At risk"
    BREACHED = policy.SlaState.BREACHED, "Breached"


# Badge text and CSS modifier per state, for the queue pages.
SLA_BADGES = {
    SlaState.ON_TRACK: ("On track", "ok"),
    SlaState.AT_RISK: ("At risk", "warn"),
    SlaState.BREACHED: ("Breached", "danger"),
}


class ReviewCase(models.Model):
    """A claim the machine could not vouch for, in the hands of people on a clock (a COMP-ESC ticket).

    The SLA clock of the current tier is stored, not computed by a thread: ``due_at`` (breach
    after it) and ``at_risk_at`` (at risk from it) are set when the clock starts or resumes and
    cleared when it stops (paused or resolved). An open case always runs one clock
    (``clock_phase``): at L1 the clock to acknowledge, then from the acknowledgement the clock to
    resolve; at L2/L3 the clock to resolve. ``clock_started_at`` is when the
    running segment began and ``clock_used_s`` the clock time consumed by earlier segments of
    this tier (pauses). ``version`` grows on every transition; services change a case only
    through a conditional update on it, so two concurrent actions cannot both succeed.
    """

    Status = CaseStatus
    SlaState = SlaState

    class Trigger(models.TextChoices):
        REFUTED = "refuted", "Refuted as received"
        AUTO_CORRECTED = "auto_corrected", "Corrected by the revision loop: confirm the correction"
        UNSUPPORTED = "unsupported", "Not supported (NEI): no source backs it"
        LOW_CONFIDENCE = "low_confidence", "Refuted / NEI with low confidence"
        LLM_DISAGREEMENT = "llm_disagreement", "The LLM judge disagreed with a confident offline verdict"
        REGULATED_DOMAIN = "regulated_domain", "Regulated domain"
        MANUAL = "manual", "Manual escalation"

    class Decision(models.TextChoices):
        CONFIRM = "confirm", "Confirm the label"
        RELABEL_SUPPORTED = "relabel_supported", "Relabel SUPPORTED"
        RELABEL_REFUTED = "relabel_refuted", "Relabel REFUTED"
        RELABEL_NEI = "relabel_nei", "Relabel NEI"
        SUPPRESS = "suppress", "Suppress the answer"
        KB_CORRECTION = "kb_correction", "Knowledge-base correction needed"

    OPEN_STATUSES = OPEN_CASE_STATUSES

    workspace = models.ForeignKey("audit.Workspace", on_delete=models.CASCADE, related_name="review_cases")
    number = models.PositiveIntegerField(unique=True, editable=False)
    ticket = models.CharField(max_length=32, unique=True, editable=False)
    claim = models.ForeignKey("audit.Claim", on_delete=models.CASCADE, related_name="review_cases")
    # the same claim in later audits of the same answer (same workspace, query and text as received):
    # they join this case instead of opening another (escalation.services.cases_open_for_answer)
    joined_claims = models.ManyToManyField("audit.Claim", blank=True, related_name="joined_review_cases")
    domain = models.CharField(max_length=64, blank=True, db_index=True)
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    reasons = models.JSONField(
        default=list, blank=True, help_text="Every intake reason (the trigger is the first)."
    )
    tier = models.PositiveSmallIntegerField(default=policy.FIRST_TIER)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    sla_state = models.CharField(max_length=16, choices=SlaState.choices, default=SlaState.ON_TRACK)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="review_cases",
    )
    risk_score = models.FloatField(default=0.0)
    summary = models.CharField(max_length=500, blank=True)
    opened_at = models.DateTimeField(default=timezone.now, db_index=True)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    clock_started_at = models.DateTimeField(null=True, blank=True)
    clock_used_s = models.FloatField(default=0.0)
    due_at = models.DateTimeField(null=True, blank=True)
    at_risk_at = models.DateTimeField(null=True, blank=True)
    paused_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(max_length=24, choices=Decision.choices, blank=True)
    rationale = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-risk_score", "due_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(tier__gte=1) & Q(tier__lte=3), name="%(app_label)s_%(class)s_tier_1_to_3"
            ),
            models.CheckConstraint(
                condition=Q(status__in=CaseStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(sla_state__in=SlaState.values), name="%(app_label)s_%(class)s_sla_state_valid"
            ),
            models.CheckConstraint(
                condition=Q(risk_score__gte=0.0) & Q(risk_score__lte=1.0),
                name="%(app_label)s_%(class)s_risk_unit_interval",
            ),
            models.CheckConstraint(
                condition=(Q(status=CaseStatus.RESOLVED) & Q(resolved_at__isnull=False))
                | (~Q(status=CaseStatus.RESOLVED) & Q(resolved_at__isnull=True)),
                name="%(app_label)s_%(class)s_resolved_at_iff_resolved",
            ),
            models.CheckConstraint(
                condition=(Q(status=CaseStatus.PAUSED) & Q(paused_at__isnull=False) & Q(due_at__isnull=True))
                | (~Q(status=CaseStatus.PAUSED) & Q(paused_at__isnull=True)),
                name="%(app_label)s_%(class)s_paused_stops_clock",
            ),
            models.CheckConstraint(
                condition=~Q(status=CaseStatus.RESOLVED) | ~Q(decision=""),
                name="%(app_label)s_%(class)s_resolved_has_decision",
            ),
            models.UniqueConstraint(
                fields=["claim"],
                condition=Q(status__in=OPEN_CASE_STATUSES),
                name="%(app_label)s_%(class)s_one_open_case_per_claim",
            ),
        ]
        indexes = [
            # The sweep's query: open cases whose clock is running, by deadline.
            models.Index(
                fields=["due_at"],
                condition=Q(status__in=CLOCK_STATUSES) & Q(due_at__isnull=False),
                name="escalation_case_open_due",
            ),
            models.Index(fields=["workspace", "status", "tier"], name="escalation_case_ws_status"),
        ]

    def __str__(self) -> str:
        return self.ticket

    @property
    def is_open(self) -> bool:
        return self.status in self.OPEN_STATUSES

    @property
    def clock_phase(self) -> str:
        """The clock the case runs at its tier: 'acknowledge' (L1 until acknowledged) or 'resolve'."""
        return policy.clock_phase(self.tier, acknowledged=self.acknowledged_at is not None)

    def sla_state_at(self, now: dt.datetime) -> str:
        """The SLA state this case should be in at ``now`` (from its own columns)."""
        if self.status not in CLOCK_STATUSES:
            return self.sla_state
        computed = policy.sla_state(due_at=self.due_at, at_risk_at=self.at_risk_at, now=now)
        # A state never goes back within one clock (a met L1 SLA keeps its history).
        order: list[str] = [self.SlaState.ON_TRACK, self.SlaState.AT_RISK, self.SlaState.BREACHED]
        return max(computed, self.sla_state, key=order.index)


class ReviewEvent(models.Model):
    """One transition of a case: who did what, when, at which tier, and why (append-only)."""

    class Kind(models.TextChoices):
        OPENED = "opened", "Opened"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        ASSIGNED = "assigned", "Assigned"
        UNASSIGNED = "unassigned", "Unassigned"
        NOTE = "note", "Note"
        ESCALATED = "escalated", "Escalated"
        PAUSED = "paused", "Paused"
        RESUMED = "resumed", "Resumed"
        RESOLVED = "resolved", "Resolved"
        REOPENED = "reopened", "Reopened"
        AT_RISK = "at_risk", "SLA at risk"
        BREACHED = "breached", "SLA breached"

    # Kinds that alert the on-call channels (once each).
    NOTIFYING_KINDS = (Kind.OPENED, Kind.ESCALATED, Kind.AT_RISK, Kind.BREACHED, Kind.REOPENED)

    case = models.ForeignKey(ReviewCase, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    tier = models.PositiveSmallIntegerField()
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True)
    reason = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(tier__gte=1) & Q(tier__lte=3), name="%(app_label)s_%(class)s_tier_1_to_3"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.case_id} {self.kind} @ {self.at:%Y-%m-%d %H:%M}"


class TicketCounter(models.Model):
    """The last ticket number handed out (one row per prefix): tickets are sequential without gaps."""

    prefix = models.CharField(max_length=16, primary_key=True)
    last = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.prefix}: {self.last}"


def _validate_working_days(value: Any) -> None:
    if (
        not isinstance(value, list)
        or not value
        or any(not isinstance(d, int) or not 0 <= d <= 6 for d in value)
    ):
        raise ValidationError("Give a non-empty list of weekdays, 0 (Monday) to 6 (Sunday).")


def _validate_zone(value: Any) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            f"Unknown time zone {value!r}; use an IANA name such as Europe/Berlin."
        ) from None


def _default_working_days() -> list[Any]:
    return list(constants.DEFAULT_WORKING_DAYS)


class BusinessCalendar(models.Model):
    """A workspace's business hours: the clock of the L2 and L3 SLAs (one per workspace)."""

    workspace = models.OneToOneField(
        "audit.Workspace", on_delete=models.CASCADE, related_name="business_calendar"
    )
    timezone = models.CharField(
        max_length=64, default=constants.DEFAULT_CALENDAR_TIMEZONE, validators=[_validate_zone]
    )
    working_days = models.JSONField(
        default=_default_working_days,
        validators=[_validate_working_days],
        help_text="Weekdays, 0 = Monday … 6 = Sunday.",
    )
    day_start = models.TimeField(default=time.fromisoformat(constants.DEFAULT_WORKDAY_START))
    day_end = models.TimeField(default=time.fromisoformat(constants.DEFAULT_WORKDAY_END))

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(day_end__gt=models.F("day_start")), name="%(app_label)s_%(class)s_day_ordered"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.workspace} ({self.timezone})"


class Holiday(models.Model):
    """A non-working date of a business calendar."""

    calendar = models.ForeignKey(BusinessCalendar, on_delete=models.CASCADE, related_name="holidays")
    date = models.DateField()
    name = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["date"]
        constraints = [
            models.UniqueConstraint(fields=["calendar", "date"], name="%(app_label)s_%(class)s_unique_date")
        ]

    def __str__(self) -> str:
        return f"{self.date} {self.name}".strip()


class CurationStatus(models.TextChoices):
    OPEN = "open", "Open"
    DONE = "done", "Done"
    DISMISSED = "dismissed", "Dismissed"


class CurationItem(models.Model):
    """A knowledge-base correction to make, opened by a review decision or by the nightly auditor."""

    Status = CurationStatus

    class Source(models.TextChoices):
        REVIEW = "review", "Review decision"
        NIGHTLY = "nightly", "Nightly auditor"
        MANUAL = "manual", "Manual"

    workspace = models.ForeignKey("audit.Workspace", on_delete=models.CASCADE, related_name="curation_items")
    source = models.CharField(max_length=16, choices=Source.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    case = models.ForeignKey(
        ReviewCase, null=True, blank=True, on_delete=models.SET_NULL, related_name="curation_items"
    )
    claim = models.ForeignKey(
        "audit.Claim", null=True, blank=True, on_delete=models.SET_NULL, related_name="curation_items"
    )
    document = models.ForeignKey(
        "audit.Document", null=True, blank=True, on_delete=models.SET_NULL, related_name="curation_items"
    )
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=CurationStatus.values), name="%(app_label)s_%(class)s_status_valid"
            ),
            models.CheckConstraint(
                condition=(Q(status=CurationStatus.OPEN) & Q(closed_at__isnull=True))
                | (~Q(status=CurationStatus.OPEN) & Q(closed_at__isnull=False)),
                name="%(app_label)s_%(class)s_closed_at_iff_closed",
            ),
        ]

    def __str__(self) -> str:
        return f"curation #{self.pk} ({self.status})"


class Channel(models.TextChoices):
    EMAIL = "email", "Email"
    WEBHOOK = "webhook", "Slack-compatible webhook"


class NotificationTarget(models.Model):
    """Where a workspace's escalation alerts go (in addition to the deployment's THEORIA defaults)."""

    Channel = Channel

    workspace = models.ForeignKey(
        "audit.Workspace", on_delete=models.CASCADE, related_name="notification_targets"
    )
    channel = models.CharField(max_length=16, choices=Channel.choices)
    address = models.CharField(max_length=500, help_text="An email address, or the webhook URL.")
    tier = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        choices=[(t, f"Level {t} only") for t in policy.TIERS],
        help_text="A tier's on-call address or group: told only of the cases at that tier (a case "
        "opened, escalated or reopened there and waiting for an owner, its SLA at risk or breached). "
        "Blank: told of every case.",
    )
    active = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "channel", "address"], name="%(app_label)s_%(class)s_unique"
            ),
            models.CheckConstraint(
                condition=Q(tier__isnull=True) | (Q(tier__gte=1) & Q(tier__lte=3)),
                name="%(app_label)s_%(class)s_tier_1_to_3",
            ),
            models.CheckConstraint(
                condition=Q(channel__in=Channel.values), name="%(app_label)s_%(class)s_channel_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.channel}: {self.address}" + (f" (Level {self.tier})" if self.tier else "")


class NotificationStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class Notification(models.Model):
    """One alert on one channel, at most one per (event, channel, address). What it is about:

    - a review event (a case transition): ``event``;
    - a decision on an answer that is no case's (a held revision accepted or rejected): the audit
      event that recorded it, ``audit_event``;
    - a workspace alert that is neither (reviewer agreement fell): ``subject`` and ``body`` stored.
    At most one of ``event`` and ``audit_event`` is set, and an alert with neither has a subject.
    """

    Status = NotificationStatus

    workspace = models.ForeignKey("audit.Workspace", on_delete=models.CASCADE, related_name="notifications")
    event = models.ForeignKey(
        ReviewEvent, null=True, blank=True, on_delete=models.CASCADE, related_name="notifications"
    )
    audit_event = models.ForeignKey(
        "audit.AuditEvent", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    subject = models.CharField(max_length=200, blank=True, help_text="A workspace alert's subject.")
    body = models.TextField(blank=True, help_text="A workspace alert's text.")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    address = models.CharField(max_length=500)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a sender last claimed it (status sending)."
    )
    stuck_retried = models.BooleanField(
        default=False, help_text="Left in 'sending' by a crashed sender and retried once (never again)."
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["event", "channel", "address"], name="%(app_label)s_%(class)s_once_per_event"
            ),
            models.UniqueConstraint(
                fields=["audit_event", "channel", "address"],
                name="%(app_label)s_%(class)s_once_per_audit_event",
            ),
            models.CheckConstraint(
                condition=(Q(event__isnull=False) & Q(audit_event__isnull=True))
                | (Q(event__isnull=True) & Q(audit_event__isnull=False))
                | (Q(event__isnull=True) & Q(audit_event__isnull=True) & ~Q(subject="")),
                name="%(app_label)s_%(class)s_one_event",
            ),
            models.CheckConstraint(
                condition=(Q(status=NotificationStatus.SENT) & Q(sent_at__isnull=False))
                | (~Q(status=NotificationStatus.SENT) & Q(sent_at__isnull=True)),
                name="%(app_label)s_%(class)s_sent_at_iff_sent",
            ),
        ]
        indexes = [
            models.Index(
                fields=["id"],
                condition=Q(status__in=[NotificationStatus.PENDING, NotificationStatus.FAILED]),
                name="escalation_notif_unsent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.channel} {self.address} ({self.status})"
