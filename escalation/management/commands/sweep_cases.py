"""Run the SLA sweep once, now (the schedule runs it every minute; this is for operators and demos)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from escalation import tasks


class Command(BaseCommand):
    help = "Mark at-risk and breached escalation cases and deliver pending alerts (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        counts = tasks.sweep_overdue_cases()
        self.stdout.write(
            f"at risk: {counts['at_risk']}, breached: {counts['breached']}, "
            f"alerts sent: {counts['sent']}, failed: {counts['failed']}"
        )
