"""Dashboard drill-down: every tile, count and chart point links to the list it summarises."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from escalation.models import ReviewCase
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def dashboard(client, lead, workspace):
    from audit.services.claims import claim_relabel

    answer, claims = build_answer(workspace)
    case = open_case(claims[1])
    claim_relabel(claim=claims[2], label="REFUTED", actor=lead, reason="checked")
    ReviewCase.objects.filter(pk=case.pk).update(sla_state="breached")
    from escalation.models import ReviewEvent

    ReviewEvent.objects.create(case=case, kind="breached", tier=1, actor_label="sla_sweep")
    client.force_login(lead)
    html = client.get("/dashboard/").content.decode()
    return {"html": html, "answer": answer, "claims": claims, "case": case, "client": client}


def _rows(client, href: str, attribute: str) -> list[str]:
    return re.findall(rf'{attribute}="([^"]+)"', client.get(unescape(href)).content.decode())


def _href(html: str, anchor_text_pattern: str) -> str:
    return re.search(anchor_text_pattern, html).group(1)


def test_every_kpi_tile_links_to_the_list_it_counts(dashboard):
    html = dashboard["html"]
    for tile in ("kpi-supported", "kpi-missing", "kpi-latency", "kpi-backlog"):
        assert re.search(rf'id="{tile}"><a class="tile-link" href="[^"]+">', html), tile
    href = _href(html, r'id="kpi-supported"><a class="tile-link" href="([^"]+)"')
    assert "label=SUPPORTED" in href and "machine_label=SUPPORTED" in href and "escalation=none" in href
    listed = dashboard["client"].get(unescape(href)).content.decode()
    assert "Long-term potentiation requires NMDA" in listed and "12 layers" not in listed


def test_the_queue_counts_and_incidents_link_to_their_filtered_lists(dashboard):
    html, client, case = dashboard["html"], dashboard["client"], dashboard["case"]
    breached = _href(html, r'<a href="([^"]+)"><strong>1</strong> breached</a>')
    assert _rows(client, breached, "data-ticket") == [case.ticket]
    breaches = _href(html, r'SLA breaches</th><td><a href="([^"]+)">1</a>')
    assert _rows(client, breaches, "data-ticket") == [case.ticket]
    relabelled = _href(html, r'Labels changed by reviewers</th><td><a href="([^"]+)">1</a>')
    assert _rows(client, relabelled, "data-claim") == [str(dashboard["claims"][2].pk)]
    unassigned = _href(html, r'<a href="([^"]+)"><strong>1</strong> unassigned</a>')
    assert "owner=none" in unassigned


def test_the_domain_table_counts_link_to_their_claims(dashboard):
    html, client = dashboard["html"], dashboard["client"]
    table = html.split('id="domain-table"')[1].split("</table>")[0]
    refuted = _href(table, r'data-label="Refuted"[^>]*><a href="([^"]+)">')
    assert "domain=neuroscience" in refuted and "label=REFUTED" in refuted
    assert set(_rows(client, refuted, "data-claim")) == {
        str(dashboard["claims"][1].pk),
        str(dashboard["claims"][2].pk),
    }


def test_every_chart_point_has_a_link_and_the_chart_a_data_table(dashboard):
    html, client = dashboard["html"], dashboard["client"]
    keys = re.findall(r'<script id="([a-z-]+)" type="application/json">', html)
    assert len(keys) >= 9
    for key in keys:
        fig = json.loads(
            unescape(html.split(f'<script id="{key}" type="application/json">')[1].split("</script>")[0])
        )
        for trace, links in zip(fig["data"], fig["links"]):
            points = trace.get("y") if trace.get("orientation") == "h" else trace.get("x")
            assert len(links) == len(points) and all(link.startswith("/") for link in links), key
        table = html.split(f'id="data-{key}"')[1].split("</details>")[0]
        assert "<table" in table and "<a href=" in table, key
    rates = json.loads(
        unescape(html.split('<script id="label-rates" type="application/json">')[1].split("</script>")[0])
    )
    today = rates["data"][0]["x"][-1]
    refuted_today = rates["links"][0][-1]
    assert f"label=REFUTED&date_from={today}&date_to={today}" in refuted_today
    assert set(_rows(client, refuted_today, "data-claim")) == {
        str(dashboard["claims"][1].pk),
        str(dashboard["claims"][2].pk),
    }
    aging = json.loads(
        unescape(html.split('<script id="queue-aging" type="application/json">')[1].split("</script>")[0])
    )
    first_bucket_level_1 = aging["links"][0][0]
    assert _rows(client, first_bucket_level_1, "data-ticket") == [dashboard["case"].ticket]


def test_the_plain_labels_carry_no_seed_or_spec_numbers(dashboard):
    html = dashboard["html"]
    assert "Success metrics</h2>" in html
    assert not re.search(r"\b(seed|spec)\s*(\d|§)", html, re.IGNORECASE)
