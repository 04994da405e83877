"""Reads of the escalation queue (pages, API, services and tasks call these; they never write)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import django_filters
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from drf_spectacular.drainage import set_override

from audit import roles
from audit.selectors.facade import Workspace, evidence_ordered, workspace_for_user, workspace_member
from audit.services.events import AnyUser
from audit.web.filters import CaseInsensitiveChoices, UtcDateTimeFilter

from . import policy
from .models import (
    OPEN_CASE_STATUSES,
    BusinessCalendar,
    CaseStatus,
    CurationItem,
    NotificationTarget,
    ReviewCase,
    ReviewEvent,
    SlaState,
)


def calendar_for_workspace(workspace: Workspace) -> policy.Calendar:
    """Return the workspace's business calendar as a policy value (the default one when none is set)."""
    row = BusinessCalendar.objects.filter(workspace=workspace).prefetch_related("holidays").first()
    if row is None:
        return policy.Calendar()
    return policy.Calendar(
        tz=row.timezone,
        working_days=frozenset(row.working_days),
        start=row.day_start,
        end=row.day_end,
        holidays=frozenset(h.date for h in row.holidays.all()),
    )


def notification_targets(workspace: Workspace, *, tier: int | None = None) -> list[tuple[str, str]]:
    """Return the (channel, address) pairs alerts go to: the workspace's targets and the deployment's.

    ``tier``: an alert about a case at that tier also goes to that tier's own targets (its on-call
    address or group); without it only the targets of every tier are told.
    """
    pairs = list(
        NotificationTarget.objects.filter(workspace=workspace, active=True)
        .filter(Q(tier__isnull=True) | Q(tier=tier) if tier is not None else Q(tier__isnull=True))
        .order_by("channel", "address")
        .values_list("channel", "address")
    )
    defaults = [
        (NotificationTarget.Channel.EMAIL, settings.THEORIA.get("ONCALL_EMAIL", "")),
        (NotificationTarget.Channel.WEBHOOK, settings.THEORIA.get("SLACK_WEBHOOK_URL", "")),
    ]
    for channel, address in defaults:
        if address and (channel, address) not in pairs:
            pairs.append((str(channel), address))
    return [(str(c), a) for c, a in pairs]


ORDERINGS = {
    # time to breach first (the most overdue on top; stopped clocks last), then risk
    "deadline": (F("due_at").asc(nulls_last=True), F("risk_score").desc(), "opened_at", "id"),
    "risk": (F("risk_score").desc(), F("due_at").asc(nulls_last=True), "opened_at", "id"),
}


