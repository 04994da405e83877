"""Reads of the escalation queue (pages, API, services and tasks call these; they never write)."""

from __future__ import annotations

import django_filters
from django.conf import settings
from django.db.models import F, Prefetch, Q, QuerySet

from audit import roles
from audit.filters import CaseInsensitiveChoices
from audit.selectors.facade import Workspace, evidence_ordered, workspace_for_user, workspace_member

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


def notification_targets(workspace: Workspace) -> list[tuple[str, str]]:
    """Return the (channel, address) pairs alerts go to: the workspace's targets and the deployment's."""
    pairs = list(
        NotificationTarget.objects.filter(workspace=workspace, active=True)
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


class CaseFilter(CaseInsensitiveChoices):
    """The queue's filters, shared by the API list and the queue page (bad values are form errors)."""

    tier = django_filters.TypedChoiceFilter(choices=[(t, str(t)) for t in policy.TIERS], coerce=int)
    status = django_filters.MultipleChoiceFilter(choices=CaseStatus.choices)
    sla_state = django_filters.MultipleChoiceFilter(choices=SlaState.choices)
    domain = django_filters.CharFilter(field_name="domain", lookup_expr="iexact")
    owner = django_filters.CharFilter(
        method="filter_owner", help_text="A username, 'me', or 'none' (unassigned)."
    )
    open = django_filters.BooleanFilter(
        method="filter_open", help_text="true: open cases only; false: resolved only."
    )

    class Meta:
        model = ReviewCase
        fields = ["tier", "status", "sla_state", "domain", "owner", "open"]

    def filter_owner(self, queryset, name, value):
        if value == "none":
            return queryset.filter(owner__isnull=True)
        if value == "me":
            user = getattr(self.request, "user", None)
            return (
                queryset.filter(owner=user) if getattr(user, "is_authenticated", False) else queryset.none()
            )
        return queryset.filter(owner__username=value)

    def filter_open(self, queryset, name, value):
        if value is None:
            return queryset
        return (
            queryset.filter(status__in=ReviewCase.OPEN_STATUSES)
            if value
            else queryset.exclude(status__in=ReviewCase.OPEN_STATUSES)
        )


def case_queryset(*, user) -> QuerySet[ReviewCase]:
    """Cases the user may read, in risk order, with what a queue row shows (no N+1)."""
    if not roles.can_read(user):
        return ReviewCase.objects.none()
    qs = ReviewCase.objects.select_related("claim", "claim__answer", "owner", "workspace").filter(
        workspace=workspace_for_user(user)  # admins included: a superuser crosses only by an explicit switch
    )
    return qs.order_by(F("risk_score").desc(), F("due_at").asc(nulls_last=True), "opened_at", "id")


def case_list(*, user, filters: dict | None = None, request=None) -> QuerySet[ReviewCase]:
    """The queue: readable cases in risk order, filtered (tier, status, sla_state, domain, owner, open).

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


def case_get(*, user, ticket: str) -> ReviewCase | None:
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


def case_owner_candidate(*, case: ReviewCase, username: str):
    """The active user ``username`` of the case's workspace, or a ValidationError on ``owner``.

    The message is the same for a missing user and a user of another workspace.
    """
    from django.core.exceptions import ValidationError

    user = workspace_member(case.workspace, (username or "").strip())
    if user is None:
        raise ValidationError({"owner": f"no active user {username!r} in this workspace"})
    return user


def cases_for_claims(claim_ids) -> dict[int, list[ReviewCase]]:
    """Return the cases (any status) of the given claims, by claim id, oldest first, owner joined (one query).

    The one read of the escalations of claims: the Claim Card's log (``claim_escalations``) and
    the claim page (``reporting.cases_by_claim``) are both built from it.
    """
    result: dict[int, list[ReviewCase]] = {}
    pks = list(claim_ids)
    if not pks:
        return result
    for case in (
        ReviewCase.objects.filter(claim_id__in=pks).select_related("owner").order_by("opened_at", "id")
    ):
        result.setdefault(case.claim_id, []).append(case)
    return result


def claim_escalations(claim_pks) -> dict[int, list[dict]]:
    """Return {claim pk: [escalation refs]} for the Claim Card's log, oldest case first (one query).

    Registered as audit's ``claim_escalations`` hook, which the claim API and pages ask.
    """
    return {
        pk: [
            {
                "type": "review",
                "ticket": case.ticket,
                "tier": case.tier,
                "status": case.status,
                "due_at": case.due_at,
                "reasons": case.reasons or [case.trigger],
                "at": case.opened_at,
            }
            for case in cases
        ]
        for pk, cases in cases_for_claims(claim_pks).items()
    }


def escalation_state_q(state: str) -> Q:
    """Return the claim filter of an escalation state: open, resolved, any (ever escalated), none.

    Registered as audit's ``claim_escalation_filter`` hook (the claim lists' ``escalation`` filter).
    """
    if state == "open":
        return Q(review_cases__status__in=OPEN_CASE_STATUSES)
    if state == "resolved":
        return Q(review_cases__status=CaseStatus.RESOLVED) & ~Q(review_cases__status__in=OPEN_CASE_STATUSES)
    if state == "any":
        return Q(review_cases__isnull=False)
    return Q(review_cases__isnull=True)


def curation_list(*, user, status: str | None = None) -> QuerySet[CurationItem]:
    """Knowledge-base correction items the user may read, newest first."""
    if not roles.can_read(user):
        return CurationItem.objects.none()
    qs = CurationItem.objects.select_related("case", "claim", "document", "created_by").filter(
        workspace=workspace_for_user(user)
    )
    if status:
        qs = qs.filter(status=status)
    return qs


def case_owner_choices(case: ReviewCase) -> list[tuple[str, list]]:
    """Who may own a case: active users of its workspace holding its tier's role, then the roles above.

    Returns [(role name, [users by username])] with empty roles left out (one query).
    """
    from django.contrib.auth import get_user_model

    eligible = [roles.TIER_ROLES[t] for t in policy.TIERS if t >= case.tier]
    users = (
        get_user_model()
        .objects.filter(
            is_active=True, theoria_profile__workspace_id=case.workspace_id, groups__name__in=eligible
        )
        .annotate(role=F("groups__name"))
        .order_by("username")
    )
    by_role: dict[str, list] = {role: [] for role in eligible}
    seen: set[int] = set()
    for user in users:  # a user holding two roles is listed under the tier's own role first
        by_role[user.role].append(user)
    out = []
    for role in eligible:
        fresh = [u for u in by_role[role] if u.pk not in seen]
        seen.update(u.pk for u in fresh)
        if fresh:
            out.append((role, fresh))
    return out
