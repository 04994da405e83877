"""Label drift: alert when reviewers agree with the machine less than they should in a domain.

Run daily (``audit.tasks.review_drift_check``): for each domain of the workspace whose reviewers
gave the machine's label on fewer than ``REVIEW_DRIFT_MIN_AGREEMENT`` of at least
``REVIEW_DRIFT_MIN_EXAMPLES`` decisions over the last ``REVIEW_DRIFT_WINDOW_DAYS`` days (and no more than
in the window before: a domain whose agreement is rising is shown as recovering, not alerted), one
``review.agreement_low`` audit event is written and the alert goes to the workspace's notification
targets through ``audit.hooks.reviewer_agreement_low`` (escalation's channels). A domain alerts at
most once per window.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit import constants, hooks
from audit.models import AuditEvent, Workspace
from audit.selectors.learning import review_drift
from audit.services.events import event_record

ACTION = "review.agreement_low"
SOURCE = "review_drift"


@transaction.atomic
def review_drift_check(*, workspace: Workspace, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Record and announce the domains whose reviewer agreement is low now; return their alerts."""
    now = now or timezone.now()
    window = dt.timedelta(days=constants.REVIEW_DRIFT_WINDOW_DAYS)
    alerted = set(
        AuditEvent.objects.filter(workspace=workspace, action=ACTION, at__gte=now - window).values_list(
            "details__domain", flat=True
        )
    )
    alerts = [
        {
            "domain": row["domain"],
            "agreement": row["agreement"],
            "decisions": row["decisions"],
            "agreement_before": row["agreement_before"],
            "window_days": constants.REVIEW_DRIFT_WINDOW_DAYS,
            "threshold": constants.REVIEW_DRIFT_MIN_AGREEMENT,
            "top_relabel": f"{row['top_relabel'][0]} ({row['top_relabel'][1]})" if row["top_relabel"] else "",
        }
        for row in review_drift(workspace=workspace, now=now)
        if row["low"] and row["domain"] not in alerted
    ]
    for alert in alerts:
        event_record(action=ACTION, obj=workspace, actor_label=SOURCE, workspace=workspace, details=alert)
    hooks.reviewer_agreement_low(workspace=workspace, alerts=alerts)
    return alerts
