"""The dashboard's figures, cached per workspace and date range until the data behind them changes.

The cache key carries the workspace's data version: the newest audit event, answer and
verification run of the workspace (three index-only ``MAX(id)`` reads). Every service write
records an audit event in the same transaction (``audit.services.events.event_record``): a case
acknowledged, assigned, escalated or resolved, a claim relabelled, a calibration run or rolled
back; a new audit adds an answer and a run. So the next dashboard after any of them computes
afresh, and a stale figure is never served. Entries also expire after
``constants.DASHBOARD_CACHE_SECONDS``, which bounds the figures that move with the clock alone
(the queue's ages and at-risk counts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.db.models import Max

from audit import constants
from audit.models import Answer, AuditEvent, VerificationRun


def dashboard_version(workspace) -> str:
    """The workspace's data version: it changes whenever a service writes to the workspace."""
    parts = [
        AuditEvent.objects.filter(workspace=workspace).aggregate(n=Max("id"))["n"],
        Answer.objects.filter(workspace=workspace).aggregate(n=Max("id"))["n"],
        VerificationRun.objects.filter(answer__workspace=workspace).aggregate(n=Max("id"))["n"],
    ]
    return ".".join(str(p or 0) for p in parts)


def dashboard_key(workspace, period) -> str:
    """The cache key of the dashboard's figures for ``workspace`` over ``period`` at its data version now."""
    scope = getattr(period, "domain", "")
    return f"dashboard:{workspace.pk}:{period.start}:{period.end}:{scope}:{dashboard_version(workspace)}"


def dashboard_forget(workspace, period) -> None:
    """Drop the cached figures of ``period``, as a change to the workspace would (``bench_pages``)."""
    cache.delete(dashboard_key(workspace, period))


def dashboard_cached(workspace, period, build: Callable[[], Any]) -> Any:
    """``build()``'s result for ``workspace`` over ``period``, from the cache while nothing changed."""
    key = dashboard_key(workspace, period)
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, constants.DASHBOARD_CACHE_SECONDS)
    return value
