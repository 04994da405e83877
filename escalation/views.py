"""HTML pages of the escalation queue: the queue, one case, and the actions on a case.

Reads go through ``escalation.selectors``; every action validates a small form and calls the
one service of that transition (``escalation.services``), then redirects back. Domain errors
(a concurrent action got there first, a transition not allowed, a role not permitted) come
back as a message on the page and change nothing.
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

from audit import constants, roles

from . import selectors, services
from .errors import EscalationError
from .forms import AssignForm, EscalateForm, NoteForm, ReasonForm, ResolveForm
from .models import CaseStatus, ReviewCase, SlaState
from .policy import TIER_NAMES, TIERS


def _require_reader(request):
    if not roles.can_read(request.user):
        raise PermissionDenied("Your account has no role that may read the queue.")


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
    return render(request, "escalation/queue.html", {
        "page": page,
        "query": params.urlencode(),
        "params": params,
        "tiers": [(t, TIER_NAMES[t]) for t in TIERS],
        "statuses": CaseStatus.choices,
        "sla_states": SlaState.choices,
        "now": timezone.now(),
        "can_review": roles.can_review(request.user),
    })


@login_required
def case_detail(request, ticket: str):
    _require_reader(request)
    case = selectors.case_get(user=request.user, ticket=ticket)
    if case is None:
        raise Http404("No such case in your workspace.")
    return render(request, "escalation/case_detail.html", {
        "case": case,
        "events": list(case.events.all()),
        "evidence": list(case.claim.evidence.all()),
        "now": timezone.now(),
        "can_review": roles.can_review(request.user),
        "assign_form": AssignForm(),
        "escalate_form": EscalateForm(),
        "resolve_form": ResolveForm(),
        "note_form": NoteForm(),
        "last_tier": case.tier >= TIERS[-1],
    })


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
    "assign": (AssignForm, lambda user, case, data: services.case_assign(case=case, actor=user, owner=data["owner"]),
               "assigned"),
    "escalate": (EscalateForm, lambda user, case, data: services.case_escalate(case=case, actor=user, reason=data["note"]),
                 "escalated to the next tier"),
    "pause": (ReasonForm, lambda user, case, data: services.case_pause(case=case, actor=user, reason=data["reason"]),
              "paused; its clock is stopped"),
    "resume": (NoteForm, lambda user, case, data: services.case_resume(case=case, actor=user, reason=data.get("note", "")),
               "resumed; its clock runs again"),
    "resolve": (ResolveForm, lambda user, case, data: services.case_resolve(
        case=case, actor=user, decision=data["decision"], rationale=data["rationale"]), "resolved"),
}


def _errors_text(errors: dict) -> str:
    return " ".join(f"{field}: {' '.join(str(e) for e in errs)}" for field, errs in errors.items())


@login_required
def case_action(request, ticket: str, action: str):
    """Validate the action's form, call its service, report and redirect (400 naming the field on bad input)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not roles.can_review(request.user):
        raise PermissionDenied("Your account has no reviewer role.")
    case = selectors.case_get(user=request.user, ticket=ticket)
    if case is None:
        raise Http404("No such case in your workspace.")
    form_class, perform, done = ACTIONS[action]
    form = form_class(request.POST)
    if not form.is_valid():
        return _bad_request(request, f"{case.ticket} was not changed. {_errors_text(form.errors)}")
    try:
        perform(request.user, case, form.cleaned_data)
    except ValidationError as exc:
        return _bad_request(request, f"{case.ticket} was not changed. {_errors_text(exc.message_dict)}")
    except EscalationError as exc:
        messages.error(request, f"{case.ticket} was not changed: {exc}")
    else:
        messages.success(request, f"{case.ticket} {done}.")
    return _back(request, case)


def _bad_request(request, message: str):
    return render(request, "audit/bad_request.html", {"message": message}, status=400)
