"""A breach reads the same on the queue row, the case header and the history; met and missed drill apart."""

from __future__ import annotations

import datetime as dt

import pytest

from escalation import services
from escalation.models import ReviewEvent
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def _late_acknowledgement(case, *, recorded_on_time: bool):
    """A breach of the L1 clock to acknowledge, then an acknowledgement 18 minutes after it.

    ``recorded_on_time``: the acknowledgement event says within_sla (an older record that
    disagrees with the history); the pages must still call it late.
    """
    due = case.opened_at + dt.timedelta(minutes=30)
    ReviewEvent.objects.create(
        case=case,
        kind="breached",
        tier=1,
        at=due,
        details={"clock": "acknowledge", "due_at": due.isoformat()},
    )
    ack = due + dt.timedelta(minutes=18)
    ReviewEvent.objects.create(
        case=case, kind="acknowledged", tier=1, at=ack, details={"within_sla": recorded_on_time}
    )
    type(case).objects.filter(pk=case.pk).update(status="acknowledged", acknowledged_at=ack)
    case.refresh_from_db()
    return case


def test_a_breach_shows_on_the_queue_row_the_header_and_the_history_and_the_acknowledgement_is_late(
    client, analyst, workspace
):
    _, claims = build_answer(workspace)
    case = _late_acknowledgement(open_case(claims[1]), recorded_on_time=True)
    client.force_login(analyst)
    page = client.get(f"/escalations/{case.ticket}/").content.decode()
    header = page.split('class="facts"')[1].split("</dl>")[0]
    assert "SLA breached at Level 1 (acknowledge," in header
    assert "on time" not in header and "— late" in header
    history = page.split('class="events"')[1].split("</ol>")[0]
    assert "<strong>SLA breached</strong> at Level 1" in history
    assert "the clock to acknowledge ran out" in history

    queue = client.get("/escalations/", {"open": "any"}).content.decode()
    row = queue.split(f'data-ticket="{case.ticket}"')[1].split("</tr>")[0]
    assert "SLA breached at Level 1" in row

    # resolved, the row still says it breached (not only "Resolved")
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="checked the source")
    queue = client.get("/escalations/", {"open": "any"}).content.decode()
    row = queue.split(f'data-ticket="{case.ticket}"')[1].split("</tr>")[0]
    assert "Resolved" in row and "SLA breached at Level 1" in row


def test_a_case_without_a_breach_carries_no_breach_mark(client, analyst, workspace):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    queue = client.get("/escalations/").content.decode()
    row = queue.split(f'data-ticket="{case.ticket}"')[1].split("</tr>")[0]
    assert "breach-mark" not in row


def test_met_and_missed_each_list_their_own_cases(client, lead, workspace):
    _, claims = build_answer(workspace)
    missed = _late_acknowledgement(open_case(claims[1]), recorded_on_time=False)
    met = open_case(claims[2])
    client.force_login(lead)
    base = "/escalations/?entered_tier=1&entered_from=2020-01-01&entered_to=2099-12-31&open=any"
    both = client.get(base).content.decode()
    only_missed = client.get(base + "&entered_met=false").content.decode()
    only_met = client.get(base + "&entered_met=true").content.decode()
    assert f'data-ticket="{missed.ticket}"' in both and f'data-ticket="{met.ticket}"' in both
    assert (
        f'data-ticket="{missed.ticket}"' in only_missed and f'data-ticket="{met.ticket}"' not in only_missed
    )
    assert f'data-ticket="{met.ticket}"' in only_met and f'data-ticket="{missed.ticket}"' not in only_met
    assert "SLA missed there (breached)" in only_missed.split('id="applied-filters">')[1]
    assert client.get(base + "&entered_met=maybe").status_code == 400


def test_the_queue_export_holds_the_rows_of_its_list_with_their_filters_and_columns(
    client, analyst, workspace
):
    import csv
    import io
    import re
    from html import unescape

    from audit.models import Claim

    _, claims = build_answer(workspace)
    breached = _late_acknowledgement(open_case(claims[1]), recorded_on_time=False)
    services.case_resolve(case=breached, actor=analyst, decision="relabel_nei", rationale="no source says so")
    other = open_case(claims[2])
    _, elsewhere = build_answer(workspace, domain="cardiology")
    open_case(elsewhere[1])
    client.force_login(analyst)

    listed = client.get("/escalations/", {"domain": "neuroscience", "open": "any"}).content.decode()
    href = unescape(re.search(r'id="export-cases-csv" href="([^"]+)"', listed).group(1))
    tickets = re.findall(r'<tr class="case-row[^"]*" data-ticket="([^"]+)"', listed)
    response = client.get(href)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["ticket"] for r in rows] == tickets  # the same cases, in the same order
    assert {r["domain"] for r in rows} == {"neuroscience"}
    by_ticket = {r["ticket"]: r for r in rows}
    done = by_ticket[breached.ticket]
    assert done["status"] == "resolved" and done["tier"] == "1" and done["breached"].startswith("L1 ")
    assert done["machine_label"] == Claim.objects.get(pk=claims[1].pk).machine_label
    assert done["reviewer_label"] == "NEI" and done["reviewer"] == analyst.username
    assert done["decision"] == "relabel_nei"
    still = by_ticket[other.ticket]
    assert (
        still["status"] == "open" and still["due_at"] and still["breached"] == "" and still["reviewer"] == ""
    )
    # the list's default (open cases only) is the export's too
    open_only = client.get("/escalations/export.csv", {"domain": "neuroscience"})
    assert breached.ticket not in b"".join(open_only.streaming_content).decode()
    assert client.get("/escalations/export.csv", {"tier": "9"}).status_code == 400
