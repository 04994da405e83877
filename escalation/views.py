"""HTML pages of the escalation queue: the queue, one case, and the actions on a case.

Reads go through ``escalation.selectors``; every action validates a small form and calls the
one service of that transition (``escalation.services``), then redirects back. Bad input (an
empty required note, an owner who may not own the case) re-renders the case page with the
error beside the form and what was typed kept (HTTP 400); domain errors (a concurrent action
got there first, a transition not allowed, a role not permitted) come back as a message on the
page. Either way nothing changes.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme

from audit import constants, presentation, roles

from . import display, selectors, services
from .errors import EscalationError
from .forms import AssignForm, EscalateForm, NoteForm, ReasonForm, ReopenForm, RequiredNoteForm, ResolveForm
from .models import CaseStatus, ReviewCase, SlaState
from .policy import TIER_NAMES, TIERS


def _require_reader(request):
    if not roles.can_read(request.user):
        raise PermissionDenied("Your account has no role that may read the queue.")


def _with_clocks(cases, now, events_by_case=None) -> None:
    """Attach ``clock`` (escalation.display.countdown) and ``ack`` to each case (calendars read once per workspace)."""
    calendars = {}
    for case in cases:
        if case.workspace_id not in calendars:
            calendars[case.workspace_id] = selectors.calendar_for_workspace(case.workspace)
        calendar = calendars[case.workspace_id]
        case.clock = display.countdown(case, calendar, now)
        events = (events_by_case or {}).get(case.pk)
        case.ack = display.acknowledgement(case, events, calendar) if events is not None else None


@login_required
def queue(request):
    _require_reader(request)
    params = request.GET.copy()
    params.pop("page", None)
    if "open" not in params and "status" not in params:
        params["open"] = "true"
    try:
        cases = selectors.case_list(user=request.user, filters=params, request=request)
    except ValidationError as exc:
        return _bad_request(request, _errors_text(exc.message_dict))
    page = Paginator(cases, constants.UI_CASES_PER_PAGE).get_page(request.GET.get("page"))
    now = timezone.now()
    _with_clocks(page.object_list, now)
    statuses = params.getlist("status")
    return render(
        request,
        "escalation/queue.html",
        {
            "page": page,
            "query": params.urlencode(),
            "params": params,
            "tiers": [(t, TIER_NAMES[t]) for t in TIERS],
            "statuses": CaseStatus.choices,
            "sla_states": SlaState.choices,
            "now": now,
            "can_review": roles.can_review(request.user),
            # the export link exports what the list shows: open cases, resolved ones, or every case
            "export_scope": (
                "resolved"
                if statuses == [CaseStatus.RESOLVED] or params.get("open") == "false"
                else "any"
                if statuses and CaseStatus.RESOLVED in statuses
                else "open"
            ),
        },
    )


def _case_page(request, case: ReviewCase, *, errors: dict | None = None, status: int = 200):
    now = timezone.now()
    events = list(case.events.all())
    _with_clocks([case], now, {case.pk: events})
    views = presentation.evidence_views(
        case.claim, case.claim.evidence.all(), min_alignment=constants.UI_EVIDENCE_MIN_ALIGNMENT
    )
    posted = request.POST if errors else {}
    return render(
        request,
        "escalation/case_detail.html",
        {
            "case": case,
            "events": events,
            "evidence": [v for v in views if v["bears"]],
            "unrelated": [v for v in views if not v["bears"]],
            "now": now,
            "can_review": roles.can_review(request.user),
            "owners": selectors.case_owner_choices(case),
            "resolve_form": ResolveForm(),
            "decisions": ReviewCase.Decision.choices,
            "last_tier": case.tier >= TIERS[-1],
            "errors": errors or {},
            "posted": posted,
            "tier_clock": display.clock_word(case.tier) or "wall-clock",
        },
        status=status,
    )


@login_required
def case_detail(request, ticket: str):
    _require_reader(request)
    case = selectors.case_get(user=request.user, ticket=ticket)
    if case is None:
        raise Http404("No such case in your workspace.")
    return _case_page(request, case)


def _back(request, case: ReviewCase):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("case-detail", ticket=case.ticket)


def _acknowledge(user, case, data):
    return services.case_acknowledge(case=case, actor=user, note=data.get("note", ""))


# action name -> (form of its inputs, call of its one service, what the message says was done)
ACTIONS = {
    "acknowledge": (NoteForm, _acknowledge, "acknowledged"),
    "assign": (
        AssignForm,
        lambda user, case, data: services.case_assign(case=case, actor=user, owner=data["owner"]),
        "assigned",
    ),
    "note": (
        RequiredNoteForm,
        lambda user, case, data: services.case_note(case=case, actor=user, note=data["note"]),
        "has a new note",
    ),
    "escalate": (
        EscalateForm,
        lambda user, case, data: services.case_escalate(case=case, actor=user, reason=data["note"]),
        "escalated to the next tier",
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


def _errors_text(errors: dict) -> str:
    return " ".join(f"{field}: {' '.join(str(e) for e in errs)}" for field, errs in errors.items())


@login_required
def case_action(request, ticket: str, action: str):
    """Validate the action's form, call its service, report and redirect (bad input: the case page, 400)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not roles.can_review(request.user):
        raise PermissionDenied("Your account has no reviewer role.")
    case = selectors.case_get(user=request.user, ticket=ticket)
    if case is None:
        raise Http404("No such case in your workspace.")
    form_class, perform, done = ACTIONS[action]
    kwargs = {"owners": selectors.case_owner_choices(case)} if form_class is AssignForm else {}
    form = form_class(request.POST, **kwargs)
    if not form.is_valid():
        return _case_page(request, case, errors={action: _messages(form.errors)}, status=400)
    try:
        perform(request.user, case, form.cleaned_data)
    except ValidationError as exc:
        return _case_page(request, case, errors={action: _messages(exc.message_dict)}, status=400)
    except EscalationError as exc:
        messages.error(request, f"{case.ticket} was not changed: {exc}")
    else:
        messages.success(request, f"{case.ticket} {done}.")
    return _back(request, case)


def _messages(errors: dict) -> list[str]:
    return [" ".join(str(e) for e in errs) for errs in errors.values()]


def _bad_request(request, message: str):
    return render(request, "audit/bad_request.html", {"message": message}, status=400)