class CaseFilter(CaseInsensitiveChoices):
    """The queue's filters, shared by the API list and the queue page (bad values are form errors)."""

    tier = django_filters.TypedChoiceFilter(choices=[(t, str(t)) for t in policy.TIERS], coerce=int)
    status = django_filters.MultipleChoiceFilter(choices=CaseStatus.choices)
    sla_state = django_filters.MultipleChoiceFilter(choices=SlaState.choices)
    domain = django_filters.CharFilter(field_name="domain", lookup_expr="iexact")
    owner = django_filters.CharFilter(
        method="filter_owner", help_text="A username, 'me', or 'none' (unassigned)."
    )
    set_override(owner, "field", {"type": "string"})
    open = django_filters.ChoiceFilter(
        choices=[("true", "Open"), ("false", "Resolved"), ("any", "Any")],
        method="filter_open",
        help_text="true: open cases only; false: resolved only; any: both.",
    )
    decision = django_filters.ChoiceFilter(choices=ReviewCase.Decision.choices)
    opened_from = django_filters.DateFilter(field_name="opened_at", lookup_expr="date__gte")
    opened_to = django_filters.DateFilter(field_name="opened_at", lookup_expr="date__lte")
    opened_after = UtcDateTimeFilter(field_name="opened_at", lookup_expr="gt")
    opened_before = UtcDateTimeFilter(field_name="opened_at", lookup_expr="lte")
    resolved_from = django_filters.DateFilter(field_name="resolved_at", lookup_expr="date__gte")
    resolved_to = django_filters.DateFilter(field_name="resolved_at", lookup_expr="date__lte")
    breached_from = django_filters.DateFilter(
        method="filter_breached_from", help_text="Breached on or after this UTC day."
    )
    breached_to = django_filters.DateFilter(
        method="filter_breached_to", help_text="Breached on or before this UTC day."
    )
    set_override(breached_from, "field", {"type": "string", "format": "date"})  # method filters: told
    set_override(breached_to, "field", {"type": "string", "format": "date"})
    # a clock started (the case opened, escalated or reopened) at a tier between two UTC days: the
    # cases the dashboard's SLA attainment counts (``reporting.clock_starts``); applied together
    entered_tier = django_filters.TypedChoiceFilter(
        choices=[(t, str(t)) for t in policy.TIERS],
        coerce=int,
        method="filter_applied_together",
        help_text="A clock started at this tier (with entered_from / entered_to).",
    )
    # a method filter has no model field to read its type from: the schema is told (one definition)
    set_override(entered_tier, "field", {"type": "integer", "enum": list(policy.TIERS)})
    entered_from = django_filters.DateFilter(
        method="filter_applied_together", help_text="A clock started on or after this UTC day."
    )
    entered_to = django_filters.DateFilter(
        method="filter_applied_together", help_text="A clock started on or before this UTC day."
    )
    set_override(entered_from, "field", {"type": "string", "format": "date"})  # a method filter: told
    set_override(entered_to, "field", {"type": "string", "format": "date"})
    entered_met = django_filters.ChoiceFilter(
        choices=[("true", "Met"), ("false", "Missed")],
        method="filter_applied_together",
        help_text="With entered_*: true, the cases whose clocks started there all met their SLA; "
        "false, those with one that breached (the dashboard's met and missed counts).",
    )
    order = django_filters.ChoiceFilter(
        choices=[("deadline", "Time to breach"), ("risk", "Risk")],
        method="filter_order",
        help_text="deadline: time to breach first, risk second; risk: the other way round.",
    )

    class Meta:
        model = ReviewCase
        fields = ["tier", "status", "sla_state", "domain", "owner", "open"]

    def filter_owner(self, queryset: QuerySet[ReviewCase], name: str, value: Any) -> QuerySet[ReviewCase]:
        if value == "none":
            return queryset.filter(owner__isnull=True)
        if value == "me":
            user = getattr(self.request, "user", None)
            return (
                queryset.filter(owner=user) if getattr(user, "is_authenticated", False) else queryset.none()
            )
        return queryset.filter(owner__username=value)

    def filter_open(self, queryset: QuerySet[ReviewCase], name: str, value: Any) -> QuerySet[ReviewCase]:
        if value in (None, "", "any"):
            return queryset
        return (
            queryset.filter(status__in=ReviewCase.OPEN_STATUSES)
            if value == "true"
            else queryset.exclude(status__in=ReviewCase.OPEN_STATUSES)
        )

    def _breached(self, queryset: QuerySet[ReviewCase], **at: Any) -> QuerySet[ReviewCase]:
        events = ReviewEvent.objects.filter(kind=ReviewEvent.Kind.BREACHED, **at)
        return queryset.filter(pk__in=events.values("case_id"))

    def filter_breached_from(
        self, queryset: QuerySet[ReviewCase], name: str, value: Any
    ) -> QuerySet[ReviewCase]:
        return self._breached(queryset, at__date__gte=value) if value else queryset

    def filter_breached_to(
        self, queryset: QuerySet[ReviewCase], name: str, value: Any
    ) -> QuerySet[ReviewCase]:
        return self._breached(queryset, at__date__lte=value) if value else queryset

    def filter_order(self, queryset: QuerySet[ReviewCase], name: str, value: Any) -> QuerySet[ReviewCase]:
        return queryset.order_by(*ORDERINGS[value]) if value else queryset

    def filter_applied_together(
        self, queryset: QuerySet[ReviewCase], name: str, value: Any
    ) -> QuerySet[ReviewCase]:
        return queryset  # ``filter_queryset`` applies the entered_* filters as one condition

    def filter_queryset(self, queryset: QuerySet[ReviewCase]) -> QuerySet[ReviewCase]:
        queryset = super().filter_queryset(queryset)
        data = self.form.cleaned_data
        tier, since, until = data.get("entered_tier"), data.get("entered_from"), data.get("entered_to")
        met = data.get("entered_met")
        if tier in (None, "") and since is None and until is None and not met:
            return queryset
        starts = clock_starts(tier=None if tier in (None, "") else tier, since=since, until=until)
        queryset = queryset.filter(Exists(starts.filter(case=OuterRef("pk"))))
        if not met:
            return queryset
        missed = Exists(with_breach(starts).filter(Q(late=True), case=OuterRef("pk")))
        return queryset.filter(missed) if met == "false" else queryset.exclude(missed)


CLOCK_START_KINDS = (ReviewEvent.Kind.OPENED, ReviewEvent.Kind.ESCALATED, ReviewEvent.Kind.REOPENED)


