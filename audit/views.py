"""HTML pages of the audit domain: home, answers, claim cards and lists, dashboard, nightly reports.

Views are thin: they check the reader's role, parse the query string with a form (bad input
is a 400 naming the field), call selectors and render. Charts are built in ``audit.charts``.
"""

from __future__ import annotations

import json
import math

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connection
from django.http import Http404, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect, render

from audit import charts, constants, hooks, presentation, roles, selectors
from audit.api.serializers import ClaimCardSerializer
from audit.api.throttles import audit_throttle
from audit.api.views import AuditCreateApi, audit_request_from
from audit.errors import InvalidInput
from audit.filters import AnswerPageFilter, ClaimFilter
from audit.forms import AnswerSubmitForm, DateRangeForm, PassageFormSet, audit_payload, form_errors_text
from audit.models import Workspace
from audit.models.choices import LABEL_BADGES, Label
from audit.selectors import (
    claims as claims_selectors,
)
from audit.selectors import (
    dashboard as dashboard_selectors,
)
from audit.selectors import (
    nightly as nightly_selectors,
)
from audit.services.audit_now import answer_audit_now
from audit.services.submissions import audit_submit
from audit.services.workspaces import SWITCH_SESSION_KEY, workspace_for_user
from escalation import reporting

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
    summary = (
        selectors.home_summary(workspace=workspace_for_user(request.user))
        if roles.can_read(request.user)
        else None
    )
    workspaces = Workspace.objects.order_by("name") if request.user.is_superuser else []
    return render(request, "home.html", {"summary": summary, "workspaces": workspaces})


@login_required
def workspace_switch_page(request):
    """A superuser's explicit switch to another workspace (POST ``workspace``: a slug; blank: home)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not request.user.is_superuser:
        raise PermissionDenied("Only a superuser may switch workspaces.")
    slug = request.POST.get("workspace", "").strip()
    if slug and not Workspace.objects.filter(slug=slug).exists():
        raise Http404("No such workspace.")
    if slug:
        request.session[SWITCH_SESSION_KEY] = slug
    else:
        request.session.pop(SWITCH_SESSION_KEY, None)
    return redirect("home")


def favicon(request):
    from django.templatetags.static import static

    return redirect(static("favicon.svg"), permanent=True)


def healthz(request):
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


def _escalations_by_claim(claim_ids) -> dict[int, list[dict]]:
    """Return the escalation cases of the given claims as plain dicts (see escalation.selectors)."""
    return reporting.cases_by_claim(claim_ids=list(claim_ids))


ANSWERS_PER_PAGE = constants.UI_CLAIMS_PER_PAGE


def _filtered_page(request, filterset_class, queryset, per_page: int):
    """Filter a list with the API's FilterSet and cut one page; a bad filter is a 400 page naming it.

    Returns the template context (page, query string without the page, the filters as read,
    choices already in their canonical letter case) or the 400 response.
    """
    query = request.GET.copy()
    query.pop("page", None)
    filterset = filterset_class(query, queryset=queryset)
    if not filterset.is_valid():
        return _bad_request(request, filterset.form)
    page = Paginator(filterset.qs, per_page).get_page(request.GET.get("page"))
    return {"page": page, "query": query.urlencode(), "params": filterset.form.data}


@login_required
def answer_list(request):
    """Every answer of the workspace, any mode, with filters; unaudited (Normal) answers say so."""
    workspace = _reader_workspace(request)
    listed = _filtered_page(
        request, AnswerPageFilter, claims_selectors.answer_rows(workspace=workspace), ANSWERS_PER_PAGE
    )
    if isinstance(listed, HttpResponse):
        return listed
    listed["page"].object_list = claims_selectors.answer_facts(list(listed["page"].object_list))
    return render(
        request,
        "audit/answer_list.html",
        {
            **listed,
            "modes": claims_selectors.Mode.choices,
            "domains": claims_selectors.claim_domains(workspace=workspace),
            "can_submit": roles.can_submit(request.user),
        },
    )


def _flat_errors(errors, prefix: str = "") -> list[str]:
    """Return 'field: message' lines of DRF serializer errors (nested lists and dicts flattened)."""
    if isinstance(errors, dict):
        return [
            line
            for key, value in errors.items()
            for line in _flat_errors(value, f"{prefix}{key}" if not prefix else f"{prefix}.{key}")
        ]
    if isinstance(errors, list) and errors and all(isinstance(e, (dict, list)) for e in errors):
        return [line for i, e in enumerate(errors, start=1) for line in _flat_errors(e, f"{prefix}[{i}]")]
    return [f"{prefix}: {' '.join(str(e) for e in errors)}"] if errors else []


@login_required
def answer_new(request):
    """Submit an answer from the browser: the API's checks, then ``audit_submit``, then its page."""
    workspace = _reader_workspace(request)
    if not roles.can_submit(request.user):
        raise PermissionDenied("Your account has no role that may submit answers.")
    default_label = dict(claims_selectors.Mode.choices).get(workspace.default_mode, workspace.default_mode)
    form = AnswerSubmitForm(request.POST or None, default_mode_label=default_label)
    passages = PassageFormSet(request.POST or None, prefix="passage")
    errors: list[str] = []
    status = 400 if request.method == "POST" else 200
    wait = audit_throttle(request) if request.method == "POST" else None  # the API's audit limit, shared
    if wait is not None:
        errors.append(
            f"You have submitted more answers than this workspace audits per user in this period; "
            f"try again in {math.ceil(wait)} seconds."
        )
        status = 429
    elif request.method == "POST" and form.is_valid() and passages.is_valid():
        data = AuditCreateApi.InputSerializer(data=audit_payload(form, passages))
        if data.is_valid():
            try:
                submission = audit_submit(
                    workspace=workspace, user=request.user, request=audit_request_from(data.validated_data)
                )
            except InvalidInput as exc:
                errors.append(str(exc))
            else:
                return redirect("answer-detail", answer_id=submission.answer.public_id)
        else:
            errors.extend(_flat_errors(data.errors))
    response = render(
        request,
        "audit/answer_new.html",
        {"form": form, "passages": passages, "errors": errors},
        status=status,
    )
    if wait is not None:
        response["Retry-After"] = str(math.ceil(wait))
    return response


