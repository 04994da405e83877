"""Reads about LLM usage: tokens a workspace spent, for the daily budget and the dashboard; the
endpoint's state as the workspace settings show it."""

from __future__ import annotations

from datetime import datetime, time, timezone

from django.conf import settings
from django.db.models import Count, F, Func, IntegerField, Sum
from django.db.models.functions import Coalesce, TruncDate

from audit.models import AuditEvent, VerificationRun, Workspace


def llm_tokens_used(*, workspace: Workspace, since: datetime) -> int:
    """Prompt + completion tokens the workspace spent since ``since``: its verification runs, and
    the drafts of Normal-mode answers (no run: their cost is on the ``answer.recorded`` event)."""
    total = VerificationRun.objects.filter(answer__workspace=workspace, started_at__gte=since).aggregate(
        tokens=Sum(F("prompt_tokens") + F("completion_tokens"))
    )["tokens"]
    drafted = AuditEvent.objects.filter(
        workspace=workspace,
        action="answer.recorded",
        at__gte=since,
        details__drafted__has_key="prompt_tokens",
    ).values_list("details", flat=True)
    drafts = sum(
        int(d["drafted"].get("prompt_tokens") or 0) + int(d["drafted"].get("completion_tokens") or 0)
        for d in drafted
    )
    return int(total or 0) + drafts


def llm_status(*, workspace: Workspace) -> dict:
    """The LLM endpoint as the workspace settings show it: which one and its circuit breaker in this
    process (``state`` closed / open / half_open, what opened it, the thresholds; "not used yet" before
    this process's first call to it)."""
    from audit.pipeline.llm.base import LLMConfig
    from audit.pipeline.llm.endpoint import endpoint_state

    conf = settings.THEORIA
    base_url = (conf.get("LLM_BASE_URL") or "").strip()
    if not base_url:
        return {
            "configured": False,
            "endpoint": "",
            "model": "",
            "judge_prompt": "",
            "breaker": None,
        }
    config = LLMConfig(
        base_url=base_url, model=conf.get("LLM_MODEL") or "default", api_key=conf.get("LLM_API_KEY") or ""
    )
    breaker = endpoint_state(config) or {"state": "not used yet", "note": "no call from this process yet"}
    return {
        "configured": True,
        "endpoint": base_url,
        "model": config.model,
        "judge_prompt": conf.get("LLM_JUDGE_PROMPT") or "batched",
        "breaker": breaker,
    }


def start_of_day(now: datetime) -> datetime:
    """Midnight UTC of ``now``'s day: the budget is per UTC day."""
    return datetime.combine(now.astimezone(timezone.utc).date(), time.min, tzinfo=timezone.utc)


class JSONArrayLength(Func):
    """Length of a JSON array column (0 for anything else): SQLite's ``json_array_length``,
    PostgreSQL's ``jsonb_array_length`` guarded by ``jsonb_typeof``."""

    function = "JSON_ARRAY_LENGTH"
    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        template = (
            "CASE WHEN jsonb_typeof(%(expressions)s) = 'array' "
            "THEN jsonb_array_length(%(expressions)s) ELSE 0 END"
        )
        return self.as_sql(compiler, connection, template=template, **extra)


def llm_usage_by_day(*, workspace: Workspace, since: datetime, until: datetime) -> list[dict]:
    """Per UTC day in [since, until): runs, LLM calls, tokens, LLM time and failed calls (dashboard).

    Days without runs are left out; ``llm_failures`` counts the entries of the runs'
    ``llm_failures`` lists (one per failed call). One GROUP BY query: its cost grows with the
    days, not the runs.
    """
    rows = (
        VerificationRun.objects.filter(
            answer__workspace=workspace, started_at__gte=since, started_at__lt=until
        )
        .annotate(day=TruncDate("started_at", tzinfo=timezone.utc))
        .values("day")
        .annotate(
            runs=Count("id"),
            llm_calls=Coalesce(Sum("llm_calls"), 0),
            prompt_tokens=Coalesce(Sum("prompt_tokens"), 0),
            completion_tokens=Coalesce(Sum("completion_tokens"), 0),
            llm_latency_ms=Coalesce(Sum("llm_latency_ms"), 0.0),
            llm_failures=Coalesce(Sum(JSONArrayLength("llm_failures")), 0),
        )
        .order_by("day")
    )
    return [dict(row) for row in rows]
