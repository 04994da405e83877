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


def llm_usage_by_day(*, workspace: Workspace, since: datetime, until: datetime) -> list[dict]:
    """Per UTC day in [since, until): runs, LLM calls, tokens, LLM time and failed calls (dashboard).

    Days without runs are left out; ``failures`` counts entries of ``llm_failures`` (a JSON list,
    summed in Python so the same code runs on SQLite and PostgreSQL).
    """
    rows: dict = {}
    runs = (VerificationRun.objects.filter(answer__workspace=workspace, started_at__gte=since, started_at__lt=until)
            .values_list("started_at", "llm_calls", "prompt_tokens", "completion_tokens", "llm_latency_ms",
                         "llm_failures"))
    for started_at, calls, prompt, completion, latency, failures in runs:
        day = started_at.astimezone(timezone.utc).date()
        row = rows.setdefault(day, {"day": day, "runs": 0, "llm_calls": 0, "prompt_tokens": 0,
                                    "completion_tokens": 0, "llm_latency_ms": 0.0, "llm_failures": 0})
        row["runs"] += 1
        row["llm_calls"] += calls
        row["prompt_tokens"] += prompt
        row["completion_tokens"] += completion
        row["llm_latency_ms"] += latency
        row["llm_failures"] += len(failures or [])
    return [rows[d] for d in sorted(rows)]