@login_required
def answer_audit(request, answer_id: str):
    """Audit a Normal answer now (Audit-Local) and open the audited copy's page."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    workspace = _reader_workspace(request)
    if not roles.can_submit(request.user):
        raise PermissionDenied("Your account has no role that may submit answers for audit.")
    answer = _found(claims_selectors.answer_get(workspace=workspace, answer_id=answer_id), "answer")
    from django.contrib import messages

    try:
        audited = answer_audit_now(answer=answer, user=request.user)
    except InvalidInput as exc:
        messages.error(request, exc.message)
        return redirect("answer-detail", answer_id=answer.public_id)
    messages.success(request, f"Audited {answer.public_id} as {audited.public_id} (Audit-Local).")
    return redirect("answer-detail", answer_id=audited.public_id)


@login_required
def answer_detail(request, answer_id: str):
    workspace = _reader_workspace(request)
    answer = _found(claims_selectors.answer_get(workspace=workspace, answer_id=answer_id), "answer")
    claims = list(answer.claims.all())
    revised = bool(answer.original_text) and answer.original_text != answer.text
    run = next(iter(answer.runs.all()), None)
    context = {
        "answer": answer,
        "audited": answer.mode != claims_selectors.Mode.NORMAL,
        "audited_as": claims_selectors.answer_audited_as(answer=answer)
        if answer.mode == claims_selectors.Mode.NORMAL
        else "",
        "can_submit": roles.can_submit(request.user),
        # the stored claims are those of the answer as received; the returned text is badged with
        # each claim's revision (its own wording and verdict)
        "segments": presentation.mark_claims(answer.original_text or answer.text, claims),
        "returned_segments": presentation.mark_claims(
            answer.text, presentation.returned_claims(answer.text, claims)
        )
        if revised
        else [],
        # every attempt of the revision loop lives on the run; Audit-Web adds non-attempt entries
        "attempts": [r for r in (run.revision_history if run else []) if "attempt" in r],
        "claims": claims,
        "run": run,
        "revised": revised,
        "diff": presentation.word_diff(answer.original_text, answer.text) if revised else [],
        "label_counts": {
            text: sum(1 for c in claims if c.label == label) for label, (text, _) in LABEL_BADGES.items()
        },
    }
    return render(request, "audit/answer_detail.html", context)


@login_required
def claim_detail(request, pk: int):
    workspace = _reader_workspace(request)
    claim = _found(claims_selectors.claim_get(workspace=workspace, claim_pk=pk), "claim")
    escalations = _escalations_by_claim([claim.pk]).get(claim.pk, [])
    card = ClaimCardSerializer(claim, context={"escalations": hooks.claim_escalations([claim.pk])}).data
    context = {
        "claim": claim,
        "card": card,
        "evidence": presentation.evidence_views(
            claim, claim.evidence.all(), min_alignment=constants.UI_EVIDENCE_MIN_ALIGNMENT
        ),
        "run": claims_selectors.run_latest(answer=claim.answer),
        "escalations": escalations,
        "events": list(claims_selectors.claim_events(claim=claim)[:50]),
        "card_json": json.dumps(card, indent=2, default=str),
    }
    return render(request, "audit/claim_detail.html", context)


@login_required
def claim_list(request):
    """List claims with the API's filters (one FilterSet for both); export links reuse the API."""
    workspace = _reader_workspace(request)
    listed = _filtered_page(
        request, ClaimFilter, claims_selectors.claim_rows(workspace=workspace), CLAIMS_PER_PAGE
    )
    if isinstance(listed, HttpResponse):
        return listed
    return render(
        request,
        "audit/claim_list.html",
        {
            **listed,
            "labels": Label.choices,
            "modes": claims_selectors.Mode.choices,
            "domains": claims_selectors.claim_domains(workspace=workspace),
            "escalation_choices": ClaimFilter.base_filters["escalation"].extra["choices"],
        },
    )


