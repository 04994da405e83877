"""Reads behind the analyst pages: one answer, one claim card, filtered claim lists.

Every function is scoped to a workspace and fetches related rows in bulk (``select_related`` /
``prefetch_related``), so a page costs a fixed number of queries whatever its length.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from audit.hooks import claim_escalation_filter
from audit.models import Answer, AuditEvent, Claim, Evidence, VerificationRun, Workspace
from audit.models.choices import (
    Label,
    Mode,  # noqa: F401 — re-exported for the list page's menu
    RevisionStatus,
)


def answer_get(*, workspace: Workspace, answer_id: str) -> Answer | None:
    """Return the workspace's answer by public id (``a-...``) or numeric key, with its claims."""
    lookup = Q(public_id=answer_id)
    if answer_id.isdigit():
        lookup |= Q(pk=int(answer_id))
    top_evidence = Evidence.objects.order_by("rank", "id")
    return (
        Answer.objects.filter(workspace=workspace)
        .filter(lookup)
        .select_related("user")
        .prefetch_related(
            Prefetch(
                "claims",
                queryset=Claim.objects.order_by("span_start", "id").prefetch_related(
                    Prefetch("evidence", queryset=top_evidence)
                ),
            ),
            Prefetch("runs", queryset=_runs_latest_first()),
        )
        .first()
    )


def _runs_latest_first() -> QuerySet[VerificationRun]:
    return VerificationRun.objects.order_by("-started_at", "-id")


def run_latest(*, answer: Answer) -> VerificationRun | None:
    """Return the answer's latest verification run (its metrics and LLM accounting), or None."""
    return _runs_latest_first().filter(answer=answer).first()


def claim_get(*, workspace: Workspace, claim_pk: int) -> Claim | None:
    """Return one claim of the workspace with its answer and evidence (best first)."""
    return (
        Claim.objects.filter(answer__workspace=workspace, pk=claim_pk)
        .select_related("answer", "answer__user")
        .prefetch_related(
            Prefetch(
                "evidence", queryset=Evidence.objects.select_related("chunk__document").order_by("rank", "id")
            )
        )
        .first()
    )


def claim_events(*, claim: Claim) -> QuerySet[AuditEvent]:
    """Return the audit events recorded about a claim and its answer, latest first."""
    return AuditEvent.objects.filter(
        Q(object_type="audit.claim", object_id=str(claim.pk))
        | Q(object_type="audit.answer", object_id=str(claim.answer_id))
    ).order_by("-at", "-id")


def claim_rows(*, workspace: Workspace) -> QuerySet[Claim]:
    """Return the workspace's claims for a list page (answer joined), newest answers first.

    Filtering is the caller's: ``audit.web.filters.ClaimFilter`` (shared with the API).
    """
    return (
        Claim.objects.filter(answer__workspace=workspace)
        .select_related("answer")
        .order_by("-answer__created_at", "-answer_id", "span_start", "id")
    )


def claim_domains(*, workspace: Workspace) -> list[str]:
    """Return the answer domains in use in the workspace (for filter menus)."""
    return sorted(
        d
        for d in Answer.objects.filter(workspace=workspace)
        .exclude(domain="")
        .values_list("domain", flat=True)
        .distinct()
    )


AUDIT_NOW_ACTION = "answer.audit_requested"  # written on a Normal answer when an analyst audits it


def answer_rows(*, workspace: Workspace) -> QuerySet[Answer]:
    """Return the workspace's answers for the list page, newest first, with what its filters need.

    ``has_refuted`` / ``has_doubt`` (a claim is REFUTED / not SUPPORTED) and ``escalated`` (a claim
    was ever escalated) are EXISTS subqueries, so filtering and counting the list stays cheap at
    any size; the figures a row shows are added to the page's rows only (``answer_facts``).
    Filtering is ``audit.web.filters.AnswerPageFilter``.
    """
    from django.db.models import Exists, OuterRef

    claims = Claim.objects.filter(answer=OuterRef("pk"))
    answers: QuerySet[Answer] = (  # annotate() types its rows loosely
        Answer.objects.filter(workspace=workspace)
        .annotate(
            has_refuted=Exists(claims.filter(label=Label.REFUTED)),
            has_doubt=Exists(claims.exclude(label=Label.SUPPORTED)),
            escalated=Exists(claims.filter(claim_escalation_filter("any"))),
        )
        .order_by("-created_at", "-id")
    )
    return answers


