"""Each user's home shows what that user can act on, and its deadlines count as the case page does."""

from __future__ import annotations

import pytest
from django.utils import timezone

from escalation import display, selectors, services
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def test_a_submitters_home_has_no_queue_tiles_and_offers_to_audit_an_answer(client, submitter, workspace):
    _, claims = build_answer(workspace)
    open_case(claims[1])
    client.force_login(submitter)
    html = client.get("/").content.decode()
    assert 'id="my-work"' not in html and 'id="tile-unassigned"' not in html
    assert "Escalation queue</strong>" not in html
    assert 'id="submit-first"' in html and 'href="/answers/new/"' in html


def test_a_reviewers_next_deadline_counts_business_time_at_l2_as_the_case_page_does(client, lead, workspace):
    _, claims = build_answer(workspace)
    case = services.case_acknowledge(case=open_case(claims[1]), actor=lead)
    case = services.case_escalate(case=case, actor=lead, reason="needs the expert")
    client.force_login(lead)
    html = client.get("/").content.decode()
    line = html.split(f">{case.ticket}</a>")[1].split("</li>")[0]
    clock = display.countdown(case, selectors.calendar_for_workspace(workspace), timezone.now())
    assert clock["business"]
    assert f"(in {clock['left_text']} of business time)" in line
