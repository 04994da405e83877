"""Recurring jobs of the escalation domain (see audit/schedules.py for the format)."""

from typing import Any

SCHEDULES: list[dict[str, Any]] = [
    {
        # Marks at-risk / breached cases and sends their alerts; idempotent, so catch-up is off
        # (settings.Q_CLUSTER["catch_up"] = False) and an overlapping run is harmless.
        "name": "escalation.sweep_overdue_cases",
        "func": "escalation.tasks.sweep_overdue_cases",
        "schedule_type": "I",
        "minutes": 1,
    },
]
