"""The escalation queue pages over HTTP: order, filters, actions through the services, bad input."""

from __future__ import annotations

import pytest

from escalation.models import ReviewCase, ReviewEvent
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def cases(workspace):
    _, claims = build_answer(workspace)
    _, other = build_answer(workspace, domain="cardiology")
    return [open_case(claims[1]), open_case(claims[2]), open_case(other[1])]


def _tickets(html: str) -> list[str]:
    import re

    return re.findall(r'data-ticket="(COMP-ESC-\d+)"', html)


def test_it_lists_open_cases_by_time_to_breach_or_by_risk_and_filters_them(client, analyst, cases):
    client.force_login(analyst)
    html = client.get("/escalations/").content.decode()
    by_deadline = sorted(cases, key=lambda c: (c.due_at, -c.risk_score, c.id))
    assert _tickets(html) == [c.ticket for c in by_deadline]
    by_risk = sorted(cases, key=lambda c: (-c.risk_score, c.due_at, c.id))
    assert _tickets(client.get("/escalations/", {"order": "risk"}).content.decode()) == [
        c.ticket for c in by_risk
    ]
    assert _tickets(client.get("/escalations/", {"domain": "cardiology"}).content.decode()) == [
        cases[2].ticket
    ]
    assert _tickets(client.get("/escalations/", {"owner": "none", "tier": "2"}).content.decode()) == []
    assert f'data-due="{cases[0].due_at.isoformat()}"' in html


def test_it_rejects_a_bad_filter_with_a_400_naming_the_field(client, analyst, cases):
    client.force_login(analyst)
    response = client.get("/escalations/", {"tier": "9"})
    assert response.status_code == 400 and "tier" in response.content.decode()


def test_it_assigns_escalates_pauses_and_resumes_through_the_services(client, lead, expert, cases):
    case = cases[0]
    client.force_login(lead)
    base = f"/escalations/{case.ticket}"
    assert client.post(f"{base}/acknowledge", {"note": "looking"}).status_code == 302
    assert client.post(f"{base}/escalate", {"note": "needs an anatomist"}).status_code == 302
    assert client.post(f"{base}/assign", {"owner": expert.username}).status_code == 302
    assert client.post(f"{base}/pause", {"reason": "asked the author"}).status_code == 302
    case.refresh_from_db()
    assert (case.tier, case.owner, case.status, case.due_at) == (2, expert, ReviewCase.Status.PAUSED, None)
    html = client.get(f"{base}/").content.decode()
    assert "Paused — clock stopped" in html and "Resume the clock" in html
    assert client.post(f"{base}/resume", {}).status_code == 302
    case.refresh_from_db()
    assert case.status != ReviewCase.Status.PAUSED and case.due_at is not None
    kinds = list(ReviewEvent.objects.filter(case=case).values_list("kind", flat=True))
    assert kinds == ["opened", "acknowledged", "note", "escalated", "assigned", "paused", "resumed"]


def test_it_refuses_an_escalation_without_a_note_and_changes_nothing(client, lead, cases):
    case = cases[0]
    client.force_login(lead)
    response = client.post(f"/escalations/{case.ticket}/escalate", {"note": ""})
    assert response.status_code == 400 and "note" in response.content.decode()
    case.refresh_from_db()
    assert case.tier == 1 and case.version == 1


def test_it_refuses_a_resolution_without_confirmation(client, lead, cases):
    case = cases[0]
    client.force_login(lead)
    response = client.post(f"/escalations/{case.ticket}/resolve", {"decision": "confirm", "rationale": "ok"})
    assert response.status_code == 400 and "confirm" in response.content.decode()
    case.refresh_from_db()
    assert case.status == ReviewCase.Status.OPEN


def test_it_reports_a_conflict_when_someone_else_acted_first(client, analyst, lead, cases):
    from escalation import services

    case = cases[0]
    services.case_acknowledge(case=ReviewCase.objects.get(pk=case.pk), actor=lead)
    client.force_login(analyst)
    response = client.post(f"/escalations/{case.ticket}/acknowledge", {}, follow=True)
    assert "was not changed" in response.content.decode()
    case.refresh_from_db()
    assert case.owner == lead


def test_it_refuses_actions_to_a_reader_without_a_reviewer_role(client, auditor, cases):
    client.force_login(auditor)
    assert client.get("/escalations/").status_code == 200
    assert client.post(f"/escalations/{cases[0].ticket}/acknowledge", {}).status_code == 403


