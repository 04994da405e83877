"""Escalating a case keeps its owner unless the owner may not work the new tier; the history says which."""

from __future__ import annotations

from escalation import display, services


def _history(case):
    return [display.event_text(e) for e in case.events.order_by("at", "id")]


def test_an_escalated_case_keeps_an_owner_who_may_work_the_new_tier(case, expert):
    case = services.case_acknowledge(case=case, actor=expert)
    case = services.case_escalate(case=case, actor=expert, reason="Needs a second look")
    assert (case.tier, case.owner) == (2, expert)
    event = case.events.get(kind="escalated")
    assert (event.details["owner_from"], event.details["owner_to"], event.details["owner_change"]) == (
        "expert1",
        "expert1",
        "",
    )
    assert _history(case)[-1] == (
        "Escalated from Level 1 to Level 2",
        "Needs a second look. expert1 keeps the case",
    )


def test_an_owner_without_the_new_tiers_role_is_removed_and_the_history_says_who_and_why(case, analyst):
    case = services.case_acknowledge(case=case, actor=analyst)
    case = services.case_escalate(case=case, actor=analyst, reason="Needs a pharmacologist")
    assert (case.tier, case.owner) == (2, None)
    event = case.events.get(kind="escalated")
    assert (event.actor, event.details["owner_from"], event.details["owner_to"]) == (
        analyst,
        "analyst1",
        None,
    )
    title, detail = _history(case)[-1]
    assert title == "Escalated from Level 1 to Level 2"
    assert detail.startswith("Needs a pharmacologist. owner analyst1 removed: analyst1 does not hold the")
    assert "(Level 2)" in detail


def test_an_unowned_case_escalates_unowned_and_says_nothing_about_an_owner(case, analyst):
    case = services.case_escalate(case=case, actor=analyst, reason="Out of my depth")
    assert case.owner is None
    assert _history(case)[-1] == ("Escalated from Level 1 to Level 2", "Out of my depth")


def test_the_case_page_history_names_both_levels_the_actor_and_the_reason(client, case, expert):
    client.force_login(expert)
    client.post(f"/escalations/{case.ticket}/acknowledge", {})
    response = client.post(f"/escalations/{case.ticket}/escalate", {"note": "Dose question"}, follow=True)
    html = response.content.decode()
    assert f"{case.ticket} escalated to Level 2; expert1 keeps it." in html
    assert (
        "<strong>Escalated from Level 1 to Level 2</strong> by expert1: Dose question. expert1 keeps the case"
        in html
    )
    assert "at Level 2 by expert1: Dose" not in html and "Escalated to Level 2 at Level 2" not in html


def test_a_reason_that_ends_with_a_full_stop_is_followed_by_the_owner_without_a_second_stop(
    client, case, expert
):
    client.force_login(expert)
    client.post(f"/escalations/{case.ticket}/acknowledge", {})
    response = client.post(
        f"/escalations/{case.ticket}/escalate", {"note": "Meaning not preserved."}, follow=True
    )
    html = response.content.decode()
    assert "by expert1: Meaning not preserved. expert1 keeps the case" in html
    assert "preserved.." not in html


def test_the_assignment_of_a_case_to_its_own_owner_says_the_owner_kept_it(case, analyst):
    case = services.case_assign(case=case, actor=analyst, owner=analyst)
    case = services.case_assign(case=case, actor=analyst, owner=analyst)
    history = _history(case)
    assert history[-1] == ("analyst1 kept the case", "")
    assert not any(title == "Assigned to analyst1" and "was analyst1" in detail for title, detail in history)
