"""The page as served: the live region for messages is empty at load; the messages sit beside it."""

from __future__ import annotations

import pytest

from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def test_the_live_region_is_empty_when_the_page_is_served_and_the_message_is_beside_it(
    client, analyst, workspace
):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    html = client.post(f"/escalations/{case.ticket}/acknowledge", {}, follow=True).content.decode()
    assert (
        '<div id="messages" class="messages-region" role="status" aria-live="polite" tabindex="-1"></div>'
        in html
    )
    at_load = html.split('id="messages-at-load"')[1].split("</ul>")[0]
    assert f"{case.ticket} acknowledged." in at_load and 'role="status"' not in at_load