def test_it_exports_the_claim_cards_of_the_open_cases_of_a_domain(client, analyst, cases):
    import csv
    import io
    import re

    client.force_login(analyst)
    html = client.get("/escalations/", {"domain": "cardiology"}).content.decode()
    href = re.search(r'id="export-open-csv" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    rows = list(csv.DictReader(io.StringIO(b"".join(client.get(href).streaming_content).decode())))
    assert [r["escalation_tickets"] for r in rows] == [cases[2].ticket]


def test_every_row_action_and_tick_box_has_an_accessible_name_of_its_own(client, analyst, cases):
    import re

    client.force_login(analyst)
    html = client.get("/escalations/").content.decode()
    buttons = re.findall(r'class="js-ack">Acknowledge<span class="sr-only"> (COMP-ESC-\d+)</span>', html)
    ticks = re.findall(r'aria-label="Tick (COMP-ESC-\d+)"', html)
    assert sorted(buttons) == sorted(ticks) == sorted(c.ticket for c in cases)


def test_the_quick_views_filter_mine_unassigned_at_risk_and_breached(client, analyst, cases):
    client.force_login(analyst)
    client.post(f"/escalations/{cases[0].ticket}/acknowledge", {})
    ReviewCase.objects.filter(pk=cases[1].pk).update(sla_state="breached")
    html = client.get("/escalations/").content.decode()
    for view in ("mine", "unassigned", "at-risk", "breached"):
        assert f'id="view-{view}"' in html
    assert _tickets(client.get("/escalations/", {"owner": "me"}).content.decode()) == [cases[0].ticket]
    assert set(_tickets(client.get("/escalations/", {"owner": "none"}).content.decode())) == {
        cases[1].ticket,
        cases[2].ticket,
    }
    breached = client.get("/escalations/", {"sla_state": "breached"}).content.decode()
    assert _tickets(breached) == [cases[1].ticket]
    assert 'id="view-breached" class="chip-link" aria-current="page"' in breached


def test_a_bulk_action_reports_each_row_at_the_top_of_the_queue(client, analyst, expert, cases):
    from escalation import services

    services.case_acknowledge(case=cases[1], actor=expert)  # someone else took this one
    client.force_login(analyst)
    response = client.post(
        "/escalations/bulk",
        {
            "ticket": [c.ticket for c in cases] + ["COMP-ESC-999999"],
            "action": "acknowledge",
            "next": "/escalations/",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/escalations/"
    html = client.get("/escalations/").content.decode()
    section = html.split('id="bulk-results"')[1].split("</section>")[0]
    assert section.count('class="bulk-done"') == 2 and section.count('class="bulk-failed"') == 2
    assert f"{cases[1].ticket}</a> not changed: cannot acknowledge" in section
    assert "COMP-ESC-999999</a> not found in your workspace" in section
    assert set(ReviewCase.objects.values_list("status", flat=True)) == {"acknowledged"}
    # shown once: the next visit of the queue no longer has it
    assert 'id="bulk-results"' not in client.get("/escalations/").content.decode()


def test_a_bulk_assignment_and_unassignment_go_through_the_services(client, lead, expert, cases):
    client.force_login(lead)
    tickets = [c.ticket for c in cases]
    client.post("/escalations/bulk", {"ticket": tickets, "action": "assign", "owner": "expert1"})
    assert set(ReviewCase.objects.values_list("owner__username", flat=True)) == {"expert1"}
    assert ReviewEvent.objects.filter(kind="assigned").count() == 3
    client.post("/escalations/bulk", {"ticket": tickets[:2], "action": "unassign"})
    assert (
        list(ReviewCase.objects.filter(owner__isnull=True).order_by("id").values_list("ticket", flat=True))
        == tickets[:2]
    )


def test_a_bulk_action_without_ticks_or_owner_says_what_is_missing_and_changes_nothing(client, lead, cases):
    client.force_login(lead)
    client.post("/escalations/bulk", {"action": "assign"})
    html = client.get("/escalations/").content.decode()
    assert "Tick at least one case." in html and "Pick who the cases go to." in html
    assert not ReviewEvent.objects.filter(kind="assigned").exists()


def test_a_reader_without_a_reviewer_role_gets_no_bulk_bar_and_may_not_post_one(client, auditor, cases):
    client.force_login(auditor)
    html = client.get("/escalations/").content.decode()
    assert 'id="bulk-form"' not in html and 'class="js-tick"' not in html
    assert (
        client.post("/escalations/bulk", {"ticket": [cases[0].ticket], "action": "acknowledge"}).status_code
        == 403
    )
