"""What the eye sees, in headless Chromium (Debian's): the dashboard's domain table sorts, the phone
tables of the admin fit their boxes, and saving the settings moves the focus to what was saved."""

from __future__ import annotations

import pytest

from tests.ui.conftest import build_answer, login, open_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def _column(page, label: str) -> list[str]:
    return page.eval_on_selector_all(
        f'#domain-table tbody td[data-label="{label}"]',
        "cells => cells.map(c => c.getAttribute('data-sort'))",
    )


def test_the_domain_table_sorts_by_a_column_both_ways(browser_page, live_server, lead, workspace):
    from audit.models import Claim

    build_answer(workspace)  # neuroscience: one refuted of three
    _, claims = build_answer(workspace, domain="immunology")
    Claim.objects.filter(pk__in=[c.pk for c in claims]).update(label="REFUTED")  # three of three
    build_answer(workspace, domain="cardiology")
    _, clean = build_answer(workspace, domain="oncology")
    Claim.objects.filter(pk__in=[c.pk for c in clean]).update(label="SUPPORTED")  # none refuted
    page = browser_page
    login(page, live_server, lead, "/dashboard/")
    page.click('#domain-table th[data-sort-key="refuted"] button')
    shares = [float(v) for v in _column(page, "Refuted")]
    assert shares == sorted(shares, reverse=True) and shares[0] == 1.0 and shares[-1] == 0.0
    assert page.get_attribute('#domain-table th[data-sort-key="refuted"]', "aria-sort") == "descending"
    page.click('#domain-table th[data-sort-key="refuted"] button')
    assert [float(v) for v in _column(page, "Refuted")] == sorted(shares)
    page.click('#domain-table th[data-sort-key="domain"] button')
    assert _column(page, "Domain") == ["cardiology", "immunology", "neuroscience", "oncology"]


def test_the_strictness_table_shows_in_force_on_a_phone_and_the_external_calls_list_fits_its_box(
    browser_page, live_server, admin_user_obj, workspace
):
    from audit.models import ExternalCall

    answer, claims = build_answer(workspace)
    open_case(claims[1])
    ExternalCall.objects.create(
        workspace=workspace,
        answer=answer,
        claim=claims[2],
        provider="pubmed",
        url="https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi?db=pubmed&term=" + "ltp+" * 400,
        query="ltp",
        status="failed",
        failure_reason="dns",
    )
    page = browser_page
    page.set_viewport_size(PHONE)
    login(page, live_server, admin_user_obj, f"/admin/audit/workspace/{workspace.pk}/settings/")
    in_force = page.locator('#operating-point-table td[data-label="In force"]', has_text="in force")
    assert in_force.count() == 1 and in_force.first.is_visible()
    box = in_force.first.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    page.goto(live_server.url + "/admin/audit/externalcall/")
    table = page.evaluate("document.getElementById('result_list').scrollWidth")
    assert table < 1500  # was 2,582 px with the whole URL in the row
    box = page.evaluate(
        "(() => { const b = document.getElementById('result_list').parentElement;"
        " return [b.clientWidth, getComputedStyle(b).overflowX]; })()"
    )
    assert box[0] <= PHONE["width"] and box[1] == "auto"  # the rest scrolls inside its own box
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_fast_workspace_reads_the_fast_depths_strictness_cuts_in_the_browser(
    browser_page, live_server, admin_user_obj, workspace
):
    from audit.pipeline.operating_points import shipped_operating_points

    strict = shipped_operating_points().fast_points["strict"]
    workspace.threshold_overrides = {"verification_depth": "fast"}
    workspace.save()
    page = browser_page
    login(page, live_server, admin_user_obj, f"/admin/audit/workspace/{workspace.pk}/settings/")
    depth = page.locator("#operating-points-depth")
    assert depth.is_visible() and depth.inner_text() == "fast"
    row = page.locator('#operating-point-table tr[data-point="strict"]')
    assert f"{strict['cut']:.3f}" in row.inner_text()


def test_saving_the_settings_moves_the_focus_to_the_saved_message(
    browser_page, live_server, admin_user_obj, workspace
):
    page = browser_page
    login(page, live_server, admin_user_obj, f"/admin/audit/workspace/{workspace.pk}/settings/")
    page.click("input[name=_save]")
    page.wait_for_selector("ul.messagelist")
    focused = page.evaluate("[document.activeElement.tagName, document.activeElement.className]")
    assert focused == ["UL", "messagelist"]
    assert "were saved" in page.locator("ul.messagelist").inner_text()
