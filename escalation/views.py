"""HTML pages of the escalation queue: the queue, one case, and the actions on a case.

Reads go through ``escalation.selectors``; every action validates a small form and calls the
one service of that transition (``escalation.services``), then redirects back. Bad input (an
empty required note, an owner who may not own the case) re-renders the case page with the
error beside the form and what was typed kept (HTTP 400); domain errors (a concurrent action
got there first, a transition not allowed, a role not permitted) come back as a message on the
page. Either way nothing changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    QueryDict,
    StreamingHttpResponse,
)
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme, urlencode

from audit import constants, roles
from audit.selectors.facade import claim_get, revision_proposals, workspace_for_user
from audit.services.events import AnyUser
from audit.web import presentation
from audit.web.exports import iter_csv_rows

from . import display, exports, policy, selectors, services
from .errors import AlreadyDone, EscalationError
from .forms import (
    AssignForm,
    BulkForm,
    EscalateForm,
    NoteForm,
    OpenCaseForm,
    ReasonForm,
    ReopenForm,
    RequiredNoteForm,
    ResolveForm,
)
from .models import CaseStatus, ReviewCase, ReviewEvent, SlaState
from .policy import TIER_NAMES, TIERS


def _require_reader(request: HttpRequest) -> None:
    if not roles.can_read(request.user):
        raise PermissionDenied("Your account has no role that may read the queue.")


def _with_clocks(
    cases: Iterable[Any], now: dt.datetime, events_by_case: dict[int, list[ReviewEvent]] | None = None
) -> None:
    """Attach ``clock`` (escalation.display.countdown), ``ack`` and ``breaches`` (display.breaches)
    to each case (calendars read once per workspace; the breaches of cases without their events in
    one query)."""
    cases = list(cases)
    calendars: dict[int, policy.Calendar] = {}
    if events_by_case is None:
        breached: dict[int, list[ReviewEvent]] = {}
        for event in ReviewEvent.objects.filter(
            case__in=[c.pk for c in cases], kind=ReviewEvent.Kind.BREACHED
        ).order_by("at", "id"):
            breached.setdefault(event.case_id, []).append(event)
    for case in cases:
        if case.workspace_id not in calendars:
            calendars[case.workspace_id] = selectors.calendar_for_workspace(case.workspace)
        calendar = calendars[case.workspace_id]
        case.clock = display.countdown(case, calendar, now)
        events = (events_by_case or {}).get(case.pk)
        case.ack = display.acknowledgement(case, events, calendar) if events is not None else None
        case.breaches = display.breaches(events if events is not None else breached.get(case.pk, []))


# parameters that ask for resolved cases too: without one, the queue shows open cases only
_SCOPE_PARAMS = ("open", "status", "resolved_from", "resolved_to", "decision")
BULK_SESSION_KEY = "escalation_bulk_results"


def _queue_params(request: HttpRequest) -> QueryDict:
    """The queue's filters as the list applies them: open cases and time to breach unless asked."""
    params = request.GET.copy()
    params.pop("page", None)
    if not any(params.get(key) for key in _SCOPE_PARAMS):
        params["open"] = "true"
    if not params.get("order"):
        params["order"] = "deadline"
    return params


