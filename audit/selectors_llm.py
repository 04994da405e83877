"""Reads about LLM usage: tokens a workspace spent, for the daily budget and the dashboard."""

from __future__ import annotations

from datetime import datetime, time, timezone

from django.db.models import F, Sum

from audit.models import VerificationRun, Workspace


def llm_tokens_used(*, workspace: Workspace, since: datetime) -> int:
    """Prompt + completion tokens of the workspace's verification runs started at or after ``since``."""
    total = (VerificationRun.objects.filter(answer__workspace=workspace, started_at__gte=since)
             .aggregate(tokens=Sum(F("prompt_tokens") + F("completion_tokens")))["tokens"])
    return int(total or 0)


def start_of_day(now: datetime) -> datetime:
    """Midnight UTC of ``now``'s day: the budget is per UTC day."""
    return datetime.combine(now.astimezone(timezone.utc).date(), time.min, tzinfo=timezone.utc)
