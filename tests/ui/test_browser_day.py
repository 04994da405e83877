"""The analyst's day in a real browser (headless Chromium from Debian, Playwright), at 1366 px and
390 px: my work on the home page, the queue by time to breach with bulk actions, a held revision
accepted from the answer page, errors that take the focus, phone tables and admin pages, and the
dashboard's drill-down."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tests.ui.conftest import build_answer, draw_every_chart, login, open_case
from tests.ui.test_answer_page import PROPOSED, held_answer
from tests.ui.test_pages import nightly_report_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
WIDTHS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366px", "390px"])

# For every visible table: stacked as cards (cells are blocks) or scrolling in its own box with the
# first column fixed; and no text in a cell broken inside a word (more line boxes than words).
TABLE_CHECK = """(admin) => {
  const problems = [];
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  document.querySelectorAll(admin ? "table" : "main table").forEach((table, n) => {
    if (!visible(table)) return;
    const name = table.id || table.className || ("table " + n);
    const cell = table.querySelector("tbody td");
    if (!cell) return;
    const stacked = getComputedStyle(cell).display === "block";
    const first = table.querySelector("tbody tr > :first-child");
    const scrolls = getComputedStyle(table).overflowX === "auto" && getComputedStyle(first).position === "sticky";
    if (!admin && !stacked && !scrolls) problems.push(name + ": neither stacked nor scrolling with a fixed first column");
    table.querySelectorAll("td, th").forEach((c) => {
      const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
      let node;
      while ((node = walker.nextNode())) {
        const words = node.textContent.trim().split(/\\s+/).filter(Boolean);
        if (!words.length || !visible(node.parentElement)) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const lines = new Set(Array.from(range.getClientRects()).filter(r => r.width > 1).map(r => Math.round(r.top)));
        if (lines.size > words.length) problems.push(name + ": “" + node.textContent.trim().slice(0, 30) + "” breaks inside a word");
      }
    });
  });
  return problems;
}"""


def _fits(page, viewport) -> int:
    return page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


@WIDTHS
def test_home_shows_my_work_and_a_tile_opens_the_queue_filtered_to_it(
    browser_page, live_server, analyst, workspace, viewport
):
    from escalation import services
    from escalation.models import ReviewCase

    _, claims = build_answer(workspace)
    mine, other = open_case(claims[1]), open_case(claims[2])
    services.case_acknowledge(case=mine, actor=analyst)
    ReviewCase.objects.filter(pk=other.pk).update(sla_state="at_risk")
    page = browser_page
    page.set_viewport_size(viewport)
    login(page, live_server, analyst, "/")
    assert page.locator("h1").inner_text() == "My work"
    assert page.locator("#tile-mine .kpi-value").inner_text() == "1"
    # both run a clock: mine (acknowledged) to resolve, the unassigned one to acknowledge
    assert page.locator("#next-deadlines li").count() == 2
    assert "resolve by" in page.locator("#next-deadlines").inner_text()
    assert _fits(page, viewport)
    page.click("#tile-at-risk")
    page.wait_for_url(re.compile(r"/escalations/\?sla_state=at_risk"))
    assert page.locator("tr.case-row").count() == 1
    assert page.locator("#view-at-risk").get_attribute("aria-current") == "page"


@WIDTHS
def test_the_queue_sorts_by_time_to_breach_and_a_bulk_acknowledgement_reports_each_row(
    browser_page, live_server, analyst, expert, workspace, viewport
):
    from escalation import services
    from escalation.models import ReviewCase

    cases = []
    for _ in range(2):
        _, claims = build_answer(workspace)
        cases += [open_case(claims[1]), open_case(claims[2])]
    soon = cases[3]
    ReviewCase.objects.filter(pk=soon.pk).update(due_at=cases[0].due_at - dt.timedelta(minutes=10))
    page = browser_page
    page.set_viewport_size(viewport)
    login(page, live_server, analyst, "/escalations/")
    assert page.locator("tr.case-row").first.get_attribute("data-ticket") == soon.ticket
    page.click("#order-switch")
    page.wait_for_url(re.compile(r"order=risk"))
    page.click("#order-switch")
    page.wait_for_url(re.compile(r"order=deadline"))
    # every row's button has a name of its own
    for case in cases:
        assert page.get_by_role("button", name=f"Acknowledge {case.ticket}").count() == 1
    services.case_acknowledge(case=cases[0], actor=expert)  # someone else takes one meanwhile
    for case in cases[:3]:
        page.get_by_role("checkbox", name=f"Tick {case.ticket}").check()
    assert page.locator("#bulk-count").inner_text() == "3 ticked"
    page.select_option("#bulk-action", "acknowledge")
    page.click("#bulk-apply")
    page.wait_for_selector("#bulk-results")
    assert page.evaluate("document.activeElement.id") == "bulk-results"
    results = page.locator("#bulk-results li")
    assert results.count() == 3
    assert "not changed" in page.locator(f"#bulk-results li[data-ticket='{cases[0].ticket}']").inner_text()
    assert page.locator("#bulk-results .bulk-done").count() == 2
    assert _fits(page, viewport)
    if viewport is PHONE:  # the queue stacks as cards
        assert page.evaluate("getComputedStyle(document.querySelector('#queue tbody td')).display") == "block"


@WIDTHS
def test_a_held_revision_is_rejected_without_a_reason_then_accepted_from_the_answer_page(
    browser_page, live_server, analyst, workspace, viewport
):
    answer, _ = held_answer(workspace)
    page = browser_page
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    page.set_viewport_size(viewport)
    login(page, live_server, analyst, f"/answers/{answer.public_id}/")
    proposal = page.locator("#proposal")
    assert "Revision awaiting approval" in proposal.inner_text()
    assert "“rats” where the source says “monkeys”" in proposal.inner_text()
    assert _fits(page, viewport)
    page.check(f"#decide-{answer.public_id}-reject")
    page.click(f"#decide-{answer.public_id} button")
    page.wait_for_selector("#error-summary")
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert dialogs == []  # an incomplete decision is not confirmed: the server says what is missing
    page.click("#error-summary a")
    assert page.evaluate("document.activeElement.id") == f"decide-{answer.public_id}-reason"
    assert page.get_attribute(f"#decide-{answer.public_id}-reason", "aria-invalid") == "true"
    page.check(f"#decide-{answer.public_id}-accept")
    page.fill(f"#decide-{answer.public_id}-reason", "The year is right; rats is flagged separately.")
    page.click(f"#decide-{answer.public_id} button")
    page.wait_for_selector(".messages")
    assert len(dialogs) == 1 and "the decision is final" in dialogs[0]  # a final decision asks once
    assert "was accepted: the proposed text is served" in page.locator(".messages").inner_text()
    answer.refresh_from_db()
    assert answer.revision_status == "accepted" and answer.text == PROPOSED


@WIDTHS
def test_the_answer_page_lists_its_cases_and_where_claim_text_went(
    browser_page, live_server, analyst, workspace, viewport
):
    answer, claims = build_answer(workspace)
    case = open_case(claims[1])
    page = browser_page
    page.set_viewport_size(viewport)
    login(page, live_server, analyst, f"/answers/{answer.public_id}/")
    row = page.locator(f"#answer-cases tr[data-ticket='{case.ticket}']")
    assert "Open · On track" in row.inner_text() and "L1 on-call analyst" in row.inner_text()
    assert "No claim text of this answer left Theoria." in page.locator("#external").inner_text()
    assert _fits(page, viewport)
    row.get_by_role("link", name=case.ticket).click()
    page.wait_for_url(re.compile(case.ticket))


def test_a_failed_case_action_moves_the_focus_to_the_error_summary_whose_links_lead_to_the_fields(
    browser_page, live_server, analyst, workspace
):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    page = browser_page
    page.set_viewport_size(PHONE)
    page.on("dialog", lambda dialog: dialog.accept())
    login(page, live_server, analyst, f"/escalations/{case.ticket}/")
    page.click("#form-resolve button")
    page.wait_for_selector("#error-summary")
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert page.locator("#error-summary li").count() == 2  # rationale and confirmation, both at once
    page.get_by_role("link", name=re.compile("Confirmation: Tick")).click()
    assert page.evaluate("document.activeElement.id") == "res-confirm"
    assert page.get_attribute("#res-confirm", "aria-describedby") == "res-confirm-error"
    assert _fits(page, PHONE)


def test_the_answers_list_says_a_reversed_range_inline_and_keeps_the_filters(
    browser_page, live_server, analyst, workspace
):
    build_answer(workspace)
    page = browser_page
    page.set_viewport_size(PHONE)
    login(page, live_server, analyst, "/answers/")
    page.fill("#f-q", "potentiation")
    page.fill("#f-from", "2026-02-02")
    page.fill("#f-to", "2026-01-01")
    page.click("form.filters button[type=submit]")
    page.wait_for_selector("#error-summary")
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert page.input_value("#f-q") == "potentiation" and page.input_value("#f-from") == "2026-02-02"
    assert page.locator("tr.answer-row").count() == 1
    assert _fits(page, PHONE)


def test_a_submit_button_says_it_is_busy_and_cannot_be_pressed_twice(
    browser_page, live_server, analyst, workspace
):
    page = browser_page
    login(page, live_server, analyst, "/answers/new/")
    page.fill("#id_query", "What does LTP require?")
    page.fill("#id_answer", "Long-term potentiation requires NMDA receptor activation.")
    page.select_option("#id_mode", "normal")
    held = []  # the POST is held (never answered) while the page is looked at
    page.route(
        "**/answers/new/",
        lambda route: route.continue_() if route.request.method == "GET" else held.append(route),
    )
    state = page.evaluate(
        """async () => {
      const form = document.getElementById('answer-form'), button = document.getElementById('submit-answer');
      form.requestSubmit(button);
      await new Promise((r) => setTimeout(r, 50));
      const first = {text: button.textContent, disabled: button.disabled, busy: form.getAttribute('aria-busy')};
      let second = true;
      window.addEventListener('submit', (e) => { second = !e.defaultPrevented; }, {once: true});
      form.requestSubmit();  // a second press while the first is on its way
      return {...first, second};
    }"""
    )
    assert "Auditing" in state["text"] and state["disabled"] and state["busy"] == "true"
    assert state["second"] is False
    page.wait_for_timeout(300)
    assert len(held) == 1


@pytest.mark.slow
def test_every_table_on_a_phone_stacks_or_scrolls_in_its_box_and_no_word_is_broken_at_either_width(
    browser_page, live_server, admin_user_obj, workspace
):
    from django.utils import timezone

    answer, claims = build_answer(workspace)
    case = open_case(claims[1])
    nightly_report_of(workspace, claims[2], timezone.now().date())
    held, _ = held_answer(workspace)
    page = browser_page
    login(page, live_server, admin_user_obj, "/")
    problems = {}
    for path in [
        "/",
        "/escalations/",
        f"/escalations/{case.ticket}/",
        "/answers/",
        f"/answers/{answer.public_id}/",
        f"/answers/{held.public_id}/",
        "/claims/",
        f"/claims/{claims[1].pk}/",
        "/reports/nightly/",
        "/dashboard/",
        "/answers/new/",
        # a queue drilled from the dashboard: its extra filters are listed above it
        "/escalations/?entered_tier=1&entered_from=2020-01-01&entered_to=2099-12-31&open=any",
    ]:
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            page.goto(live_server.url + path)
            page.wait_for_load_state("networkidle")
            if path == "/dashboard/":
                draw_every_chart(page)  # charts draw as they scroll into view
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            # on a phone every table stacks or scrolls in its box; at any width no cell breaks a word
            found = page.evaluate(TABLE_CHECK, viewport is DESKTOP)
            if not _fits(page, viewport):
                found.append(f"page is {page.evaluate('document.documentElement.scrollWidth')} px wide")
            if found:
                problems[f"{path} at {viewport['width']} px"] = found
    assert problems == {}


@pytest.mark.slow
def test_the_admin_pages_fit_a_390_px_phone(browser_page, live_server, admin_user_obj, workspace):
    from audit.models import CalibrationVersion, ExternalCall

    answer, claims = build_answer(workspace)
    open_case(claims[1])
    # an object named by a long URL: its title and breadcrumbs were 533 px wide on a phone
    call = ExternalCall.objects.create(
        workspace=workspace,
        answer=answer,
        claim=claims[2],
        provider="pubmed",
        url="https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi?db=pubmed&term=ltp+first+described",
        query="ltp first described",
        status="failed",
        failure_reason="dns",
    )
    # the settings page's calibration versions table (605 px wide on a phone before issue 35)
    for number, status in ((1, "inactive"), (2, "declined"), (3, "active")):
        CalibrationVersion.objects.create(
            workspace=workspace,
            number=number,
            status=status,
            judge="features",
            judge_version="features:2026-11-stacker-v3",
            depth="full",
            params={"threshold": 0.71},
            metrics={
                "before": {"bacc": 0.701, "ece": 0.214},
                "after": {"bacc": 0.734, "ece": 0.088},
                "reason": "balanced accuracy rose by 0.033 and ECE fell by 0.126 on held-out answers",
            },
            n_examples=140,
            fitted_by="nightly_calibration",
        )
    page = browser_page
    page.set_viewport_size(PHONE)
    login(page, live_server, admin_user_obj, "/admin/")
    too_wide = {}
    broken = {}
    for path in [
        "/admin/",
        f"/admin/audit/workspace/{workspace.pk}/settings/",
        "/admin/audit/workspace/",
        f"/admin/audit/workspace/{workspace.pk}/change/",
        "/admin/audit/answer/",
        "/admin/escalation/reviewcase/",
        "/admin/audit/claim/",
        "/admin/audit/externalcall/",
        "/admin/audit/calibrationversion/",
        "/admin/audit/reviewedexample/",
        f"/admin/audit/externalcall/{call.pk}/change/",
        f"/admin/audit/externalcall/{call.pk}/history/",
        "/admin/audit/answer/add/",  # refused (403): the error pages were 980 px wide, with no viewport
        "/admin/no-such-page/",  # 404
    ]:
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            too_wide[path] = width
        if words := page.evaluate(TABLE_CHECK, True):  # lists scroll in their box; no cell breaks a word
            broken[path] = words
    assert too_wide == {} and broken == {}


def test_the_settings_page_names_every_bad_field_and_takes_the_focus(
    browser_page, live_server, admin_user_obj, workspace
):
    page = browser_page
    page.set_viewport_size(PHONE)
    login(page, live_server, admin_user_obj, f"/admin/audit/workspace/{workspace.pk}/settings/")
    page.fill("#id_t__sla_at_risk_share", "0")
    page.fill("#id_t__audit_score_threshold", "1.7")
    page.click("input[name=_save]")
    page.wait_for_selector("#error-summary")
    assert page.evaluate("document.activeElement.id") == "error-summary"
    text = page.locator("#error-summary").inner_text()
    assert "2 fields need another value" in text and "Must be above 0" in text and "between 0 and 1" in text
    assert page.get_attribute("#id_t__sla_at_risk_share", "aria-invalid") == "true"
    assert _fits(page, PHONE)


@WIDTHS
def test_a_dashboard_chart_point_opens_its_list_and_each_chart_has_a_data_table(
    browser_page, live_server, analyst, workspace, viewport
):
    build_answer(workspace)
    page = browser_page
    page.set_viewport_size(viewport)
    login(page, live_server, analyst, "/dashboard/")
    draw_every_chart(page)  # charts draw as they scroll into view
    assert page.locator(".plot[data-drawn=true]").count() >= 9
    tables = page.locator("details.chart-data")
    assert tables.count() >= 9
    assert _fits(page, viewport)
    if True:  # at either width: no legend over a title, no tick labels on top of each other
        overlaps = page.evaluate(
            """() => {
          const hit = (a, b) => !(a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top);
          const out = [];
          document.querySelectorAll('.plot[data-drawn=true]').forEach((plot) => {
            const title = plot.querySelector('.gtitle'), legend = plot.querySelector('.legend');
            if (title && legend && hit(title.getBoundingClientRect(), legend.getBoundingClientRect())) out.push(plot.id + ': legend over title');
            const ticks = Array.from(plot.querySelectorAll('.xtick text')).map(t => t.getBoundingClientRect()).filter(r => r.width);
            for (let i = 1; i < ticks.length; i++) if (hit(ticks[i - 1], ticks[i])) { out.push(plot.id + ': x ticks collide'); break; }
          });
          return out;
        }"""
        )
        assert overlaps == []
    bar = page.locator("#chart-label-distribution .point path").first
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    page.mouse.click(
        box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    )  # Plotly reads the click off its drag layer
    page.wait_for_url(re.compile(r"/claims/\?label=SUPPORTED"))
    assert page.locator("#claims tbody tr").count() == 1
