"""Issue 16 in a real browser (headless Chromium from Debian, Playwright): answers, evidence,
the case page, wording, the dashboard, the settings page and phone widths."""

from __future__ import annotations

import pytest

from tests.ui.conftest import build_answer, login, open_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A real audit behind a click: the first one in a process loads the embedding model (shared cores).
AUDIT_TIMEOUT_MS = 120_000


def test_an_analyst_submits_an_answer_with_two_passages_and_lands_on_its_page(
    browser_page, live_server, analyst, workspace
):
    from audit.models import Answer

    page = browser_page
    login(page, live_server, analyst, "/answers/")
    page.click("#new-answer")
    page.fill("#id_query", "What does LTP require?")
    page.fill(
        "#id_answer",
        "Long-term potentiation requires NMDA receptor activation [1]. It was first described in 1973 [2].",
    )
    page.select_option("#id_mode", "audit-local")
    page.fill("#id_passage-0-title", "Synaptic Plasticity")
    page.fill("#id_passage-0-text", "LTP at CA1 synapses is dependent on NMDA receptor activation.")
    page.fill("#id_passage-1-text", "LTP was first described by Bliss and Lomo in 1973.")
    page.click("#add-passage")  # a third block appears, numbered [3], and stays empty
    assert page.locator("[data-passage]").count() == 3
    assert page.locator("[data-passage] h3").nth(2).text_content() == "Passage [3]"
    page.click("#submit-answer", no_wait_after=True)
    page.wait_for_selector("#answer-text .claim-mark", timeout=AUDIT_TIMEOUT_MS)
    answer = Answer.objects.get()
    assert page.url.endswith(f"/answers/{answer.public_id}/")
    assert [c["id"] for c in answer.contexts] == ["1", "2"]


def test_audit_now_from_the_list_opens_the_audited_copy(browser_page, live_server, analyst, workspace):
    from audit.models import Answer

    text = "Long-term potentiation requires NMDA receptor activation."
    normal = Answer.objects.create(
        workspace=workspace,
        query="What does LTP require?",
        text=text,
        original_text=text,
        mode="normal",
        contexts=[{"id": "1", "text": text}],
    )
    page = browser_page
    login(page, live_server, analyst, "/answers/")
    row = page.locator(f"tr[data-answer='{normal.public_id}']")
    assert "not audited" in row.inner_text()
    row.get_by_role("button", name="Audit now").click(no_wait_after=True)
    page.wait_for_selector("#answer-text .claim-mark", timeout=AUDIT_TIMEOUT_MS)
    audited = Answer.objects.exclude(pk=normal.pk).get()
    assert page.url.endswith(f"/answers/{audited.public_id}/")
    assert f"Audited {normal.public_id} as {audited.public_id}" in page.locator(".messages").inner_text()


def test_a_reviewer_acknowledges_notes_assigns_resolves_and_reopens_a_case_without_leaving_it(
    browser_page, live_server, analyst, expert, workspace
):
    from escalation.models import ReviewCase

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    page = browser_page
    page.on("dialog", lambda dialog: dialog.accept())
    login(page, live_server, analyst, f"/escalations/{case.ticket}/")
    page.click("#form-acknowledge button")
    page.wait_for_selector(".cd-ack")
    assert (
        page.locator(".cd-ack")
        .inner_text()
        .startswith("acknowledged in under 1 min — on time; the clock to resolve runs")
    )
    page.fill("#note-text", "Asked the knowledge-base owner.")
    page.click("#form-note button")
    assert "Asked the knowledge-base owner." in page.locator(".events").inner_text()
    # an owner the server refuses (picked, then taken out of the workspace) comes back inline, page kept
    page.select_option("#assign-owner", "expert1")
    expert.theoria_profile.workspace = type(workspace).objects.create(name="Elsewhere", slug="elsewhere")
    expert.theoria_profile.save()
    page.click("#form-assign button")
    assert page.locator("#form-assign .error").inner_text().startswith("“expert1” cannot own this case")
    assert page.locator("h1").inner_text().startswith(case.ticket)
    page.select_option("#id_decision", "confirm")
    page.fill("#res-rationale", "Three layers, per the anatomy text.")
    page.check("#form-resolve input[name=confirm]")
    page.click("#form-resolve button")
    page.wait_for_selector("#form-reopen")
    page.fill("#reopen-reason", "A newer anatomy text disagrees.")
    page.click("#form-reopen button")
    page.wait_for_selector("#form-resolve")
    case.refresh_from_db()
    assert case.status == ReviewCase.Status.OPEN
    assert "Reopened" in page.locator(".events").inner_text()


PHONE = {"width": 390, "height": 844}


def test_every_page_fits_a_390_px_phone_without_sideways_scrolling(
    browser_page, live_server, admin_user_obj, workspace
):
    from audit.models import Answer

    answer, claims = build_answer(workspace)
    case = open_case(claims[1])
    normal = Answer.objects.create(
        workspace=workspace,
        query="Q?",
        text="A normal answer.",
        original_text="A normal answer.",
        mode="normal",
    )
    page = browser_page
    login(page, live_server, admin_user_obj, "/")
    page.set_viewport_size(PHONE)
    paths = [
        "/",
        "/dashboard/",
        "/escalations/",
        f"/escalations/{case.ticket}/",
        "/answers/",
        "/answers/new/",
        f"/answers/{answer.public_id}/",
        f"/answers/{normal.public_id}/",
        "/claims/",
        f"/claims/{claims[1].pk}/",
        "/reports/nightly/",
        f"/admin/audit/workspace/{workspace.pk}/settings/",
    ]
    too_wide = {}
    for path in paths:
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            too_wide[path] = width
    assert too_wide == {}
