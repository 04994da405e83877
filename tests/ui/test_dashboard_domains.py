"""The dashboard's domain table finds the worst domain: rates with their intervals, a few-claims mark,
score, open cases and SLA per domain; a domain filter that every figure follows."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from audit.selectors.dashboard import wilson_interval
from tests.ui.conftest import build_answer, open_case
from tests.ui.test_dashboard_counts import dashboard_counts, listed_count

pytestmark = pytest.mark.django_db
KB = Path(__file__).resolve().parents[2] / "demo" / "kb"


def test_the_wilson_interval_of_4_refuted_in_9_claims_is_wide_and_stays_inside_0_and_1():
    assert wilson_interval(4, 9) == (0.1888, 0.7334)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(0, 0) is None


def test_each_domain_row_has_its_score_rates_with_intervals_few_claims_open_cases_and_sla(
    client, lead, workspace
):
    _, claims = build_answer(workspace)  # neuroscience: SUPPORTED, REFUTED, NEI
    build_answer(workspace, domain="compliance")
    open_case(claims[1])
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    table = html.split('id="domain-table"')[1].split("</table>")[0]
    row = table.split('data-domain="neuroscience"')[1].split("</tr>")[0]
    refuted = row.split('data-label="Refuted"')[1].split("</td>")[0]
    assert "(33 %)" in refuted and '<span class="interval">6.2 %–79 %</span>' in refuted
    assert '<span class="few">few claims</span>' in refuted
    unsupported = row.split('data-label="Unsupported"')[1].split("</td>")[0]
    assert ">2</a> (67 %)" in unsupported
    assert re.search(r'data-label="Score" data-sort="[0-9.]+">[0-9.]+<', row)
    assert re.search(
        r'data-label="Open cases" data-sort="1"><a href="/escalations/\?domain=neuroscience">1</a>', row
    )
    assert ">1</a> of <a" in row.split('data-label="SLA met"')[1]
    for key in ("domain", "claims", "score", "refuted", "unsupported", "open", "sla"):
        assert re.search(rf'data-sort-key="{key}"[^>]*><button type="button" class="sort-button">', table)
    assert 'href="/dashboard/?date_from=' in row and "domain=neuroscience" in row  # the domain's own view


def test_with_a_domain_chosen_every_figure_counts_that_domain_and_opens_its_list(client, lead, workspace):
    call_command("ingest_kb", str(KB), stdout=io.StringIO(), stderr=io.StringIO())
    call_command("seed_history", "--days", "10", stdout=io.StringIO(), stderr=io.StringIO())
    client.force_login(lead)
    everything = client.get("/dashboard/").content.decode()
    domains = re.findall(r'<tr data-domain="([^"(]+)">', everything)
    assert len(domains) > 1
    domain = domains[-1]  # the domain with the fewest claims
    html = client.get("/dashboard/", {"domain": domain}).content.decode()
    assert f"domain {domain} only" in html
    assert re.findall(r'<tr data-domain="([^"]+)">', html) == [domain]
    figures = dashboard_counts(html)
    assert len(figures) > 40
    for where, href, _shown in figures:
        if "/escalations/" in href or "/claims/" in href or "/answers/" in href:
            assert f"domain={domain}" in href, where
    differ = {
        where: (shown, listed)
        for where, href, shown in figures
        if (listed := listed_count(client, href)) != shown
    }
    assert differ == {}
    total = int(re.search(r'">(\d+) claims?</a> ·', html).group(1))
    assert total < int(re.search(r'">(\d+) claims?</a> ·', everything).group(1))
