"""HTML pages of the audit domain: home, answers, claim cards and lists, dashboard, nightly reports.

Views are thin: they check the reader's role, parse the query string with a form (bad input
is a 400 naming the field), call selectors and render. Charts are built in ``audit.charts``.
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connection
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render

from audit import (
    charts, constants, presentation, roles, selectors, selectors_api, selectors_claims, selectors_dashboard,
    selectors_nightly,
)
from audit.api.serializers import ClaimCardSerializer
from audit.filters import ClaimFilter
from audit.forms import DateRangeForm, form_errors_text
from audit.models.choices import LABEL_BADGES, Label
from audit.services.workspaces import workspace_for_user

CLAIMS_PER_PAGE = constants.UI_CLAIMS_PER_PAGE


def _reader_workspace(request):
    """Return the reader's workspace, or refuse users without a role that may read audits."""
    if not roles.can_read(request.user):
        raise PermissionDenied("Your account has no role that may read audits.")
    return workspace_for_user(request.user)


def _found(obj, what: str):
    if obj is None:
        raise Http404(f"No such {what} in your workspace.")
    return obj


def _bad_request(request, form, template: str = "audit/bad_request.html") -> HttpResponse:
    return render(request, template, {"form": form, "message": form_errors_text(form)}, status=400)


@login_required
def home(request):
    return render(request, "home.html", {"summary": selectors.home_summary()})


def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def _escalations_by_claim(claim_ids) -> dict[int, list[dict]]:
    """Return the escalation cases of the given claims as plain dicts (see escalation.selectors)."""
    from escalation import reporting

    return reporting.cases_by_claim(claim_ids=list(claim_ids))


@login_required
def answer_detail(request, answer_id: str):
    workspace = _reader_workspace(request)
    answer = _found(selectors_claims.answer_get(workspace=workspace, answer_id=answer_id), "answer")
    claims = list(answer.claims.all())
    revised = bool(answer.original_text) and answer.original_text != answer.text
    run = next(iter(answer.runs.all()), None)
    context = {
        "answer": answer,
        # the stored claims are those of the answer as received; the returned text is badged with
        # each claim's revision (its own wording and verdict)
        "segments": presentation.mark_claims(answer.original_text or answer.text, claims),
        "returned_segments": presentation.mark_claims(answer.text, presentation.returned_claims(answer.text, claims))
        if revised else [],
        # every attempt of the revision loop lives on the run; Audit-Web adds non-attempt entries
        "attempts": [r for r in (run.revision_history if run else []) if "attempt" in r],
        "claims": claims,
        "run": run,
        "revised": revised,
        "diff": presentation.word_diff(answer.original_text, answer.text) if revised else [],
        "label_counts": {text: sum(1 for c in claims if c.label == label) for label, (text, _) in LABEL_BADGES.items()},
    }
    return render(request, "audit/answer_detail.html", context)


@login_required
def claim_detail(request, pk: int):
    workspace = _reader_workspace(request)
    claim = _found(selectors_claims.claim_get(workspace=workspace, claim_pk=pk), "claim")
    escalations = _escalations_by_claim([claim.pk]).get(claim.pk, [])
    card = ClaimCardSerializer(claim, context={"escalations": selectors_api.claim_escalations([claim.pk])}).data
    context = {
        "claim": claim,
        "card": card,
        "evidence": list(claim.evidence.all()),
        "run": selectors_claims.run_latest(answer=claim.answer),
        "escalations": escalations,
        "events": list(selectors_claims.claim_events(claim=claim)[:50]),
        "card_json": json.dumps(card, indent=2, default=str),
    }
    return render(request, "audit/claim_detail.html", context)


@login_required
def claim_list(request):
    """List claims with the API's filters (one FilterSet for both); export links reuse the API."""
    workspace = _reader_workspace(request)
    query = request.GET.copy()
    query.pop("page", None)
    filterset = ClaimFilter(query, queryset=selectors_claims.claim_rows(workspace=workspace))
    if not filterset.is_valid():
        return _bad_request(request, filterset.form)
    page = Paginator(filterset.qs, CLAIMS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "audit/claim_list.html", {
        "page": page,
        "query": query.urlencode(),
        "params": query,
        "labels": Label.choices,
        "modes": selectors_claims.Mode.choices,
        "domains": selectors_claims.claim_domains(workspace=workspace),
        "escalation_choices": ClaimFilter.base_filters["escalation"].extra["choices"],
    })


@login_required
def dashboard(request):
    workspace = _reader_workspace(request)
    form = DateRangeForm(request.GET or None)
    if request.GET and not form.is_valid():
        return _bad_request(request, form)
    default = selectors_dashboard.DateRange.ending_today()
    data = form.cleaned_data if request.GET else {}
    period = selectors_dashboard.DateRange(data.get("date_from") or default.start, data.get("date_to") or default.end)
    if data.get("date_from") and not data.get("date_to"):
        period = selectors_dashboard.DateRange(period.start, max(period.start, default.end))
    if (period.end - period.start).days > selectors_dashboard.MAX_RANGE_DAYS:
        form.add_error("date_from", f"the range may span at most {selectors_dashboard.MAX_RANGE_DAYS} days.")
        return _bad_request(request, form)
    trust = selectors_dashboard.trust_summary(workspace=workspace, period=period)
    from escalation import reporting

    queue = reporting.dashboard_summary(workspace=workspace, start=period.bounds()[0], end=period.bounds()[1])
    figures = {
        "trust-trend": charts.trust_trend(trust),
        "label-distribution": charts.label_distribution(trust),
        "queue-aging": charts.queue_aging(queue["aging"]),
        "sla-attainment": charts.sla_attainment(queue["attainment"]),
        "escalation-volume": charts.escalation_volume(queue["volume"]),
    }
    incidents = selectors_dashboard.incident_counts(workspace=workspace, period=period)
    llm = selectors_dashboard.llm_usage(workspace=workspace, period=period)
    return render(request, "audit/dashboard.html", {
        "form": DateRangeForm(initial={"date_from": period.start, "date_to": period.end}),
        "period": period,
        "trust": trust,
        "figures": figures,
        "incidents": incidents,
        "llm": llm,
        "llm_figure": charts.llm_usage(llm) if llm["configured"] or llm["used"] else None,
        "queue": queue,
        "nightly": selectors_nightly.nightly_report_latest(workspace=workspace),
        "labels": Label,
    })


@login_required
def nightly_reports(request):
    workspace = _reader_workspace(request)
    reports = list(selectors_nightly.nightly_report_list(workspace=workspace)[: constants.UI_NIGHTLY_REPORTS_LISTED])
    return render(request, "audit/nightly_reports.html", {"reports": reports, "latest": reports[0] if reports else None})
