"""Issue 16 in a real browser (headless Chromium from Debian, Playwright): answers, evidence,
the case page, wording, the dashboard, the settings page and phone widths."""

from __future__ import annotations

import pytest

from tests.ui.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_analyst_submits_an_answer_with_two_passages_and_lands_on_its_page(browser_page, live_server, analyst,
                                                                             workspace):
    from audit.models import Answer

    page = browser_page
    login(page, live_server, analyst, "/answers/")
    page.click("#new-answer")
    page.fill("#id_query", "What does LTP require?")
    page.fill("#id_answer", "Long-term potentiation requires NMDA receptor activation [1]. It was first described in 1973 [2].")
    page.select_option("#id_mode", "audit-local")
    page.fill("#id_passage-0-title", "Synaptic Plasticity")
    page.fill("#id_passage-0-text", "LTP at CA1 synapses is dependent on NMDA receptor activation.")
    page.fill("#id_passage-1-text", "LTP was first described by Bliss and Lomo in 1973.")
    page.click("#add-passage")  # a third block appears, numbered [3], and stays empty
    assert page.locator("[data-passage]").count() == 3
    assert page.locator("[data-passage] h3").nth(2).text_content() == "Passage [3]"
    page.click("#submit-answer")
    page.wait_for_selector("#answer-text .claim-mark")
    answer = Answer.objects.get()
    assert page.url.endswith(f"/answers/{answer.public_id}/")
    assert [c["id"] for c in answer.contexts] == ["1", "2"]


def test_audit_now_from_the_list_opens_the_audited_copy(browser_page, live_server, analyst, workspace):
    from audit.models import Answer

    text = "Long-term potentiation requires NMDA receptor activation."
    normal = Answer.objects.create(workspace=workspace, query="What does LTP require?", text=text, original_text=text,
                                   mode="normal", contexts=[{"id": "1", "text": text}])
    page = browser_page
    login(page, live_server, analyst, "/answers/")
    row = page.locator(f"tr[data-answer='{normal.public_id}']")
    assert "not audited" in row.inner_text()
    row.get_by_role("button", name="Audit now").click()
    page.wait_for_selector("#answer-text .claim-mark")
    audited = Answer.objects.exclude(pk=normal.pk).get()
    assert page.url.endswith(f"/answers/{audited.public_id}/")
    assert f"Audited {normal.public_id} as {audited.public_id}" in page.locator(".messages").inner_text()
