"""Bulk actions, unassigning, admins as owners, double submits and the queue's order (services and selectors)."""

from __future__ import annotations

import pytest

from audit import roles
from escalation import selectors, services
from escalation.errors import AlreadyDone, CaseConflict, TransitionNotAllowed
from escalation.models import ReviewCase, ReviewEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_cases(make_answer):
    answer = make_answer([("REFUTED", 0.1), ("REFUTED", 0.2), ("NEI", 0.3)])
    return services.cases_open_for_answer(answer=answer)


def test_a_bulk_acknowledgement_goes_through_the_single_case_service_and_reports_each_row(
    three_cases, analyst, make_user
):
    other = make_user("analyst2", roles.L1_ANALYST)
    first, second, third = three_cases
    services.case_acknowledge(case=ReviewCase.objects.get(pk=second.pk), actor=other)  # second is taken
    outcomes = services.cases_bulk_apply(cases=three_cases, actor=analyst, action="acknowledge")
    assert [(o.ticket, o.done) for o in outcomes] == [
        (first.ticket, True),
        (second.ticket, False),
        (third.ticket, True),
    ]
    assert "changed by someone else (now acknowledged by analyst2" in outcomes[1].message
    owners = dict(ReviewCase.objects.values_list("ticket", "owner__username"))
    assert owners == {first.ticket: "analyst1", second.ticket: "analyst2", third.ticket: "analyst1"}
    assert ReviewEvent.objects.filter(kind="acknowledged", actor=analyst).count() == 2


def test_a_bulk_assignment_refuses_a_case_the_owner_may_not_work_on_its_own_row(three_cases, lead, analyst):
    first = three_cases[0]
    services.case_escalate(case=first, actor=lead, reason="needs an expert")  # now tier 2
    outcomes = services.cases_bulk_apply(cases=three_cases, actor=lead, action="assign", owner=analyst)
    assert [o.done for o in outcomes] == [False, True, True]
    assert "L2 domain expert" in outcomes[0].message
    assert outcomes[1].message == "assigned to analyst1"


def test_a_bulk_action_needs_an_action_it_knows_and_an_owner_to_assign_to(three_cases, analyst):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        services.cases_bulk_apply(cases=three_cases, actor=analyst, action="resolve")
    with pytest.raises(ValidationError):
        services.cases_bulk_apply(cases=three_cases, actor=analyst, action="assign", owner=None)


def test_unassigning_puts_a_case_back_in_the_unassigned_pile_with_an_event_naming_who_had_it(case, analyst):
    services.case_acknowledge(case=case, actor=analyst)
    services.case_unassign(case=case, actor=analyst, reason="on leave")
    case.refresh_from_db()
    assert case.owner is None and case.status == "acknowledged"
    event = case.events.get(kind="unassigned")
    assert (event.details, event.reason) == ({"from": "analyst1", "to": None}, "on leave")
    with pytest.raises(TransitionNotAllowed, match="has no owner"):
        services.case_unassign(case=case, actor=analyst)


def test_an_admin_can_be_assigned_and_is_offered_as_an_owner_at_every_tier(
    case, admin_user_obj, analyst, lead
):
    services.case_escalate(case=case, actor=lead, reason="to the experts")
    services.case_escalate(case=case, actor=lead, reason="to the lead")
    choices = selectors.case_owner_choices(case)
    assert [(role, [u.username for u in users]) for role, users in choices] == [
        (roles.L3_LEAD, ["lead1"]),
        (roles.ADMIN, ["admin1"]),
    ]
    services.case_assign(case=case, actor=lead, owner=admin_user_obj)
    case.refresh_from_db()
    assert case.owner == admin_user_obj


def test_a_double_submit_that_succeeded_once_says_so_instead_of_blaming_someone_else(case, analyst):
    seen = ReviewCase.objects.get(pk=case.pk)
    services.case_acknowledge(case=ReviewCase.objects.get(pk=case.pk), actor=analyst)
    with pytest.raises(AlreadyDone, match=rf"You already acknowledged {case.ticket} at \d\d:\d\d:\d\d UTC"):
        services.case_acknowledge(case=seen, actor=analyst)
    assert case.events.filter(kind="acknowledged").count() == 1


def test_a_second_request_after_another_change_is_still_a_conflict(case, analyst, make_user):
    other = make_user("analyst2", roles.L1_ANALYST)
    seen = ReviewCase.objects.get(pk=case.pk)
    services.case_acknowledge(case=ReviewCase.objects.get(pk=case.pk), actor=other)
    with pytest.raises(CaseConflict, match="changed by someone else"):
        services.case_acknowledge(case=seen, actor=analyst)


def test_a_double_resolution_by_the_same_reviewer_is_reported_as_already_done(case, analyst):
    seen = ReviewCase.objects.get(pk=case.pk)
    services.case_resolve(
        case=ReviewCase.objects.get(pk=case.pk), actor=analyst, decision="confirm", rationale="ok"
    )
    with pytest.raises(AlreadyDone, match="You already resolved"):
        services.case_resolve(case=seen, actor=analyst, decision="confirm", rationale="ok")


def test_the_queue_orders_by_time_to_breach_then_risk_or_by_risk_on_request(three_cases, analyst):
    from datetime import timedelta

    first, second, third = three_cases
    # the NEI case (lowest risk) is the one closest to its deadline; the first is breached
    ReviewCase.objects.filter(pk=third.pk).update(due_at=first.due_at - timedelta(minutes=5))
    ReviewCase.objects.filter(pk=first.pk).update(due_at=first.due_at - timedelta(hours=2))
    ReviewCase.objects.filter(pk=second.pk).update(due_at=None, clock_started_at=None)  # clock stopped
    by_deadline = selectors.case_list(user=analyst, filters={"order": "deadline"})
    assert [c.ticket for c in by_deadline] == [first.ticket, third.ticket, second.ticket]
    by_risk = selectors.case_list(user=analyst, filters={"order": "risk"})
    assert [c.ticket for c in by_risk][-1] == third.ticket


def test_the_queue_filters_mine_unassigned_and_cases_resolved_or_breached_in_a_period(three_cases, analyst):
    from django.test import RequestFactory
    from django.utils import timezone

    first, second, _ = three_cases
    services.case_acknowledge(case=first, actor=analyst)
    services.case_resolve(case=second, actor=analyst, decision="confirm", rationale="fine")
    request = RequestFactory().get("/")
    request.user = analyst
    today = timezone.now().date().isoformat()

    def tickets(**filters):
        return [c.ticket for c in selectors.case_list(user=analyst, filters=filters, request=request)]

    assert tickets(owner="me", open="true") == [first.ticket]
    assert len(tickets(owner="none", open="true")) == 1
    assert tickets(resolved_from=today, resolved_to=today) == [second.ticket]
    assert tickets(decision="confirm") == [second.ticket]
    assert tickets(breached_from=today) == []


def test_a_repeated_request_read_after_the_first_succeeded_is_also_already_done(case, analyst):
    services.case_acknowledge(case=case, actor=analyst)
    with pytest.raises(AlreadyDone, match="You already acknowledged"):
        services.case_acknowledge(case=ReviewCase.objects.get(pk=case.pk), actor=analyst)


def test_acknowledging_a_case_someone_else_acknowledged_is_still_refused_as_not_allowed(
    case, analyst, make_user
):
    other = make_user("analyst2", roles.L1_ANALYST)
    services.case_acknowledge(case=case, actor=other)
    with pytest.raises(TransitionNotAllowed, match="it is acknowledged"):
        services.case_acknowledge(case=ReviewCase.objects.get(pk=case.pk), actor=analyst)
