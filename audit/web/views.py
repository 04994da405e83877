"""HTML pages of the audit domain: home, answers, claim cards and lists, dashboard, nightly reports.

Views are thin: they check the reader's role, parse the query string with a form (bad input
is a 400 naming the field), call selectors and render. Charts are built in ``audit.web.charts``.
"""

from __future__ import annotations

import datetime as dt
import json
import math

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connection
from django.http import Http404, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_safe

from audit import constants, hooks, roles, selectors
from audit.cards import ClaimCardSerializer
from audit.errors import AlreadyDone, InvalidInput, TheoriaError
from audit.models import BackgroundJob, Workspace
from audit.models.choices import LABEL_BADGES, Label
from audit.security.throttling import audit_throttle
from audit.selectors import api as selectors_api
from audit.selectors import (
    claims as claims_selectors,
)
from audit.selectors import (
    dashboard as dashboard_selectors,
)
from audit.selectors import (
    learning as learning_selectors,
)
from audit.selectors import (
    nightly as nightly_selectors,
)
from audit.services.audit_now import answer_audit_now
from audit.services.revision import answer_revision_decide
from audit.services.submissions import audit_submit_or_queue
from audit.services.workspaces import SWITCH_SESSION_KEY, workspace_for_user, workspace_switch
from audit.web import charts, drilldown, presentation, review_charts
from audit.web.dashboard_cache import dashboard_cached
from audit.web.filters import AnswerPageFilter, ClaimFilter
from audit.web.forms import (
    AnswerSubmitForm,
    DateRangeForm,
    PassageFormSet,
    RevisionDecisionForm,
    audit_request_of,
    error_summary,
    form_errors_text,
    mark_invalid,
)

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


@login_required
def home(request):
    """My work first (my open cases, at risk, breached, unassigned, the next deadlines), then the totals."""
    reader = roles.can_read(request.user)
    workspace = workspace_for_user(request.user) if reader else None
    summary = selectors.home_summary(workspace=workspace) if reader else None
    # the queue's tiles only for who may act on a case (a Submitter or an Auditor reads no "my work")
    work = hooks.user_work(user=request.user, workspace=workspace) if roles.can_review(request.user) else None
    proposals = claims_selectors.revision_proposals_count(workspace=workspace) if reader else 0
    workspaces = Workspace.objects.order_by("name") if request.user.is_superuser else []
    return render(
        request,
        "home.html",
        {
            "summary": summary,
            "work": work,
            "proposals": proposals,
            "workspaces": workspaces,
            "can_submit": roles.can_submit(request.user),
        },
    )