def clock_starts(
    *,
    tier: int | None = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
) -> QuerySet[ReviewEvent]:
    """The events that started an SLA clock (a case opened, escalated or reopened), at ``tier``,
    on UTC days ``since``..``until`` or in [``start``, ``end``). The dashboard's SLA attainment and
    the queue's ``entered_*`` filters both count these, so the figure and its list agree."""
    qs = ReviewEvent.objects.filter(kind__in=CLOCK_START_KINDS)
    if tier is not None:
        qs = qs.filter(tier=tier)
    if since is not None:
        qs = qs.filter(at__date__gte=since)
    if until is not None:
        qs = qs.filter(at__date__lte=until)
    if start is not None:
        qs = qs.filter(at__gte=start)
    if end is not None:
        qs = qs.filter(at__lt=end)
    return qs


def with_breach(starts: QuerySet[ReviewEvent]) -> QuerySet[ReviewEvent]:
    """``starts`` (clock starts) annotated ``late``: the case breached at that tier after it.

    The dashboard's SLA attainment counts a case missed when one of its clock starts is late, and
    the queue's ``entered_met`` filter lists the same cases."""
    breached = ReviewEvent.objects.filter(
        case=OuterRef("case"), tier=OuterRef("tier"), kind=ReviewEvent.Kind.BREACHED, at__gte=OuterRef("at")
    )
    return starts.annotate(late=Exists(breached))


def case_queryset(*, user: AnyUser) -> QuerySet[ReviewCase]:
    """Cases the user may read, in risk order, with what a queue row shows (no N+1)."""
    if not roles.can_read(user):
        return ReviewCase.objects.none()
    qs = ReviewCase.objects.select_related("claim", "claim__answer", "owner", "workspace").filter(
        workspace=workspace_for_user(user)  # admins included: a superuser crosses only by an explicit switch
    )
    # the claims that joined the case (its answer's other claims when grouped, re-audits' claims)
    joined = (
        ReviewCase.joined_claims.through.objects.filter(reviewcase_id=OuterRef("pk"))
        .values("reviewcase_id")
        .annotate(n=Count("*"))
        .values("n")  # type: ignore[misc]  # the plugin cannot see an annotation of the through table
    )
    qs = qs.annotate(joined_count=Coalesce(Subquery(joined), 0))
    return qs.order_by(*ORDERINGS["risk"])


def case_list(
    *, user: AnyUser, filters: dict[str, Any] | None = None, request: HttpRequest | None = None
) -> QuerySet[ReviewCase]:
    """The queue: readable cases in risk order (``order=deadline``: time to breach first), filtered.

    Raises ``django.core.exceptions.ValidationError`` naming the field of a bad filter value.
    """
    from django.core.exceptions import ValidationError

    qs = case_queryset(user=user)
    if not filters:
        return qs
    filterset = CaseFilter(filters, queryset=qs, request=request)
    if not filterset.is_valid():
        raise ValidationError({field: [str(e) for e in errs] for field, errs in filterset.errors.items()})
    return filterset.qs


def case_get(*, user: AnyUser, ticket: str) -> ReviewCase | None:
    """One case with its events and the claim's evidence, or None when missing or not readable."""
    return (
        case_queryset(user=user)
        .prefetch_related(
            Prefetch("events", queryset=ReviewEvent.objects.select_related("actor").order_by("at", "id")),
            Prefetch("claim__evidence", queryset=evidence_ordered()),
            "curation_items",
        )
        .filter(ticket=ticket)
        .first()
    )


def case_owner_candidate(*, case: ReviewCase, username: str) -> User:
    """The active user ``username`` of the case's workspace, or a ValidationError on ``owner``.

    The message is the same for a missing user and a user of another workspace.
    """
    from django.core.exceptions import ValidationError

    user = workspace_member(case.workspace, (username or "").strip())
    if user is None:
        raise ValidationError({"owner": f"no active user {username!r} in this workspace"})
    return user


def cases_for_claims(claim_ids: Iterable[int]) -> dict[int, list[ReviewCase]]:
    """Return the cases (any status) of the given claims, by claim id, oldest first, owner joined (one query).

    The one read of the escalations of claims: the Claim Card's log (``claim_escalations``) and
    the claim page (``reporting.cases_by_claim``) are both built from it.
    """
    result: dict[int, list[ReviewCase]] = {}
    pks = list(claim_ids)
    if not pks:
        return result
    wanted = set(pks)
    # a claim of a later audit of the same answer belongs to the case it joined (one row per joined
    # claim: the same query reads both)
    rows = (
        ReviewCase.objects.filter(Q(claim_id__in=pks) | Q(joined_claims__in=pks))
        .annotate(joined_id=F("joined_claims"))
        .select_related("owner")
        .order_by("opened_at", "id")
    )
    for case in rows:
        for claim_id in (case.claim_id, case.joined_id):
            if claim_id in wanted and case not in result.setdefault(claim_id, []):
                result[claim_id].append(case)
    return result


