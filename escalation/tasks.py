"""django-q2 entry points of the escalation domain: they take ids (or nothing) and call one service."""

from __future__ import annotations

from typing import Any

from . import notifications, services


def sweep_overdue_cases() -> dict[str, Any]:
    """Every minute: mark at-risk and breached cases, then deliver what is still unsent."""
    counts = services.cases_sweep()
    counts.update(notifications.notifications_deliver())
    return counts


def deliver_notifications() -> dict[str, Any]:
    """After a transition commits: send its notifications."""
    return notifications.notifications_deliver()
