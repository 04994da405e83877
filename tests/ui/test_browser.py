"""The analyst pages in a real browser: headless Chromium (Debian) driven by Playwright.

Each test logs in through the login form of the live test server, as a person would.
"""

from __future__ import annotations

import csv

import pytest
from django.utils import timezone

from tests.ui.conftest import build_answer, draw_every_chart, login, open_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_draws_every_dashboard_chart(browser_page, live_server, lead, workspace):
    from audit.models import VerificationRun

    answer, claims = build_answer(workspace)
    VerificationRun.objects.filter(answer=answer).update(
        llm_calls=4, prompt_tokens=900, completion_tokens=240, llm_latency_ms=1800.0
    )
    open_case(claims[1])
    login(browser_page, live_server, lead, "/dashboard/")
    page = browser_page
    assert page.url.endswith("/dashboard/")
    keys = (
        "trust-trend",
        "label-rates",
        "sla-trend",
        "rag-score",
        "label-distribution",
        "queue-aging",
        "sla-attainment",
        "escalation-volume",
        "domains",
        "llm-usage",
    )
    # charts draw as they scroll into view: scroll through the page
    draw_every_chart(page)
    assert page.locator(".plot[data-drawn=true]").count() == len(keys)
    for key in keys:
        chart = page.locator(f"#chart-{key}")
        assert chart.locator("svg.main-svg").count() >= 1
    # the label bars carry their counts as text (1 claim of each label)
    bars = page.locator("#chart-label-distribution text.bartext")
    assert [bars.nth(i).text_content() for i in range(bars.count())] == ["1", "1", "1"]
    assert page.locator("#chart-trust-trend .gtitle").text_content() == "Trust-score trend"
    # the LLM-usage chart draws token bars and the calls line on its second axis
    llm = page.locator("#chart-llm-usage")
    assert llm.locator(".gtitle").text_content() == "LLM usage: calls and tokens per day"
    assert (
        llm.locator("g.barlayer g.trace").count() == 2 and llm.locator("g.scatterlayer g.trace").count() == 1
    )
    assert llm.locator("g.y2tick").count() >= 2
    assert page.locator("#llm-totals").inner_text().split("\n")[0].split("\t") == ["LLM calls", "4"]


def test_it_shows_a_badge_tooltip_on_hover_and_on_keyboard_focus(
    browser_page, live_server, analyst, workspace
):
    answer, claims = build_answer(workspace)
    login(browser_page, live_server, analyst, f"/answers/{answer.public_id}/")
    page = browser_page
    tip = page.locator(f"#tip-{claims[1].pk}")
    assert not tip.is_visible()
    page.hover(f"a.badge[aria-describedby='tip-{claims[1].pk}']")
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert "c2 · Refuted" in text and "P(supported) 0.08" in text and "Hippocampus Anatomy" in text
    page.keyboard.press("Escape")
    tip.wait_for(state="hidden")
    page.mouse.move(0, 0)
    # keyboard: focus the first badge with Tab from the answer text
    page.focus(f"a.badge[aria-describedby='tip-{claims[0].pk}']")
    page.locator(f"#tip-{claims[0].pk}").wait_for(state="visible")
    assert "c1 · Supported" in page.locator(f"#tip-{claims[0].pk}").inner_text()


def test_it_ticks_the_countdown_and_switches_to_the_clock_to_resolve_when_the_case_is_acknowledged(
    browser_page, live_server, analyst, workspace
):
    from escalation.models import ReviewCase

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    login(browser_page, live_server, analyst, "/escalations/")
    page = browser_page
    row = page.locator(f"tr[data-ticket='{case.ticket}']")
    countdown = row.locator(".countdown")
    assert countdown.locator(".cd-state").inner_text() == "On track"
    first = countdown.locator(".cd-time").inner_text()
    assert first.endswith("left to acknowledge") and first.startswith(("29m", "30m"))
    page.wait_for_function(
        "([sel, before]) => document.querySelector(sel).textContent !== before",
        arg=[f"tr[data-ticket='{case.ticket}'] .cd-time", first],
    )
    row.get_by_role("button", name="Acknowledge").click()
    page.wait_for_load_state("networkidle")
    assert f"{case.ticket} acknowledged." in page.locator(".messages").inner_text()
    countdown = page.locator(f"tr[data-ticket='{case.ticket}'] .countdown")
    assert countdown.locator(".cd-state").inner_text() == "On track"
    assert countdown.locator(".cd-time").inner_text().endswith("business time left to resolve")
    case.refresh_from_db()
    assert case.status == ReviewCase.Status.ACKNOWLEDGED and case.owner == analyst
    assert case.clock_phase == "resolve" and case.due_at is not None


