"""The ``screenshots`` command in a real browser (headless Chromium through Playwright): every page
photographed, at desktop and phone width.

A module of its own: the command drives its own Playwright, which cannot start while another
module's browser (``tests/ui/conftest.py``'s ``chromium``, one per module) holds the thread's loop.
"""

from __future__ import annotations

import pytest

from tests.ui.conftest import build_answer, open_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.slow  # a browser per page, a dozen pages
def test_it_refreshes_a_screenshot_of_every_page(admin_user_obj, workspace, tmp_path):
    """Every page, and at 390 px the analyst's pages and the admin's (a held revision adds its own)."""
    from django.core.management import call_command

    _, claims = build_answer(workspace)
    open_case(claims[1])
    call_command("screenshots", out=str(tmp_path), username=admin_user_obj.username)
    names = sorted(p.name for p in tmp_path.glob("*.png"))
    pages = (
        "home",
        "dashboard",
        "escalations",
        "case",
        "claims",
        "answer",
        "claim-card",
        "nightly-report",
        "admin",
        "admin-workspace",
        "admin-settings",
        "answers",
        "answer-new",
    )
    phone = (
        "home",
        "dashboard",
        "escalations",
        "case",
        "answers",
        "answer",
        "claim-card",
        "claims",
        "answer-new",
        "nightly-report",
        "admin",
        "admin-settings",
    )
    assert names == sorted(
        [f"{n}.png" for n in ("login", "answer-tooltip", "calibration", *pages)]
        + [f"phone-{n}.png" for n in phone]
    )
    assert all(p.stat().st_size > 10_000 for p in tmp_path.glob("*.png"))


@pytest.mark.slow
def test_the_screenshots_show_a_held_revision_when_there_is_one(admin_user_obj, workspace, tmp_path):
    from django.core.management import call_command

    from tests.ui.test_answer_page import held_answer

    held_answer(workspace)
    call_command("screenshots", out=str(tmp_path), username=admin_user_obj.username)
    assert (tmp_path / "answer-proposal.png").stat().st_size > 10_000
    assert (tmp_path / "phone-answer-proposal.png").exists()