@login_required
def queue_export(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The queue's rows as CSV, with the list's filters and order (the same query as the page)."""
    _require_reader(request)
    params = _queue_params(request)
    try:
        cases = selectors.case_list(user=request.user, filters=params, request=request)
    except ValidationError as exc:
        return _bad_request(request, _errors_text(exc.message_dict))
    response = StreamingHttpResponse(
        iter_csv_rows(exports.CSV_COLUMNS, exports.case_rows(cases)), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="escalation-cases.csv"'
    return response


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    """The queue: open cases by time to breach (``order=risk``: by risk), filtered; bulk actions."""
    _require_reader(request)
    params = _queue_params(request)
    try:
        cases = selectors.case_list(user=request.user, filters=params, request=request)
    except ValidationError as exc:
        return _bad_request(request, _errors_text(exc.message_dict))
    page = Paginator(cases, constants.UI_CASES_PER_PAGE).get_page(request.GET.get("page"))
    now = timezone.now()
    _with_clocks(page.object_list, now)
    statuses = params.getlist("status")
    can_review = roles.can_review(request.user)
    workspace = workspace_for_user(request.user)
    order_switch = params.copy()
    order_switch["order"] = "risk" if params["order"] == "deadline" else "deadline"
    return render(
        request,
        "escalation/queue.html",
        {
            "page": page,
            "query": params.urlencode(),
            "params": params,
            "order_switch": order_switch.urlencode(),
            "quick_filters": _quick_filters(params),
            "tiers": [(t, TIER_NAMES[t]) for t in TIERS],
            "statuses": CaseStatus.choices,
            "sla_states": SlaState.choices,
            "now": now,
            "can_review": can_review,
            "owners": selectors.owner_choices(workspace_id=workspace.pk) if can_review else [],
            "bulk_results": request.session.pop(BULK_SESSION_KEY, None),
            "proposals": [
                presentation.proposal_view(answer, preview=True)
                for answer in revision_proposals(workspace=workspace, limit=constants.UI_PROPOSALS_LISTED)
            ],
            "applied": _applied_filters(params),
            # the export link names what it exports: the claim cards of the open cases, the
            # resolved ones, or every case, in the domain asked; the queue's other filters are not
            # the export's (it filters claims), and the page says so beside the link
            "export_scope": (
                "resolved"
                if statuses == [CaseStatus.RESOLVED] or params.get("open") == "false"
                else "any"
                if params.get("open") == "any" or (statuses and CaseStatus.RESOLVED in statuses)
                else "open"
            ),
        },
    )


# filters a dashboard link may apply that the filter form has no field for: shown above the list,
# kept as hidden fields when the form is sent again, and removable in one click
_EXTRA_FILTERS = (
    ("opened", "opened_from", "opened_to", "Opened"),
    ("resolved", "resolved_from", "resolved_to", "Resolved"),
    ("breached", "breached_from", "breached_to", "SLA breached"),
    ("entered", "entered_from", "entered_to", "SLA clock started"),
    ("opened_at", "opened_after", "opened_before", "Opened (UTC time)"),
)


def _span(since: str, until: str) -> str:
    if since and until:
        return f"on {since}" if since == until else f"from {since} to {until}"
    return f"on or after {since}" if since else f"on or before {until}"


def _applied_filters(params: QueryDict) -> dict[str, Any]:
    """The filters in force that the form does not show: their wording, their hidden fields, and
    the link that drops them (the form's own filters kept)."""
    shown, hidden = [], []
    for _, since_key, until_key, label in _EXTRA_FILTERS:
        since, until = params.get(since_key, ""), params.get(until_key, "")
        if not (since or until):
            continue
        if since_key == "opened_after":
            shown.append(f"{label}: after {since or '…'}, at or before {until or 'now'}")
        else:
            shown.append(f"{label} {_span(since, until)}")
        hidden += [(key, params[key]) for key in (since_key, until_key) if params.get(key)]
    if params.get("entered_tier"):
        shown.append(f"SLA clock started at Level {params['entered_tier']}")
        hidden.append(("entered_tier", params["entered_tier"]))
    if params.get("entered_met") in ("true", "false"):
        shown.append("SLA met there" if params["entered_met"] == "true" else "SLA missed there (breached)")
        hidden.append(("entered_met", params["entered_met"]))
    decision = params.get("decision")
    if decision:
        label = dict(ReviewCase.Decision.choices).get(decision, decision)
        shown.append(f"Decision: {label}")
        hidden.append(("decision", decision))
    kept = params.copy()
    for key, _ in hidden:
        kept.pop(key, None)
    return {"shown": shown, "hidden": hidden, "without": kept.urlencode()}


def _quick_filters(params: QueryDict) -> list[dict[str, Any]]:
    """The one-click views above the queue: mine, unassigned, at risk, breached (each keeps the order)."""
    views = [
        ("mine", "My cases", {"owner": "me"}),
        ("unassigned", "Unassigned", {"owner": "none"}),
        ("at-risk", "At risk", {"sla_state": "at_risk"}),
        ("breached", "Breached", {"sla_state": "breached"}),
    ]
    out = []
    for key, label, query in views:
        current = all(params.get(k) == v for k, v in query.items())
        out.append(
            {
                "key": key,
                "label": label,
                "query": urlencode({**query, "order": str(params["order"])}),
                "current": current,
            }
        )
    return out


@login_required
def queue_bulk(request: HttpRequest) -> HttpResponse:
    """Acknowledge, assign or unassign the ticked cases, each through its single-case service.

    Every row is reported on its own (done, or why not); the results are shown at the top of
    the queue the request came from.
    """
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not roles.can_review(request.user):
        raise PermissionDenied("Your account has no reviewer role.")
    form = BulkForm(
        request.POST, owners=selectors.owner_choices(workspace_id=workspace_for_user(request.user).pk)
    )
    if not form.is_valid():
        results = [{"ticket": "", "done": False, "message": m} for m in _messages(form.errors)]
    else:
        data = form.cleaned_data
        tickets = data["tickets"]
        found = {c.ticket: c for c in selectors.case_list(user=request.user).filter(ticket__in=tickets)}
        cases = [found[t] for t in tickets if t in found]
        outcomes = services.cases_bulk_apply(
            cases=cases, actor=request.user, action=data["action"], owner=data.get("owner")
        )
        results = [{"ticket": o.ticket, "done": o.done, "message": o.message} for o in outcomes]
        results += [
            {"ticket": t, "done": False, "message": "not found in your workspace"}
            for t in tickets
            if t not in found
        ]
    request.session[BULK_SESSION_KEY] = results
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("escalation-queue")


# the element each (action, field) error points at on the case page; service fields named as the form's
FIELD_IDS = {
    ("acknowledge", "note"): "ack-note",
    ("assign", "owner"): "assign-owner",
    ("unassign", "note"): "unassign-note",
    ("note", "note"): "note-text",
    ("escalate", "note"): "esc-note",
    ("pause", "reason"): "pause-reason",
    ("resume", "note"): "resume-note",
    ("resolve", "decision"): "id_decision",
    ("resolve", "rationale"): "res-rationale",
    ("resolve", "confirm"): "res-confirm",
    ("reopen", "reason"): "reopen-reason",
}
FIELD_ALIASES = {("escalate", "reason"): "note", ("unassign", "reason"): "note", ("resume", "reason"): "note"}
FIELD_NAMES = {
    "note": "Note",
    "owner": "Owner",
    "reason": "Reason",
    "decision": "Decision",
    "rationale": "Rationale",
    "confirm": "Confirmation",
}


def _field_errors(action: str, errors: dict[str, Any]) -> dict[str, list[str]]:
    """{form field: [messages]} of an action, service field names mapped to the form's."""
    out: dict[str, list[str]] = {}
    for field, messages_ in errors.items():
        name = "form" if field == "__all__" else FIELD_ALIASES.get((action, field), field)
        out.setdefault(name, []).extend(str(m) for m in messages_)
    return out


def _summary(errors: dict[str, Any]) -> list[dict[str, Any]]:
    """The error summary's lines: each message, linked to its field."""
    return [
        {
            "id": FIELD_IDS.get((action, field), f"form-{action}"),
            "text": f"{FIELD_NAMES.get(field, 'This action')}: {m}",
        }
        for action, fields in errors.items()
        for field, messages_ in fields.items()
        for m in messages_
    ]


def _case_page(
    request: HttpRequest, case: ReviewCase, *, errors: dict[str, Any] | None = None, status: int = 200
) -> HttpResponse:
    now = timezone.now()
    events = list(case.events.all())
    _with_clocks([case], now, {case.pk: events})
    views = presentation.evidence_views(
        case.claim, case.claim.evidence.all(), min_alignment=constants.UI_EVIDENCE_MIN_ALIGNMENT
    )
    errors = {action: _field_errors(action, fields) for action, fields in (errors or {}).items()}
    posted = request.POST if errors else {}
    decisions = dict(ReviewCase.Decision.choices)
    return render(
        request,
        "escalation/case_detail.html",
        {
            "case": case,
            "events": [(e, *display.event_text(e, decisions)) for e in events],
            "resolutions": display.resolutions(events, decisions),
            "summary_errors": _summary(errors),
            "evidence": [v for v in views if v["bears"]],
            "unrelated": [v for v in views if not v["bears"]],
            "now": now,
            "can_review": roles.can_review(request.user),
            "owners": selectors.case_owner_choices(case),
            "resolve_form": ResolveForm(),
            "decisions": ReviewCase.Decision.choices,
            "last_tier": case.tier >= TIERS[-1],
            "errors": errors,
            "posted": posted,
            "tier_clock": display.tier_clock_text(case.tier, case.clock_phase),
            # the other claims of the case: its answer's, when one audit raised many, and re-audits'
            "joined": list(
                case.joined_claims.select_related("answer").order_by("answer_id", "span_start", "id")[
                    : constants.UI_CASES_PER_PAGE
                ]
            ),
            "joined_count": case.joined_claims.count(),
        },
        status=status,
    )


@login_required
def case_detail(request: HttpRequest, ticket: str) -> HttpResponse:
    _require_reader(request)
    case = selectors.case_get(user=request.user, ticket=ticket)
    if case is None:
        raise Http404("No such case in your workspace.")
    return _case_page(request, case)


def _back(request: HttpRequest, case: ReviewCase) -> HttpResponse:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("case-detail", ticket=case.ticket)


def _acknowledge(user: AnyUser, case: ReviewCase, data: dict[str, Any]) -> ReviewCase:
    return services.case_acknowledge(case=case, actor=user, note=data.get("note", ""))


# action name -> (form of its inputs, call of its one service, what the message says was done)
ACTIONS: dict[
    str,
    tuple[
        type[forms.Form],
        Callable[[AnyUser, ReviewCase, dict[str, Any]], Any],
        str | Callable[[ReviewCase], str],
    ],
] = {
    "acknowledge": (NoteForm, _acknowledge, "acknowledged"),
    "assign": (
        AssignForm,
        lambda user, case, data: services.case_assign(case=case, actor=user, owner=data["owner"]),
        "assigned",
    ),
    "unassign": (
        NoteForm,
        lambda user, case, data: services.case_unassign(case=case, actor=user, reason=data.get("note", "")),
        "unassigned; it is back in the unassigned pile",
    ),
    "note": (
        RequiredNoteForm,
        lambda user, case, data: services.case_note(case=case, actor=user, note=data["note"]),
        "has a new note",
    ),
    "escalate": (
        EscalateForm,
        lambda user, case, data: services.case_escalate(case=case, actor=user, reason=data["note"]),
        lambda case: (
            f"escalated to Level {case.tier}; "
            + (
                f"{case.owner.get_username()} keeps it"
                if case.owner is not None
                else "it is unassigned at its new tier"
            )
        ),
    ),
    "pause": (
        ReasonForm,
        lambda user, case, data: services.case_pause(case=case, actor=user, reason=data["reason"]),
        "paused; its clock is stopped",
    ),
    "resume": (
        NoteForm,
        lambda user, case, data: services.case_resume(case=case, actor=user, reason=data.get("note", "")),
        "resumed; its clock runs again",
    ),
    "resolve": (
        ResolveForm,
        lambda user, case, data: services.case_resolve(
            case=case, actor=user, decision=data["decision"], rationale=data["rationale"]
        ),
        "resolved",
    ),
    "reopen": (
        ReopenForm,
        lambda user, case, data: services.case_reopen(case=case, actor=user, reason=data["reason"]),
        "reopened with a fresh clock",
    ),
}


def _errors_text(errors: dict[str, Any]) -> str:
    return " ".join(f"{field}: {' '.join(str(e) for e in errs)}" for field, errs in errors.items())


@login_required
def case_action(request: HttpRequest, ticket: str, action: str) -> HttpResponse:
    """Validate the action's form, call its service, report and redirect (bad input: the case page, 400)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not roles.can_review(request.user):
        raise PermissionDenied("Your account has no reviewer role.")
    case = selectors.case_get(user=request.user, ticket=ticket)
    if case is None:
        raise Http404("No such case in your workspace.")
    form_class, perform, done = ACTIONS[action]
    kwargs: dict[str, Any] = (
        {"owners": selectors.case_owner_choices(case)} if form_class is AssignForm else {}
    )
    form = form_class(request.POST, **kwargs)
    if not form.is_valid():
        return _case_page(request, case, errors={action: form.errors}, status=400)
    try:
        outcome = perform(request.user, case, form.cleaned_data)
    except ValidationError as exc:
        return _case_page(request, case, errors={action: exc.message_dict}, status=400)
    except AlreadyDone as exc:
        messages.info(request, str(exc))
    except EscalationError as exc:
        messages.error(request, f"{case.ticket} was not changed: {exc}")
    else:
        messages.success(request, f"{case.ticket} {done(outcome) if callable(done) else done}.")
    return _back(request, case)


def _messages(errors: dict[str, Any]) -> list[str]:
    return [" ".join(str(e) for e in errs) for errs in errors.values()]


def _bad_request(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "audit/bad_request.html", {"message": message}, status=400)


@login_required
def claim_open_case(request: HttpRequest, pk: int) -> HttpResponse:
    """ "Open a case" on a claim (its card, the claims list): the moderator's escalation
    (docs/SPEC_NOTES.md), through the API's service (``services.case_open``), scoped to the caller's workspace.
    Analysts and above; an empty reason is a 400 naming the field; a claim with an open case gets a
    message naming that case."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not roles.can_review(request.user):
        raise PermissionDenied("Opening a case needs a reviewer role (L1 analyst or above).")
    workspace = workspace_for_user(request.user)
    claim = claim_get(workspace=workspace, claim_pk=pk) if workspace is not None else None
    if claim is None:
        raise Http404("No such claim in your workspace.")
    form = OpenCaseForm(request.POST)
    if not form.is_valid():
        return _bad_request(request, "reason: " + " ".join(str(e) for e in form.errors.get("reason", [])))
    try:
        case = services.case_open(claim=claim, actor=request.user, reason=form.cleaned_data["reason"])
    except ValidationError as exc:
        return _bad_request(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items()))
    except EscalationError as exc:
        messages.error(request, f"No case was opened: {exc}")
        return redirect("claim-detail", pk=claim.pk)
    messages.success(request, f"{case.ticket} opened for {claim.answer.public_id}/{claim.claim_id}.")
    return redirect("case-detail", ticket=case.ticket)
