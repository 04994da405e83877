"""After a single action, focus moves to the message that reports it, which is announced: the
message is moved into a live region that is empty at load (headless Chromium)."""

from __future__ import annotations

import pytest

from tests.ui.conftest import build_answer, login, open_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = "() => document.activeElement && document.activeElement.id"


def test_after_acknowledging_focus_lands_on_the_announced_message(
    browser_page, live_server, analyst, workspace
):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    page = browser_page
    login(page, live_server, analyst, f"/escalations/{case.ticket}/")
    # the region is there and empty before any action
    assert page.evaluate("() => document.getElementById('messages').textContent.trim()") == ""
    page.click("#form-acknowledge button")
    page.wait_for_function(FOCUSED + " === 'messages'")
    region = page.locator("#messages")
    assert (region.get_attribute("role"), region.get_attribute("aria-live")) == ("status", "polite")
    assert region.inner_text().strip() == f"{case.ticket} acknowledged."
    assert page.locator(".messages").count() == 1  # moved into the region, not copied


def test_a_refused_action_is_announced_assertively_and_focused(browser_page, live_server, analyst, workspace):
    from escalation import services

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    page = browser_page
    login(page, live_server, analyst, f"/escalations/{case.ticket}/")
    services.case_acknowledge(case=case, actor=None)  # someone else got there first
    page.click("#form-acknowledge button")
    page.wait_for_function(FOCUSED + " === 'messages'")
    assert page.locator("#messages").get_attribute("aria-live") == "assertive"
    assert f"{case.ticket} was not changed" in page.locator("#messages").inner_text()


def test_escalating_asks_only_once_the_form_is_complete_and_a_refusal_changes_nothing(
    browser_page, live_server, analyst, workspace
):
    from escalation.models import ReviewCase

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    page = browser_page
    dialogs: list[str] = []
    answers = iter([False, True])  # the first confirmation is refused, the second accepted
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept() if next(answers) else d.dismiss()))
    login(page, live_server, analyst, f"/escalations/{case.ticket}/")
    page.click("#form-escalate button")  # no reason: nothing is asked, the server says what is missing
    page.wait_for_selector("#error-summary")
    assert dialogs == []
    page.fill("#esc-note", "Needs a pharmacologist.")
    page.click("#form-escalate button")
    page.wait_for_function("() => !document.querySelector('#form-escalate button').disabled")
    assert len(dialogs) == 1 and "not moved back down" in dialogs[0]
    assert ReviewCase.objects.get(pk=case.pk).tier == 1
    page.fill("#esc-note", "Needs a pharmacologist.")
    page.click("#form-escalate button")
    page.wait_for_function(FOCUSED + " === 'messages'")
    assert len(dialogs) == 2 and ReviewCase.objects.get(pk=case.pk).tier == 2


def test_reopening_a_resolved_case_asks_nothing_since_it_can_be_resolved_again(
    browser_page, live_server, analyst, workspace
):
    from escalation import services

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="Checked.")
    page = browser_page
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page, live_server, analyst, f"/escalations/{case.ticket}/")
    page.fill("#reopen-reason", "A newer source disagrees.")
    page.click("#form-reopen button")
    page.wait_for_function(FOCUSED + " === 'messages'")
    assert dialogs == [] and "reopened" in page.locator("#messages").inner_text()