@login_required
def workspace_switch_page(request):
    """A superuser's explicit switch to another workspace (POST ``workspace``: a slug; blank: home)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    slug = request.POST.get("workspace", "").strip()
    if not slug:
        request.session.pop(SWITCH_SESSION_KEY, None)
        return redirect("home")
    try:
        workspace_switch(request.user, slug)  # who may switch, and to which workspace: the service decides
    except Workspace.DoesNotExist:
        raise Http404("No such workspace.") from None
    request.session[SWITCH_SESSION_KEY] = slug
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
    return hooks.claim_reviews(claim_ids)


ANSWERS_PER_PAGE = constants.UI_CLAIMS_PER_PAGE


def _filtered_page(request, filterset_class, queryset, per_page: int, field_ids: dict[str, str]) -> dict:
    """Filter a list with the API's FilterSet and cut one page.

    Returns the template context: the page, the query string without the page, the filters as
    read (choices in their canonical letter case) and, when a filter is bad, the error summary
    linked to the filter fields (``field_ids``: filter name -> element id); the list is then shown
    unfiltered and the filters stay as typed, so nothing is lost (the view answers 400).
    """
    query = request.GET.copy()
    query.pop("page", None)
    filterset = filterset_class(query, queryset=queryset)
    errors = []
    if not filterset.is_valid():
        labels = {name: (f.label or name.replace("_", " ")) for name, f in filterset.filters.items()}
        errors = [
            {"id": field_ids.get(name, ""), "text": f"{FILTER_LABELS.get(name, labels.get(name, name))}: {e}"}
            for name, messages_ in filterset.form.errors.items()
            for e in messages_
        ]
        rows = queryset
    else:
        rows = filterset.qs
    page = Paginator(rows, per_page).get_page(request.GET.get("page"))
    # the pages read an empty field as "any"; the API (the export link) refuses an empty filter
    kept = query.copy()
    for name in list(kept):
        values = [v for v in kept.getlist(name) if v != ""]
        if values:
            kept.setlist(name, values)
        else:
            del kept[name]
    return {
        "page": page,
        "query": kept.urlencode() if not errors else "",
        "params": filterset.form.data,
        "summary_errors": errors,
        "invalid": set(filterset.form.errors) if errors else set(),
    }


# how the list pages name their filters in an error message
FILTER_LABELS = {
    "date_from": "From",
    "date_to": "To",
    "confidence_min": "P(supported) ≥",
    "confidence_max": "P(supported) ≤",
    "q": "Search",
    "answer": "Answer id",
}
ANSWER_FILTER_IDS = {
    "q": "f-q",
    "mode": "f-mode",
    "domain": "f-domain",
    "date_from": "f-from",
    "date_to": "f-to",
    "flagged": "f-flagged",
    "refuted": "f-refuted",
    "suppressed": "f-suppressed",
}
CLAIM_FILTER_IDS = {
    "q": "f-q",
    "label": "f-label",
    "domain": "f-domain",
    "mode": "f-mode",
    "escalation": "f-esc",
    "answer": "f-answer",
    "date_from": "f-from",
    "date_to": "f-to",
    "confidence_min": "f-cmin",
    "confidence_max": "f-cmax",
    "relabelled": "f-relabelled",
}


@login_required
def answer_list(request):
    """Every answer of the workspace, any mode, with filters; unaudited (Normal) answers say so."""
    workspace = _reader_workspace(request)
    listed = _filtered_page(
        request,
        AnswerPageFilter,
        claims_selectors.answer_rows(workspace=workspace),
        ANSWERS_PER_PAGE,
        ANSWER_FILTER_IDS,
    )
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
        status=400 if listed["summary_errors"] else 200,
    )


def _answer_submitted(request, workspace, audit_request) -> HttpResponse | InvalidInput:
    """The page a submitted answer opens: its own once audited, its job's when the audit is over
    the inline cost budget and queued; or why it was refused."""
    try:
        outcome = audit_submit_or_queue(workspace=workspace, user=request.user, request=audit_request)
    except InvalidInput as exc:
        return exc
    if isinstance(outcome, BackgroundJob):
        return redirect("job-detail", pk=outcome.pk)
    return redirect("answer-detail", answer_id=outcome.answer.public_id)


@login_required
def answer_new(request):
    """Submit an answer from the browser through the service's decision, the one the API uses (``audit_submit_or_queue``: its
    checks, its cost budget and its per-user limit of queued audits), then the answer's page, or the
    job's page when the audit is over the inline budget and runs on the task queue."""
    workspace = _reader_workspace(request)
    if not roles.can_submit(request.user):
        raise PermissionDenied("Your account has no role that may submit answers.")
    default_label = dict(claims_selectors.Mode.choices).get(workspace.default_mode, workspace.default_mode)
    form = AnswerSubmitForm(
        request.POST or None,
        default_mode_label=default_label,
        domains=workspace.known_domains(claims_selectors.claim_domains(workspace=workspace)),
        free_text_domains=workspace.free_text_domains,
    )
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
    elif request.method == "POST":
        valid = form.is_valid() & passages.is_valid()  # both checked, so every bad field is named at once
        if valid:
            outcome = _answer_submitted(request, workspace, audit_request_of(form, passages))
            if not isinstance(outcome, InvalidInput):
                return outcome
            errors.append(str(outcome))  # 400, 413 (too large), 429 (too many queued audits), ...
            status = outcome.status_code
            wait = getattr(outcome, "retry_after", None)
    summary = [{"id": "", "text": e} for e in errors]
    if request.method == "POST" and status != 429:
        summary += error_summary(mark_invalid(form))
        summary += [{"id": "", "text": f"Passages: {e}"} for e in passages.non_form_errors()]
        for n, block in enumerate(passages, start=1):
            summary += error_summary(mark_invalid(block), prefix=f"Passage {n} ")
    response = render(
        request,
        "audit/answer_new.html",
        {
            "form": form,
            "passages": passages,
            "errors": errors,
            "summary_errors": summary,
            # the sites that may receive claim text when Audit-Local escalates to the web
            "web_sites": list(workspace.web_allowed_domains or ()) if workspace.allow_external_calls else [],
        },
        status=status,
    )
    if wait is not None:
        response["Retry-After"] = str(math.ceil(wait))
    return response