def claim_escalations(claim_pks: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """Return {claim pk: [escalation refs]} for the Claim Card's log, oldest case first (one query).

    Registered as audit's ``claim_escalations`` hook, which the claim API and pages ask.
    """
    return {pk: [escalation_ref(case) for case in cases] for pk, cases in cases_for_claims(claim_pks).items()}


def escalation_ref(case: ReviewCase) -> dict[str, Any]:
    """One entry of a claim's escalation log: its review case."""
    return {
        "type": "review",
        "ticket": case.ticket,
        "tier": case.tier,
        "status": case.status,
        "due_at": case.due_at,
        "reasons": case.reasons or [case.trigger],
        "at": case.opened_at,
    }


def escalation_state_q(state: str) -> Q:
    """Return the claim filter of an escalation state: open, resolved, any (ever escalated), none.

    Registered as audit's ``claim_escalation_filter`` hook (the claim lists' ``escalation`` filter).
    """
    if state == "open":
        return Q(review_cases__status__in=OPEN_CASE_STATUSES) | Q(
            joined_review_cases__status__in=OPEN_CASE_STATUSES
        )
    if state == "resolved":
        return Q(review_cases__status=CaseStatus.RESOLVED) & ~Q(review_cases__status__in=OPEN_CASE_STATUSES)
    if state == "any":
        return Q(review_cases__isnull=False) | Q(joined_review_cases__isnull=False)
    return Q(review_cases__isnull=True) & Q(joined_review_cases__isnull=True)


def records_held_open(*, workspace: Workspace) -> dict[str, Any]:
    """What retention keeps in ``workspace`` while cases are open: the answers of their claims and
    the cases' own audit events. Registered as audit's ``records_held`` hook."""
    open_cases = ReviewCase.objects.filter(workspace=workspace, status__in=OPEN_CASE_STATUSES)
    return {
        "answer_ids": set(open_cases.values_list("claim__answer_id", flat=True)),
        "events": {("escalation.reviewcase", str(pk)) for pk in open_cases.values_list("id", flat=True)},
    }


def curation_list(*, user: AnyUser, status: str | None = None) -> QuerySet[CurationItem]:
    """Knowledge-base correction items the user may read, newest first."""
    if not roles.can_read(user):
        return CurationItem.objects.none()
    qs = CurationItem.objects.select_related("case", "claim", "document", "created_by").filter(
        workspace=workspace_for_user(user)
    )
    if status:
        qs = qs.filter(status=status)
    return qs


def owner_choices(*, workspace_id: int, tier: int = policy.FIRST_TIER) -> list[tuple[str, list[Any]]]:
    """Who may own a case of ``tier``: active users of the workspace holding its tier's role, the
    roles above, then admins (who may act at every tier).

    Returns [(role name, [users by username])] with empty roles left out; a user is listed once,
    under the lowest role that lets them own it (one query).
    """
    from django.contrib.auth import get_user_model

    eligible = [roles.TIER_ROLES[t] for t in policy.TIERS if t >= tier]
    users = (
        get_user_model()
        .objects.filter(is_active=True, theoria_profile__workspace_id=workspace_id)
        .filter(Q(groups__name__in=[*eligible, roles.ADMIN]) | Q(is_superuser=True))
        .annotate(role=F("groups__name"))
        .order_by("username")
    )
    order = [*eligible, roles.ADMIN]
    by_role: dict[str, list[Any]] = {role: [] for role in order}
    for user in users:  # a superuser without the Admin group is listed as one
        by_role[user.role if user.role in by_role else roles.ADMIN].append(user)
    out, seen = [], set()
    for role in order:
        fresh = []
        for u in by_role[role]:
            if u.pk not in seen:
                seen.add(u.pk)
                fresh.append(u)
        if fresh:
            out.append((role, fresh))
    return out


def case_owner_choices(case: ReviewCase) -> list[tuple[str, list[Any]]]:
    """Who may own a case: ``owner_choices`` for its workspace and tier."""
    return owner_choices(workspace_id=case.workspace_id, tier=case.tier)
