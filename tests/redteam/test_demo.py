"""The demo of ``make run`` (ingest_kb demo/kb, seed_demo demo/answers.jsonl) shows what it found:
refuted claims on the dashboard and their cases in the queue (issue 13)."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from audit.models import Claim
from audit.selectors.dashboard import DateRange, trust_summary
from escalation.models import ReviewCase
from tests.redteam.conftest import DEMO_KB

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def test_the_demo_shows_refuted_claims_on_the_dashboard_and_their_cases_in_the_queue(
    workspace, embedder, client, admin_user_obj
):
    call_command("ingest_kb", str(DEMO_KB), verbosity=0)
    call_command("seed_demo", str(DEMO_KB.parent / "answers.jsonl"), username=admin_user_obj.username)

    refuted = Claim.objects.filter(answer__workspace=workspace, label="REFUTED")
    assert refuted.exists()
    # what is refuted as received is counted and escalated, even where the revision corrected it
    assert not refuted.filter(review_cases__isnull=True).exists()
    assert all("refuted" in case.reasons for case in ReviewCase.objects.filter(claim__in=refuted))
    summary = trust_summary(workspace=workspace, period=DateRange.ending_today(1))
    assert summary["labels"]["REFUTED"] == refuted.count() > 0
    client.force_login(admin_user_obj)
    queue = client.get("/escalations/").content.decode()
    assert all(case.ticket in queue for case in ReviewCase.objects.filter(claim__in=refuted)[:5])