def test_it_turns_a_countdown_at_risk_then_breached_in_the_browser(
    browser_page, live_server, analyst, workspace
):
    _, claims = build_answer(workspace)
    case = open_case(claims[2])
    assert case.at_risk_at < case.due_at
    page = browser_page
    # The page's clock starts now and is moved by hand past the at-risk instant, then past the deadline.
    page.clock.install(time=timezone.now())
    login(page, live_server, analyst, "/escalations/")
    row = f"tr[data-ticket='{case.ticket}']"
    state = page.locator(f"{row} .cd-state")
    assert state.inner_text() == "On track"

    def move_clock_past(instant):
        page.clock.fast_forward(int((instant - timezone.now()).total_seconds() * 1000) + 2000)

    move_clock_past(case.at_risk_at)
    page.wait_for_function(f"document.querySelector(\"{row} .cd-state\").textContent === 'At risk'")
    assert "left" in page.locator(f"{row} .cd-time").inner_text()
    assert "sla-row--at_risk" in page.locator(row).get_attribute("class")
    move_clock_past(case.due_at)
    page.wait_for_function(f"document.querySelector(\"{row} .cd-state\").textContent === 'Breached'")
    assert "overdue" in page.locator(f"{row} .cd-time").inner_text()
    assert "sla-row--breached" in page.locator(row).get_attribute("class")


def test_it_resolves_a_case_after_a_confirmation(browser_page, live_server, lead, workspace):
    from audit.models import Claim
    from escalation.models import ReviewCase

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    login(browser_page, live_server, lead, f"/escalations/{case.ticket}/")
    page = browser_page
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    page.select_option("#id_decision", "relabel_nei")
    page.fill("#res-rationale", "The anatomy text does not settle the layer count.")
    page.check("input[name=confirm]")
    page.get_by_role("button", name="Resolve").click()
    page.wait_for_load_state("networkidle")
    assert dialogs and case.ticket in dialogs[0]
    assert f"{case.ticket} resolved." in page.locator(".messages").inner_text()
    case.refresh_from_db()
    assert case.status == ReviewCase.Status.RESOLVED
    assert Claim.objects.get(pk=claims[1].pk).label == "NEI"


def test_it_exports_the_filtered_claims_as_a_csv_file(
    browser_page, live_server, analyst, workspace, tmp_path
):
    answer, _ = build_answer(workspace)
    build_answer(workspace, domain="cardiology")
    login(browser_page, live_server, analyst, "/claims/")
    page = browser_page
    page.select_option("#f-label", "REFUTED")
    page.fill("#f-domain", "neuroscience")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_load_state("networkidle")
    assert page.locator("#claims tbody tr").count() == 1
    with page.expect_download() as info:
        page.click("#export-csv")
    path = tmp_path / "cards.csv"
    info.value.save_as(path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [(r["answer_id"], r["claim_id"], r["label"]) for r in rows] == [
        (answer.public_id, "c2", "REFUTED")
    ]
    assert rows[0]["evidence_hashes"].startswith("sha256:")


def test_it_says_in_one_sentence_when_there_is_nothing_to_photograph(admin_user_obj, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no audited answer"):
        call_command("screenshots", out=str(tmp_path), username=admin_user_obj.username)


def test_the_dashboard_draws_a_chart_only_when_it_scrolls_into_view(
    browser_page, live_server, lead, workspace
):
    build_answer(workspace)
    page = browser_page
    plotly_fetched = "performance.getEntriesByType('resource').filter(r => r.name.includes('plotly')).length"
    page.set_viewport_size({"width": 1280, "height": 900})
    login(page, live_server, lead, "/dashboard/")
    page.wait_for_load_state("networkidle")
    # the first screen is tiles and tables: no chart script is fetched until a chart comes near
    assert page.evaluate(plotly_fetched) == 0
    assert page.evaluate("document.querySelector('#chart-trust-trend').getBoundingClientRect().top") > 900
    page.locator("#chart-trust-trend").scroll_into_view_if_needed()
    page.wait_for_selector("#chart-trust-trend[data-drawn=true]")
    assert page.get_attribute("#chart-domains", "data-drawn") is None  # far below
    assert page.evaluate(plotly_fetched) == 1
    page.locator("#chart-domains").scroll_into_view_if_needed()
    page.wait_for_selector("#chart-domains[data-drawn=true]")


def test_the_calibration_charts_tick_whole_decisions_and_keep_axis_titles_clear_of_their_titles(
    browser_page, live_server, lead, workspace
):
    from tests.learning.conftest import generate, store

    store(workspace, generate(9, seed=22), reviewer=lead)
    page = browser_page
    login(page, live_server, lead, "/dashboard/")
    keys = ("review-reliability", "review-agreement", "review-drift")
    for key in keys:
        page.locator(f"#chart-{key}").scroll_into_view_if_needed()
        page.wait_for_selector(f"#chart-{key}[data-drawn=true]")
    clashes = page.evaluate(
        """(keys) => keys.filter((key) => {
          const plot = document.getElementById("chart-" + key);
          const title = plot.querySelector(".gtitle").getBoundingClientRect();
          return Array.from(plot.querySelectorAll(".ytitle, .y2title")).some((t) => {
            const r = t.getBoundingClientRect();
            return !(r.right <= title.left || title.right <= r.left || r.bottom <= title.top || title.bottom <= r.top);
          });
        })""",
        list(keys),
    )
    assert clashes == []
    ticks = page.evaluate(
        "Array.from(document.querySelectorAll('#chart-review-agreement g.y2tick text')).map(t => t.textContent)"
    )
    assert ticks and all(t.isdigit() for t in ticks), ticks