@require_safe
@login_required
def job_detail(request, pk: int):
    """A job of the reader's workspace (an audit over the inline cost budget, an upload's ingestion):
    its status and progress, refreshed while it waits or runs, and the answer's link once done."""
    workspace = _reader_workspace(request)
    job = _found(selectors_api.background_job_list(workspace=workspace).filter(pk=pk).first(), "job")
    return render(
        request,
        "audit/job_detail.html",
        {"job": job, "refresh_s": constants.UI_JOB_REFRESH_S if job.active else None},
    )


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
    return _answer_page(request, workspace, answer)


def _part_number(request, count: int) -> int | None:
    """The ``part`` a long answer's page shows (1 when not asked for); None when it is no part of it."""
    text = request.GET.get("part", "1")
    return int(text) if text.isdigit() and 1 <= int(text) <= count else None


def _returned_parts(answer, claims, changes) -> list:
    """The returned (served) text in parts of UI_ANSWER_PART_CHARS, each claim badged with its
    revision and each served change with its mark."""
    marks = {c.claim_id: c.mark for c in changes}
    returned = presentation.returned_claims(answer.text, claims, marks)
    return presentation.segment_parts(
        presentation.mark_claims(answer.text, returned), constants.UI_ANSWER_PART_CHARS
    )


def _answer_page(request, workspace, answer, *, decision_errors=None, status: int = 200) -> HttpResponse:
    claims = list(answer.claims.all())
    revised = bool(answer.original_text) and answer.original_text != answer.text
    # a long answer's text in parts (UI_ANSWER_PART_CHARS), ``?part=N``: the page stays small
    size = constants.UI_ANSWER_PART_CHARS
    parts = presentation.segment_parts(
        presentation.mark_claims(answer.original_text or answer.text, claims), size
    )
    part = _part_number(request, len(parts))
    if part is None:
        return render(
            request,
            "audit/bad_request.html",
            {
                "message": f"part: this answer's text has {len(parts)} part(s); ask for one of 1 to {len(parts)}."
            },
            status=400,
        )
    run = next(iter(answer.runs.all()), None)
    by_claim = _escalations_by_claim(c.pk for c in claims)
    cases = [{**case, "claim": claim} for claim in claims for case in by_claim.get(claim.pk, [])]
    changes = presentation.served_changes(answer, claims, by_claim)
    returned_parts = _returned_parts(answer, claims, changes) if revised else [[]]
    decision_errors = decision_errors or {}
    context = {
        "answer": answer,
        "audited": answer.mode != claims_selectors.Mode.NORMAL,
        "audited_as": claims_selectors.answer_audited_as(answer=answer)
        if answer.mode == claims_selectors.Mode.NORMAL
        else "",
        "can_submit": roles.can_submit(request.user),
        # the stored claims are those of the answer as received; the returned text is badged with
        # each claim's revision (its own wording and verdict)
        "segments": parts[part - 1],
        "parts": {"number": part, "count": len(parts), "previous": part - 1, "next": part + 1},
        "returned_segments": returned_parts[part - 1] if part <= len(returned_parts) else [],
        # a served revision never hides a finding: each change marked in the returned text, and why
        "served_changes": changes,
        # every attempt of the revision loop lives on the run; Audit-Web adds non-attempt entries
        "attempts": [r for r in (run.revision_history if run else []) if "attempt" in r],
        "claims": claims,
        "run": run,
        "revised": revised,
        # the served revision skipped the approval it would have waited for: it changes only citations
        "served_without_approval": revised
        and bool(answer.revisions)
        and (answer.revisions[-1] or {}).get("served_without_approval") == "citations_only",
        "diff": presentation.word_diff(answer.original_text, answer.text) if revised else [],
        "label_counts": {
            text: sum(1 for c in claims if c.label == label) for label, (text, _) in LABEL_BADGES.items()
        },
        "cases": sorted(cases, key=lambda c: c["opened_at"] or ""),
        "proposal": presentation.proposal_view(answer)
        if answer.revision_status in _PROPOSAL_STATES
        else None,
        "can_review": roles.can_review(request.user),
        "external": (external := claims_selectors.answer_external_sources(answer=answer)),
        "allow_external_calls": workspace.allow_external_calls,
        # Audit-Local escalates to the web where the workspace allows it: the mode says so up front
        "mode_text": "Audit-Local → Audit-Web"
        if answer.mode == claims_selectors.Mode.AUDIT_LOCAL
        and (workspace.allow_external_calls or external["calls"])
        else answer.get_mode_display(),
        "thresholds": selectors_api.thresholds_for(workspace),
        "decision_errors": decision_errors,
        "decision_posted": request.POST if decision_errors else {},
        "summary_errors": [
            {"id": f"decide-{answer.public_id}-{'reason' if key == 'reason' else 'accept'}", "text": m}
            for key, messages_ in decision_errors.items()
            for m in messages_
        ],
    }
    return render(request, "audit/answer_detail.html", context, status=status)


