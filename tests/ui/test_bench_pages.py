"""``manage.py bench_pages`` prints a row of figures for every demo page and the dashboard after a change."""

from __future__ import annotations

import re
from io import StringIO

from django.core.management import call_command

from tests.ui.conftest import build_answer, open_case


def test_bench_pages_prints_every_demo_page_and_the_cold_dashboard(admin_user_obj, workspace):
    from showcase.pages import demo_pages

    _, claims = build_answer(workspace)
    open_case(claims[1])
    out = StringIO()
    call_command("bench_pages", rounds=1, username=admin_user_obj.username, stdout=out)
    text = out.getvalue()
    for name, path, _ in demo_pages(workspace):
        assert re.search(
            rf"^{re.escape(name)} +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +\d+  {re.escape(path)}$", text, re.M
        )
    assert re.search(
        r"^dashboard \(cold\) +[\d.]+ +[\d.]+ +/dashboard/ with its cached figures dropped$", text, re.M
    )
    assert "slowest warm median" in text