def answer_facts(answers: list[Answer]) -> list[Answer]:
    """Return the given answers (one page) in their order with what a row shows, in one query.

    Claim counts per label, open cases, the latest run's audit score and, for a Normal answer an
    analyst audited later, the public id of the audited copy.
    """
    from django.db.models import CharField, Count, IntegerField, OuterRef, Subquery
    from django.db.models.fields.json import KT
    from django.db.models.functions import Cast, Coalesce

    open_cases = (
        # one open case per claim at most (escalation's constraint): claims with an open case
        Claim.objects.filter(claim_escalation_filter("open"), answer=OuterRef("pk"))
        .order_by()
        .values("answer")
        .annotate(n=Count("id", distinct=True))
        .values("n")[:1]
    )
    latest_run = VerificationRun.objects.filter(answer=OuterRef("pk")).order_by("-started_at", "-id")
    audited_as = (
        AuditEvent.objects.filter(
            object_type="audit.answer", action=AUDIT_NOW_ACTION, object_id=Cast(OuterRef("pk"), CharField())
        )
        .order_by("-at", "-id")
        .annotate(copy=KT("details__audited_as"))
        .values("copy")[:1]
    )
    rows = {
        a.pk: a
        for a in Answer.objects.filter(pk__in=[a.pk for a in answers]).annotate(
            claims_total=Count("claims"),
            supported=Count("claims", filter=Q(claims__label=Label.SUPPORTED)),
            refuted=Count("claims", filter=Q(claims__label=Label.REFUTED)),
            nei=Count("claims", filter=Q(claims__label=Label.NEI)),
            open_cases=Coalesce(Subquery(open_cases, output_field=IntegerField()), 0),
            audit_score=Subquery(latest_run.values("audit_score")[:1]),
            audited_as=Subquery(audited_as, output_field=CharField()),
        )
    }
    return [rows[a.pk] for a in answers if a.pk in rows]


def answer_audited_as(*, answer: Answer) -> str:
    """Return the public id of the audited copy of a Normal answer ("" when nobody audited it)."""
    event = (
        AuditEvent.objects.filter(
            object_type="audit.answer", object_id=str(answer.pk), action=AUDIT_NOW_ACTION
        )
        .order_by("-at", "-id")
        .first()
    )
    return (event.details or {}).get("audited_as", "") if event else ""


def revision_proposals(*, workspace: Workspace, limit: int | None = None) -> list[Answer]:
    """The workspace's answers whose revision waits for a person's approval, oldest first.

    Claims (with their evidence) come along, so a page of proposals costs three queries.
    """
    qs = (
        Answer.objects.filter(workspace=workspace, revision_status=RevisionStatus.PROPOSED)
        .order_by("created_at", "id")
        .prefetch_related(
            Prefetch(
                "claims",
                queryset=Claim.objects.order_by("span_start", "id").prefetch_related(
                    Prefetch("evidence", queryset=Evidence.objects.order_by("rank", "id"))
                ),
            )
        )
    )
    return list(qs[:limit] if limit else qs)


def revision_proposals_count(*, workspace: Workspace) -> int:
    """How many of the workspace's answers hold a revision awaiting approval."""
    return Answer.objects.filter(workspace=workspace, revision_status=RevisionStatus.PROPOSED).count()


def answer_external_sources(*, answer: Answer) -> dict[str, Any]:
    """When and why the answer's claim text went to external sources, and what came of it.

    ``decision`` is the details of the answer's ``answer.web_escalation`` event (``requested``,
    ``reasons`` per claim, ``status``) with its time, or None when the web step never came up;
    ``calls`` lists the external calls made for the answer (provider, status, the query that
    left, when), oldest first. Two queries.
    """
    from audit.models import ExternalCall

    event = (
        AuditEvent.objects.filter(
            object_type="audit.answer", object_id=str(answer.pk), action="answer.web_escalation"
        )
        .order_by("-at", "-id")
        .first()
    )
    calls = list(
        ExternalCall.objects.filter(answer=answer)
        .order_by("at", "id")
        .values("provider", "status", "query", "at", "failure_reason", "claim__claim_id")
    )
    return {
        "decision": {**(event.details or {}), "at": event.at} if event else None,
        "calls": calls,
        "left": [c for c in calls if c["status"] == "ok"],
    }
