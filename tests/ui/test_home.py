"""The home page: what needs me first, each count a link to the queue filtered to it."""

from __future__ import annotations

import datetime as dt

import pytest

from escalation import services
from escalation.models import ReviewCase
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def test_home_counts_my_open_cases_and_the_workspaces_at_risk_breached_and_unassigned_ones(
    client, analyst, workspace
):
    cases = []
    for _ in range(2):
        _, claims = build_answer(workspace)
        cases += [open_case(claims[1]), open_case(claims[2])]
    services.case_acknowledge(case=cases[0], actor=analyst)
    ReviewCase.objects.filter(pk=cases[0].pk).update(sla_state="breached")
    ReviewCase.objects.filter(pk__in=[cases[1].pk, cases[2].pk]).update(sla_state="at_risk")
    client.force_login(analyst)
    html = client.get("/").content.decode()
    tiles = {
        tile: html.split(f'id="tile-{tile}"')[1].split("</a>")[0]
        for tile in ("mine", "at-risk", "breached", "unassigned")
    }
    assert '<span class="kpi-value">1</span>' in tiles["mine"] and "0 at risk · 1 breached" in tiles["mine"]
    assert '<span class="kpi-value">2</span>' in tiles["at-risk"]
    assert '<span class="kpi-value">1</span>' in tiles["breached"]
    assert '<span class="kpi-value">3</span>' in tiles["unassigned"]
    for href in ("?owner=me", "?sla_state=at_risk", "?sla_state=breached", "?owner=none"):
        assert f'href="/escalations/{href}"' in html


def test_home_lists_the_next_three_deadlines_of_my_and_the_unassigned_cases(
    client, analyst, make_user, workspace
):
    from audit import roles

    other = make_user("analyst2", roles.L1_ANALYST)
    cases = []
    for _ in range(3):
        _, claims = build_answer(workspace)
        cases += [open_case(claims[1]), open_case(claims[2])]
    services.case_assign(case=cases[0], actor=other, owner=other)  # someone else's: not listed
    now = cases[0].due_at
    for n, case in enumerate(cases):
        ReviewCase.objects.filter(pk=case.pk).update(due_at=now + dt.timedelta(minutes=n))
    client.force_login(analyst)
    html = client.get("/").content.decode()
    listed = html.split('id="next-deadlines"')[1].split("</ol>")[0]
    assert [t for t in (c.ticket for c in cases) if t in listed] == [c.ticket for c in cases[1:4]]
    assert 'href="/escalations/?order=deadline"' in html


def test_home_links_held_revisions_awaiting_approval(client, analyst, workspace):
    answer, _ = build_answer(workspace)
    type(answer).objects.filter(pk=answer.pk).update(revision_status="proposed", proposed_text="x")
    client.force_login(analyst)
    html = client.get("/").content.decode()
    assert 'id="tile-proposals"' in html and 'href="/escalations/#proposals"' in html