_PROPOSAL_STATES = ("proposed", "accepted", "rejected")


@login_required
def answer_revision(request, answer_id: str):
    """Accept or reject the answer's held revision (a reviewer, with a reason), then its page.

    Bad input re-renders the answer page with the errors beside the form, focus on their summary
    (400); a decision someone else made first is said as an error, one's own earlier one (a
    double submit) as a note.
    """
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    workspace = _reader_workspace(request)
    if not roles.can_review(request.user):
        raise PermissionDenied("Your account has no reviewer role.")
    answer = _found(claims_selectors.answer_get(workspace=workspace, answer_id=answer_id), "answer")
    form = RevisionDecisionForm(request.POST)
    from django.contrib import messages

    if not form.is_valid():
        return _answer_page(request, workspace, answer, decision_errors=form.errors, status=400)
    try:
        answer_revision_decide(answer=answer, actor=request.user, **form.cleaned_data)
    except AlreadyDone as exc:
        messages.info(request, str(exc))
    except TheoriaError as exc:
        messages.error(request, f"The revision of {answer.public_id} was not changed: {exc}")
    else:
        done = (
            "accepted: the proposed text is served"
            if form.cleaned_data["decision"] == "accept"
            else ("rejected: the answer is served as received")
        )
        messages.success(request, f"The revision of {answer.public_id} was {done}.")
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect(f"{reverse('answer-detail', args=[answer.public_id])}#proposal")


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
        "can_review": roles.can_review(request.user),
        "open_case": next((e for e in escalations if e.get("status") != "resolved"), None),
    }
    return render(request, "audit/claim_detail.html", context)


@login_required
def claim_list(request):
    """List claims with the API's filters (one FilterSet for both); export links reuse the API."""
    workspace = _reader_workspace(request)
    listed = _filtered_page(
        request,
        ClaimFilter,
        claims_selectors.claim_rows(workspace=workspace),
        CLAIMS_PER_PAGE,
        CLAIM_FILTER_IDS,
    )
    return render(
        request,
        "audit/claim_list.html",
        {
            **listed,
            "labels": Label.choices,
            "modes": claims_selectors.Mode.choices,
            "domains": claims_selectors.claim_domains(workspace=workspace),
            "escalation_choices": ClaimFilter.base_filters["escalation"].extra["choices"],
            "can_review": roles.can_review(request.user),
        },
        status=400 if listed["summary_errors"] else 200,
    )


# the dashboard's domain table: (sort key, column title), in order
DOMAIN_COLUMNS = (
    ("domain", "Domain"),
    ("answers", "Answers"),
    ("claims", "Claims"),
    ("score", "Score"),
    ("supported", "Supported"),
    ("refuted", "Refuted"),
    ("nei", "Needs evidence"),
    ("unsupported", "Unsupported"),
    ("open", "Open cases"),
    ("sla", "SLA met"),
)


def _with_queue(rows: list[dict], queue: dict | None) -> list[dict]:
    """The domain rows with their open cases and SLA attainment (the queue's ``domains``; a domain
    with cases but no answer in the period gets a row of its own)."""
    by_domain = {k.lower(): v for k, v in ((queue or {}).get("domains") or {}).items()}
    seen = set()
    for row in rows:
        key = "" if row["domain"] == "(none)" else row["domain"].lower()
        seen.add(key)
        row["queue"] = by_domain.get(key, {"open": 0, "met": 0, "total": 0, "breached": 0})
    for key, figures in sorted(by_domain.items()):
        if key not in seen and key:
            rows.append(
                {
                    "domain": key,
                    "answers": 0,
                    "claims": 0,
                    "few_claims": True,
                    "score": None,
                    "queue": figures,
                }
            )
    for row in rows:
        total = row["queue"]["total"]
        row["queue"]["share"] = round(row["queue"]["met"] / total, 4) if total else None
    return rows


