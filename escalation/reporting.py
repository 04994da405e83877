"""Aggregate reads of the escalation queue for the dashboard and the claim cards.

Each function is a fixed number of aggregate queries (GROUP BY tier, day or state), so the
dashboard costs the same with ten cases or a hundred thousand.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from audit import constants
from audit.services.events import AnyUser

from . import display, selectors
from .models import CurationItem, ReviewCase, ReviewEvent
from .policy import TIER_NAMES, TIERS

if TYPE_CHECKING:
    from audit.selectors.facade import Workspace


def case_dict(case: ReviewCase) -> dict[str, Any]:
    """Return the claim-card view of a case (owner must be selected with the case)."""
    return {
        "ticket": case.ticket,
        "tier": case.tier,
        "tier_name": TIER_NAMES.get(case.tier, f"Level {case.tier}"),
        "status": case.status,
        "status_label": case.get_status_display(),
        "sla_state": case.sla_state,
        "sla_label": case.get_sla_state_display(),
        "trigger": case.trigger,
        "risk_score": case.risk_score,
        "owner": case.owner.get_username() if case.owner is not None else None,
        "opened_at": case.opened_at.isoformat() if case.opened_at else None,
        "due_at": case.due_at.isoformat() if case.due_at else None,
        "resolved_at": case.resolved_at.isoformat() if case.resolved_at else None,
        "decision": case.decision,
        "decision_label": case.get_decision_display() if case.decision else "",
        "rationale": case.rationale,
    }


def cases_by_claim(*, claim_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """Return {claim id: [case dict, ...]} for the given claims, newest case first (one query)."""
    return {
        claim_id: [case_dict(c) for c in reversed(cases)]
        for claim_id, cases in selectors.cases_for_claims(claim_ids).items()
    }


def events_of_claim(*, claim_id: int) -> list[ReviewEvent]:
    """Return the review events of every case of a claim, in order, with case and actor joined."""
    return list(
        ReviewEvent.objects.filter(case__claim_id=claim_id)
        .select_related("case", "actor")
        .order_by("at", "id")
    )


def _in_domain(domain: str, path: str = "") -> Q:
    """The cases of one domain (``path``: the lookup to the case); no condition without one."""
    return Q(**{f"{path}domain__iexact": domain}) if domain else Q()


def _aging(workspace: Workspace, now: dt.datetime, domain: str = "") -> dict[str, Any]:
    """Open cases per tier and age bucket (one query with one conditional count per bucket)."""
    lower = 0
    aggregates = {}
    labels = []
    for i, (upper, label) in enumerate(constants.QUEUE_AGING_BUCKETS):
        cond = Q(opened_at__lte=now - dt.timedelta(seconds=lower))
        if upper is not None:
            cond &= Q(opened_at__gt=now - dt.timedelta(seconds=upper))
        aggregates[f"b{i}"] = Count("id", filter=cond)
        labels.append(label)
        lower = upper or lower
    rows: QuerySet[ReviewCase, Any] = (  # its columns are named at run time
        ReviewCase.objects.filter(
            _in_domain(domain), workspace=workspace, status__in=ReviewCase.OPEN_STATUSES
        )
        .values("tier")
        .annotate(**aggregates)
        .order_by()
    )
    tiers = {tier: [0] * len(labels) for tier in TIERS}
    for row in rows:
        tiers[row["tier"]] = [row[f"b{i}"] for i in range(len(labels))]
    return {"buckets": labels, "tiers": tiers}


def _attainment(
    workspace: Workspace, start: dt.datetime, end: dt.datetime, domain: str = "", by: str = "tier"
) -> dict[Any, dict[str, int]]:
    """Per tier: cases whose clock started at that tier in the period (opened, escalated or
    reopened: ``selectors.clock_starts``), and how many of those breached at that tier.

    "met" is started minus breached. The queue's ``entered_tier`` / ``entered_from`` /
    ``entered_to`` filters list the same cases. One query.
    """
    starts = selectors.clock_starts(start=start, end=end).filter(
        _in_domain(domain, "case__"), case__workspace=workspace
    )
    rows = (
        selectors.with_breach(starts)
        .values("case__domain" if by == "domain" else "tier")
        .annotate(
            total=Count("case", distinct=True),
            breached=Count("case", distinct=True, filter=Q(late=True)),
        )
        .order_by()
    )
    out: dict[Any, dict[str, int]] = (
        {} if by == "domain" else {tier: {"met": 0, "total": 0, "breached": 0} for tier in TIERS}
    )
    for row in rows:
        out[row["case__domain"] if by == "domain" else row["tier"]] = {
            "met": row["total"] - row["breached"],
            "total": row["total"],
            "breached": row["breached"],
        }
    return out


def _attainment_by_day(
    workspace: Workspace, start: dt.datetime, end: dt.datetime, domain: str = ""
) -> dict[str, Any]:
    """Per day: cases whose clock started (a case entering a tier) and how many of those breached
    (one query).

    A case is counted on each day a clock of it started (once a day, as the queue's
    ``entered_from`` / ``entered_to`` list it); ``share`` is met / started (None on a day without one).
    """
    rows = {
        row["day"]: row
        for row in selectors.with_breach(
            selectors.clock_starts(start=start, end=end).filter(
                _in_domain(domain, "case__"), case__workspace=workspace
            )
        )
        .annotate(day=TruncDate("at"))
        .values("day")
        .annotate(
            started=Count("case", distinct=True), breached=Count("case", distinct=True, filter=Q(late=True))
        )
        .order_by()
    }
    days = [start.date() + dt.timedelta(days=i) for i in range((end - start).days)]
    started = [rows[d]["started"] if d in rows else 0 for d in days]
    late = [rows[d]["breached"] if d in rows else 0 for d in days]
    return {
        "days": [d.isoformat() for d in days],
        "started": started,
        "breached": late,
        "share": [round((n - b) / n, 4) if n else None for n, b in zip(started, late)],
    }


def _volume(workspace: Workspace, start: dt.datetime, end: dt.datetime, domain: str = "") -> dict[str, Any]:
    """Cases opened and resolved per day of the period (two queries)."""
    opened = dict(
        ReviewCase.objects.filter(
            _in_domain(domain), workspace=workspace, opened_at__gte=start, opened_at__lt=end
        )
        .annotate(day=TruncDate("opened_at"))
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("day", "n")
    )
    resolved = dict(
        ReviewCase.objects.filter(
            _in_domain(domain), workspace=workspace, resolved_at__gte=start, resolved_at__lt=end
        )
        .annotate(day=TruncDate("resolved_at"))
        .values("day")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("day", "n")
    )
    days = [start.date() + dt.timedelta(days=i) for i in range((end - start).days)]
    return {
        "days": [d.isoformat() for d in days],
        "opened": [opened.get(d, 0) for d in days],
        "resolved": [resolved.get(d, 0) for d in days],
    }


def dashboard_summary(
    *,
    workspace: Workspace,
    start: dt.datetime,
    end: dt.datetime,
    now: dt.datetime | None = None,
    domain: str = "",
) -> dict[str, Any]:
    """Return the queue figures of the dashboard for [start, end): aging, attainment, volume, counts,
    of one domain's cases when ``domain`` is given; ``domains``: per case domain, the open cases and
    the SLA attainment of the period (the dashboard's domain table)."""
    now = now or timezone.now()
    cases = ReviewCase.objects.filter(_in_domain(domain), workspace=workspace)
    open_counts = cases.filter(status__in=ReviewCase.OPEN_STATUSES).aggregate(
        open=Count("id"),
        at_risk=Count("id", filter=Q(sla_state=ReviewCase.SlaState.AT_RISK)),
        breached=Count("id", filter=Q(sla_state=ReviewCase.SlaState.BREACHED)),
        paused=Count("id", filter=Q(status=ReviewCase.Status.PAUSED)),
        unowned=Count("id", filter=Q(owner__isnull=True)),
    )
    period = cases.aggregate(
        opened=Count("id", filter=Q(opened_at__gte=start, opened_at__lt=end)),
        resolved=Count("id", filter=Q(resolved_at__gte=start, resolved_at__lt=end)),
        suppressed=Count(
            "id", filter=Q(resolved_at__gte=start, resolved_at__lt=end, decision=ReviewCase.Decision.SUPPRESS)
        ),
        relabelled=Count(
            "id", filter=Q(resolved_at__gte=start, resolved_at__lt=end, decision__startswith="relabel_")
        ),
    )
    # cases that breached in the period (a case breached at two tiers counts once, as its list shows it)
    breaches = (
        ReviewEvent.objects.filter(
            _in_domain(domain, "case__"),
            case__workspace=workspace,
            at__gte=start,
            at__lt=end,
            kind=ReviewEvent.Kind.BREACHED,
        )
        .values("case")
        .distinct()
        .count()
    )
    corrections = CurationItem.objects.filter(
        _in_domain(domain, "claim__answer__") if domain else Q(),
        workspace=workspace,
        created_at__gte=start,
        created_at__lt=end,
    ).count()
    open_by_domain = dict(
        cases.filter(status__in=ReviewCase.OPEN_STATUSES)
        .values("domain")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("domain", "n")
    )
    sla_by_domain = _attainment(workspace, start, end, domain, by="domain")
    return {
        "aging": _aging(workspace, now, domain),
        "attainment": _attainment(workspace, start, end, domain),
        "attainment_by_day": _attainment_by_day(workspace, start, end, domain),
        "volume": _volume(workspace, start, end, domain),
        "open": open_counts,
        "period": {**period, "breaches": breaches, "kb_corrections": corrections},
        "domains": {
            d: {
                "open": open_by_domain.get(d, 0),
                **sla_by_domain.get(d, {"met": 0, "total": 0, "breached": 0}),
            }
            for d in set(open_by_domain) | set(sla_by_domain)
        },
    }


def my_work(
    *,
    user: AnyUser,
    workspace: Workspace,
    now: dt.datetime | None = None,
    deadlines: int = constants.UI_HOME_DEADLINES,
) -> dict[str, Any]:
    """What needs the user first, in their workspace: their open cases (and how many of those are at
    risk or breached), the workspace's at-risk, breached and unassigned open cases, and the next
    ``deadlines`` running clocks among their cases and the unassigned ones (two queries)."""
    now = now or timezone.now()
    mine = Q(owner=user)
    counts = ReviewCase.objects.filter(workspace=workspace, status__in=ReviewCase.OPEN_STATUSES).aggregate(
        mine=Count("id", filter=mine),
        mine_at_risk=Count("id", filter=mine & Q(sla_state=ReviewCase.SlaState.AT_RISK)),
        mine_breached=Count("id", filter=mine & Q(sla_state=ReviewCase.SlaState.BREACHED)),
        at_risk=Count("id", filter=Q(sla_state=ReviewCase.SlaState.AT_RISK)),
        breached=Count("id", filter=Q(sla_state=ReviewCase.SlaState.BREACHED)),
        unassigned=Count("id", filter=Q(owner__isnull=True)),
    )
    upcoming = list(
        ReviewCase.objects.filter(
            workspace=workspace, status__in=ReviewCase.OPEN_STATUSES, due_at__isnull=False
        )
        .filter(mine | Q(owner__isnull=True))
        .select_related("claim", "owner")
        .order_by("due_at", "-risk_score", "id")[:deadlines]
    )
    calendar = selectors.calendar_for_workspace(workspace)
    for case in upcoming:  # the time left as the case page counts it (business time at L2/L3)
        setattr(case, "clock", display.countdown(case, calendar, now))  # noqa: B010 — a page attribute
    return {**counts, "deadlines": upcoming, "now": now}


def correction_backlog(*, workspace: Workspace, moments: list[dt.datetime]) -> list[int]:
    """How many knowledge-base corrections of ``workspace`` were open at each of ``moments`` (one
    query). Registered as audit's ``correction_backlog`` hook (the dashboard's backlog metric)."""

    def open_at(t: dt.datetime) -> Q:
        return Q(created_at__lte=t) & (Q(closed_at__isnull=True) | Q(closed_at__gt=t))

    counts = CurationItem.objects.filter(workspace=workspace).aggregate(
        **{f"m{i}": Count("id", filter=open_at(t)) for i, t in enumerate(moments)}
    )
    return [counts[f"m{i}"] for i in range(len(moments))]
