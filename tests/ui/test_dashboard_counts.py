"""Every count on the dashboard equals the count of the list it opens (a month of seeded history)."""

from __future__ import annotations

import io
import re
from html import unescape
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

KB = Path(__file__).resolve().parents[2] / "demo" / "kb"
# what a list page says it holds (the paginator's count)
LIST_COUNTS = (
    r'<p class="muted">(\d+) answers?, newest first',
    r'<p class="export">(\d+) claims?\.',
    r'id="queue-order">(\d+) cases?,',
)
# charts whose values are not rows of the list they open (tokens per day, means and shares)
NOT_COUNTS = ("llm-usage",)


def dashboard_counts(html: str) -> list[tuple[str, str, int]]:
    """(where, link, count) for every count on the dashboard that links to a list page."""
    main = html.split("<main", 1)[1]
    outside_charts = re.sub(r'<details class="chart-data".*?</details>', "", main, flags=re.S)
    found = []
    for n, (href, value) in enumerate(
        re.findall(
            r'<a href="(/(?:answers|claims|escalations)/[^"]*)"[^>]*>(?:<strong>)?(\d+)(?:</strong>)?[ <]',
            outside_charts,
        )
    ):
        found.append((f"link {n} ({value})", href, int(value)))
    for tile in ("kpi-supported", "kpi-missing"):  # the tiles show a share: their count is "n of m"
        href, n = re.search(
            rf'id="{tile}"><a class="tile-link" href="([^"]+)">.*?· (\d+) of \d+', main, re.S
        ).groups()
        found.append((tile, href, int(n)))
    for key, table in re.findall(
        r'<details class="chart-data" id="data-([a-z-]+)">(.*?)</details>', main, re.S
    ):
        if key in NOT_COUNTS:
            continue
        for href, value in re.findall(r'<td><a href="([^"]+)">([^<]+)</a>', table):
            if re.fullmatch(r"\d+", value):
                found.append((f"{key}: {value}", href, int(value)))
            elif met := re.match(r"(\d+) of (\d+) (?:met|missed)", value):
                found.append((f"{key}: {value}", href, int(met.group(1))))
    return found


def listed_count(client, href: str) -> int:
    page = client.get(unescape(href))
    assert page.status_code == 200, href
    html = page.content.decode()
    for pattern in LIST_COUNTS:
        if match := re.search(pattern, html):
            return int(match.group(1))
    raise AssertionError(f"no count on {href}")


def test_every_dashboard_count_equals_the_count_of_the_list_it_opens(client, lead, workspace):
    call_command("ingest_kb", str(KB), stdout=io.StringIO(), stderr=io.StringIO())
    call_command("seed_history", "--days", "10", stdout=io.StringIO(), stderr=io.StringIO())
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    figures = dashboard_counts(html)
    assert len(figures) > 60  # tiles, queue, incidents, domain table, chart tables
    differ = {
        where: (shown, listed)
        for where, href, shown in figures
        if (listed := listed_count(client, href)) != shown
    }
    assert differ == {}
    # the figures the issue found apart: answers per domain, answers in the period, SLA per tier
    assert re.search(r'data-label="Answers"[^>]*><a href="[^"]+">\d+</a>', html)
    assert re.search(r'id="answers-total">\d+ answers</a>', html)
    assert "of" in html.split('id="data-sla-attainment"')[1].split("</details>")[0]


def test_a_drilled_queue_shows_every_filter_it_applies_and_names_what_its_export_holds(
    client, lead, workspace
):
    from tests.ui.conftest import build_answer, open_case

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(lead)
    html = client.get(
        "/escalations/?entered_tier=1&entered_from=2020-01-01&entered_to=2099-12-31&open=any"
    ).content.decode()
    assert f'data-ticket="{case.ticket}"' in html
    applied = html.split('id="applied-filters">')[1].split("</p>")[0]
    assert "SLA clock started from 2020-01-01 to 2099-12-31" in applied and "at Level 1" in applied
    assert '<option value="any" selected>Open and resolved</option>' in html
    assert "Open (any)" not in html
    for name, value in (("entered_tier", "1"), ("entered_from", "2020-01-01"), ("entered_to", "2099-12-31")):
        assert f'<input type="hidden" name="{name}" value="{value}">' in html  # kept when filtering again
    export = html.split('id="export">')[1].split("</p>")[0]
    assert (
        "every case, open or resolved, in the workspace (the export does not apply this list's other filters)"
        in export
    )
    assert "escalation=any" in export
    dropped = client.get(
        "/escalations/?" + unescape(re.search(r'href="\?([^"]+)" id="drop-applied"', html).group(1))
    )
    assert "applied-filters" not in dropped.content.decode()
    # a clock that started before the range is not listed
    assert (
        f'data-ticket="{case.ticket}"'
        not in client.get(
            "/escalations/?entered_tier=1&entered_from=2020-01-01&entered_to=2020-01-02&open=any"
        ).content.decode()
    )


def test_a_claim_list_opened_from_a_tile_shows_the_machine_label_it_filters_by(client, lead, workspace):
    from tests.ui.conftest import build_answer

    build_answer(workspace)
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    href = re.search(r'id="kpi-supported"><a class="tile-link" href="([^"]+)"', html).group(1)
    listed = client.get(unescape(href)).content.decode()
    machine = listed.split('id="f-machine"')[1].split("</select>")[0]
    assert '<option value="SUPPORTED" selected>' in machine
