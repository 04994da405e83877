"""Reads about LLM usage: tokens a workspace spent, for the daily budget and the dashboard; the
endpoint's state as the workspace settings show it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, time, timezone
from typing import Any

from django.conf import settings
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Count, F, Func, IntegerField, QuerySet, Sum
from django.db.models.functions import Coalesce, TruncDate
from django.db.models.sql.compiler import SQLCompiler

from audit.models import AuditEvent, LLMWeightVersion, VerificationRun, Workspace


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


def normalised_endpoint(base_url: str) -> str:
    """An endpoint's key: its base URL without a trailing slash."""
    return (base_url or "").strip().rstrip("/")


def llm_weight_versions(
    *, workspace: Workspace, endpoint: str | None = None, model: str | None = None
) -> QuerySet[LLMWeightVersion]:
    """The workspace's LLM weight fits, newest first; of one endpoint and model where given."""
    rows = LLMWeightVersion.objects.filter(workspace=workspace)
    if endpoint is not None:
        rows = rows.filter(endpoint=normalised_endpoint(endpoint))
    if model is not None:
        rows = rows.filter(model=model)
    return rows.order_by("-number")


def llm_weight_in_force(*, workspace: Workspace, endpoint: str, model: str) -> LLMWeightVersion | None:
    """The active fit of this endpoint and model, or None (unfitted)."""
    return (
        llm_weight_versions(workspace=workspace, endpoint=endpoint, model=model)
        .filter(status=LLMWeightVersion.Status.ACTIVE)
        .first()
    )


def llm_weighing(*, workspace: Workspace, endpoint: str, model: str) -> dict[str, Any]:
    """The LLM judge's weight and margin in force for this endpoint and model, and where they came from."""
    from audit.constants import LLM_JUDGE_WEIGHT, LLM_OFFLINE_CONFIDENT_MARGIN

    version = llm_weight_in_force(workspace=workspace, endpoint=endpoint, model=model)
    if version is None:
        return {
            "weight": LLM_JUDGE_WEIGHT,
            "margin": LLM_OFFLINE_CONFIDENT_MARGIN,
            "source": "unfitted",
            "version": None,
            "note": "no fit for this endpoint and model: the LLM moves no verdict; its disagreements go "
            "to review (python manage.py evaluate --judge llm --fit)",
        }
    return {
        "weight": version.weight,
        "margin": version.margin,
        "source": f"fit v{version.number}",
        "version": version.number,
        "fitted_at": version.fitted_at.isoformat(timespec="seconds"),
        "fitted_by": version.fitted_by,
        "claims": version.n_claims,
        "held_out": (version.metrics or {}).get("held_out", {}),
    }


def llm_status(*, workspace: Workspace) -> dict[str, Any]:
    """The LLM endpoint as the workspace settings show it: which one, its circuit breaker in this
    process (``state`` closed / open / half_open, what opened it, the thresholds; "not used yet" before
    this process's first call to it), and the judge's weight in force and where it came from."""
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
            "judge_weight": None,
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
        "judge_weight": llm_weighing(workspace=workspace, endpoint=base_url, model=config.model),
    }


def start_of_day(now: datetime) -> datetime:
    """Midnight UTC of ``now``'s day: the budget is per UTC day."""
    return datetime.combine(now.astimezone(timezone.utc).date(), time.min, tzinfo=timezone.utc)


class JSONArrayLength(Func):
    """Length of a JSON array column (0 for anything else): SQLite's ``json_array_length``,
    PostgreSQL's ``jsonb_array_length`` guarded by ``jsonb_typeof``."""

    function = "JSON_ARRAY_LENGTH"
    output_field = IntegerField()

    def as_postgresql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, Sequence[Any]]:
        template = (
            "CASE WHEN jsonb_typeof(%(expressions)s) = 'array' "
            "THEN jsonb_array_length(%(expressions)s) ELSE 0 END"
        )
        return self.as_sql(compiler, connection, template=template, **extra)


def llm_usage_by_day(
    *, workspace: Workspace, since: datetime, until: datetime, domain: str = ""
) -> list[dict[str, Any]]:
    """Per UTC day in [since, until): runs, LLM calls, tokens, LLM time and failed calls (dashboard).

    Days without runs are left out; ``llm_failures`` counts the entries of the runs'
    ``llm_failures`` lists (one per failed call); ``domain``: the runs of that answer domain only.
    One GROUP BY query: its cost grows with the days, not the runs.
    """
    rows = (
        VerificationRun.objects.filter(
            answer__workspace=workspace, started_at__gte=since, started_at__lt=until
        )
        .filter(**({"answer__domain__iexact": domain} if domain else {}))
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
