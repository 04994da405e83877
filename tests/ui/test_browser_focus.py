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
