"""Recurring jobs of the escalation domain (see audit/schedules.py for the format)."""

SCHEDULES: list[dict] = []
