"""The demo's pages, each at its richest stored row: what ``screenshots`` shoots and ``bench_pages`` times."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db.models import Count


def demo_pages(workspace) -> list[tuple[str, str, str]]:
    """Return (file name, path, what to wait for) for every page, using the richest rows stored."""
    from audit.models import Answer, Claim
    from escalation.models import ReviewCase

    answer = (
        Answer.objects.filter(workspace=workspace)
        .annotate(n=Count("claims"))
        .filter(n__gt=0)
        .order_by("-n", "-created_at")
        .first()
    )
    if answer is None:
        raise CommandError(
            "There is no audited answer to show; run `make setup` (or `manage.py seed_demo`) first."
        )
    revised = (
        Answer.objects.filter(workspace=workspace, claims__isnull=False)
        .exclude(revisions=[])
        .exclude(revision_status__in=["proposed", "rejected"])
        .first()
    )
    # a claim card with the most to show: a human decision, else evidence
    claim = (
        Claim.objects.filter(answer__workspace=workspace, review_cases__status="resolved")
        .order_by("-id")
        .first()
        or Claim.objects.filter(answer__workspace=workspace, evidence__isnull=False)
        .order_by("confidence")
        .first()
        or answer.claims.first()
    )
    # an open case with the most history (an escalation that kept its owner, its next clock), else any
    case = (
        ReviewCase.objects.filter(workspace=workspace)
        .exclude(status=ReviewCase.Status.RESOLVED)
        .annotate(n_events=Count("events"))
        .order_by("-n_events", "-risk_score", "id")
        .first()
        or ReviewCase.objects.filter(workspace=workspace).order_by("-risk_score", "id").first()
    )
    # a held revision, the one with a finding on its revised sentence first
    proposed = Answer.objects.filter(workspace=workspace, revision_status=Answer.RevisionStatus.PROPOSED)
    proposal = (
        proposed.filter(claims__revision__sentence__findings__0__isnull=False).first()
        or proposed.order_by("-created_at").first()
    )
    pages = [
        ("home", "/", "main"),
        ("dashboard", "/dashboard/", "charts"),
        ("escalations", "/escalations/", "#queue"),
        ("claims", "/claims/", "#claims"),
        ("answer", f"/answers/{answer.public_id}/", "#answer-text"),
        ("claim-card", f"/claims/{claim.pk}/", "main"),
        ("nightly-report", "/reports/nightly/", "main"),
        ("admin", "/admin/", "#content"),
        ("admin-workspace", f"/admin/audit/workspace/{workspace.pk}/change/", "#content"),
        ("admin-settings", f"/admin/audit/workspace/{workspace.pk}/settings/", "#thresholds"),
        ("answers", "/answers/", "#answers"),
        ("answer-new", "/answers/new/", "#answer-form"),
    ]
    if revised is not None and revised.pk != answer.pk and revised.revision_status != "proposed":
        pages.append(("answer-revised", f"/answers/{revised.public_id}/", "#revision-diff"))
    if proposal is not None:
        pages.append(("answer-proposal", f"/answers/{proposal.public_id}/#proposal", "#proposal"))
    if case is not None:
        pages.insert(3, ("case", f"/escalations/{case.ticket}/", "main"))
    return pages