def _dashboard_figures(workspace, period) -> dict:
    """Every figure of the dashboard over ``period`` (cached by ``audit.web.dashboard_cache``)."""
    start, end = period.bounds()
    trust = dashboard_selectors.trust_summary(workspace=workspace, period=period)
    queue = hooks.queue_summary(workspace=workspace, start=start, end=end, domain=period.domain)
    domains = _with_queue(dashboard_selectors.domain_breakdown(workspace=workspace, period=period), queue)
    figures = {
        key: drilldown.with_links(key, figure, period)
        for key, figure in {
            "trust-trend": charts.trust_trend(trust),
            "label-rates": charts.label_rates(trust),
            "sla-trend": charts.sla_attainment_trend(queue["attainment_by_day"]),
            "rag-score": charts.rag_score_trend(trust),
            "label-distribution": charts.label_distribution(trust),
            "queue-aging": charts.queue_aging(queue["aging"]),
            "sla-attainment": charts.sla_attainment(queue["attainment"]),
            "escalation-volume": charts.escalation_volume(queue["volume"]),
            "domains": charts.domain_breakdown(domains),
        }.items()
    }
    review = learning_selectors.learning_summary(
        workspace=workspace, start=start, end=end, domain=period.domain
    )
    llm = dashboard_selectors.llm_usage(workspace=workspace, period=period)
    llm_figure = charts.llm_usage(llm) if llm["configured"] or llm["used"] else None
    return {
        "trust": trust,
        "queue": queue,
        "figures": figures,
        "kpis": dashboard_selectors.success_metrics(workspace=workspace, period=period),
        "domains": drilldown.domain_links(domains, period),
        "incidents": dashboard_selectors.incident_counts(workspace=workspace, period=period),
        "llm": llm,
        "llm_figure": drilldown.with_links("llm-usage", llm_figure, period) if llm_figure else None,
        "review": review,
        "review_figures": review_charts.review_figures(review),
    }


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
    domain = (data.get("domain") or "").strip().lower()
    period = dashboard_selectors.DateRange(
        data.get("date_from") or default.start, data.get("date_to") or default.end, domain
    )
    if data.get("date_from") and not data.get("date_to"):
        period = dashboard_selectors.DateRange(period.start, max(period.start, default.end), domain)
    if data and (period.end - period.start).days > dashboard_selectors.MAX_RANGE_DAYS:
        form.add_error("date_from", f"the range may span at most {dashboard_selectors.MAX_RANGE_DAYS} days.")
        period = dashboard_selectors.DateRange(default.start, default.end, domain)
    range_error = form_errors_text(form) if request.GET and form.errors else ""
    data = dashboard_cached(workspace, period, lambda: _dashboard_figures(workspace, period))
    shown = {"date_from": period.start, "date_to": period.end, "domain": period.domain}
    return render(
        request,
        "audit/dashboard.html",
        {
            "form": DateRangeForm(initial=shown) if not range_error else form,
            "range_error": range_error,
            "period": period,
            **data,
            "links": drilldown.tiles(period, staff=request.user.is_staff),
            "workspace": workspace,
            "can_calibrate": roles.is_admin(request.user),
            "nightly": nightly_selectors.nightly_report_latest(workspace=workspace),
            "labels": Label,
            "default_days": dashboard_selectors.DEFAULT_RANGE_DAYS,
            "domain_choices": claims_selectors.claim_domains(workspace=workspace),
            "domain_columns": DOMAIN_COLUMNS,
            "few_claims": constants.DASHBOARD_FEW_CLAIMS,
        },
        status=400 if range_error else 200,
    )


@login_required
def nightly_reports(request):
    """The latest nightly report in full, or the one of ``?day=YYYY-MM-DD``, and every report listed
    (each day links to its own report)."""
    workspace = _reader_workspace(request)
    reports = list(
        nightly_selectors.nightly_report_list(workspace=workspace)[: constants.UI_NIGHTLY_REPORTS_LISTED]
    )
    shown, status, error = (reports[0] if reports else None), 200, ""
    if request.GET.get("day"):
        try:
            day = dt.date.fromisoformat(request.GET["day"])
        except ValueError:
            error, status = f"day: {request.GET['day']!r} is no date (YYYY-MM-DD).", 400
        else:
            shown = nightly_selectors.nightly_report_for_date(workspace=workspace, day=day)
            if shown is None:
                error, status = f"day: no nightly report for {day.isoformat()}.", 404
    return render(
        request,
        "audit/nightly_reports.html",
        {
            "reports": reports,
            "latest": shown,
            "is_latest": bool(reports) and shown == reports[0],
            "error": error,
        },
        status=status,
    )