@login_required
def dashboard(request):
    """The compliance dashboard: KPI tiles, trends, the queue and a per-domain breakdown.

    A bad date range (From after To, a span over the limit, a date that is no date) is said
    beside the form and the default range is shown (HTTP 400), so the page is never lost.
    """
    workspace = _reader_workspace(request)
    form = DateRangeForm(request.GET or None)
    default = dashboard_selectors.DateRange.ending_today()
    data = form.cleaned_data if request.GET and form.is_valid() else {}
    period = dashboard_selectors.DateRange(
        data.get("date_from") or default.start, data.get("date_to") or default.end
    )
    if data.get("date_from") and not data.get("date_to"):
        period = dashboard_selectors.DateRange(period.start, max(period.start, default.end))
    if data and (period.end - period.start).days > dashboard_selectors.MAX_RANGE_DAYS:
        form.add_error("date_from", f"the range may span at most {dashboard_selectors.MAX_RANGE_DAYS} days.")
        period = default
    range_error = form_errors_text(form) if request.GET and form.errors else ""
    trust = dashboard_selectors.trust_summary(workspace=workspace, period=period)

    queue = reporting.dashboard_summary(workspace=workspace, start=period.bounds()[0], end=period.bounds()[1])
    domains = dashboard_selectors.domain_breakdown(workspace=workspace, period=period)
    figures = {
        "trust-trend": charts.trust_trend(trust),
        "label-rates": charts.label_rates(trust),
        "sla-trend": charts.sla_attainment_trend(queue["attainment_by_day"]),
        "rag-score": charts.rag_score_trend(trust),
        "label-distribution": charts.label_distribution(trust),
        "queue-aging": charts.queue_aging(queue["aging"]),
        "sla-attainment": charts.sla_attainment(queue["attainment"]),
        "escalation-volume": charts.escalation_volume(queue["volume"]),
        "domains": charts.domain_breakdown(domains),
    }
    incidents = dashboard_selectors.incident_counts(workspace=workspace, period=period)
    llm = dashboard_selectors.llm_usage(workspace=workspace, period=period)
    shown = {"date_from": period.start, "date_to": period.end}
    return render(
        request,
        "audit/dashboard.html",
        {
            "form": DateRangeForm(initial=shown) if not range_error else form,
            "range_error": range_error,
            "period": period,
            "trust": trust,
            "figures": figures,
            "kpis": dashboard_selectors.success_metrics(workspace=workspace, period=period),
            "domains": domains,
            "incidents": incidents,
            "llm": llm,
            "llm_figure": charts.llm_usage(llm) if llm["configured"] or llm["used"] else None,
            "queue": queue,
            "nightly": nightly_selectors.nightly_report_latest(workspace=workspace),
            "labels": Label,
            "default_days": dashboard_selectors.DEFAULT_RANGE_DAYS,
        },
        status=400 if range_error else 200,
    )


@login_required
def nightly_reports(request):
    workspace = _reader_workspace(request)
    reports = list(
        nightly_selectors.nightly_report_list(workspace=workspace)[: constants.UI_NIGHTLY_REPORTS_LISTED]
    )
    return render(
        request, "audit/nightly_reports.html", {"reports": reports, "latest": reports[0] if reports else None}
    )
