"""`seed_history`: a month of demo history with real verdicts, deterministic and idempotent."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

KB = Path(__file__).resolve().parents[2] / "demo" / "kb"


def _snapshot():
    from audit.models import Answer, Claim
    from escalation.models import ReviewCase, ReviewEvent

    return (
        sorted(Answer.objects.values_list("public_id", "created_at", "mode", "domain")),
        sorted(Claim.objects.values_list("answer__public_id", "claim_id", "text", "label", "machine_label")),
        sorted(
            ReviewCase.objects.values_list(
                "claim__text", "tier", "status", "sla_state", "decision", "opened_at"
            )
        ),
        ReviewEvent.objects.count(),
    )


def test_it_seeds_past_days_with_mixed_labels_cases_and_nightly_reports_once(workspace):
    from audit.models import Answer, Claim
    from audit.models.nightly import NightlyReport

    call_command("ingest_kb", str(KB), stdout=io.StringIO(), stderr=io.StringIO())
    out = io.StringIO()
    call_command("seed_history", "--days", "6", stdout=out, stderr=io.StringIO())
    assert "6 days added (0 already there)" in out.getvalue()
    days = {a.created_at.date() for a in Answer.objects.all()}
    assert len(days) == 6 and max(days) < dt.datetime.now(dt.UTC).date()  # history_seed's today is a UTC day
    labels = set(Claim.objects.values_list("label", flat=True))
    assert labels == {"SUPPORTED", "REFUTED", "NEI"}
    assert NightlyReport.objects.filter(status="done").count() == 6
    first = _snapshot()
    out = io.StringIO()
    call_command("seed_history", "--days", "6", stdout=out, stderr=io.StringIO())
    assert "0 days added (6 already there)" in out.getvalue()
    assert _snapshot() == first


def test_the_same_days_come_out_the_same_when_seeded_again(workspace):
    from audit.models import Answer, Claim
    from showcase.history import history_seed

    call_command("ingest_kb", str(KB), stdout=io.StringIO(), stderr=io.StringIO())
    today = dt.date(2026, 6, 1)
    history_seed(workspace=workspace, days=3, today=today, nightly=False)
    first = sorted(Claim.objects.values_list("answer__created_at", "text", "label", "confidence"))
    Answer.objects.all().delete()
    history_seed(workspace=workspace, days=3, today=today, nightly=False)
    assert sorted(Claim.objects.values_list("answer__created_at", "text", "label", "confidence")) == first


def test_it_stops_with_one_sentence_without_the_demo_knowledge_base(workspace):
    from django.core.management.base import CommandError

    with pytest.raises(
        CommandError, match="No history was added: the knowledge base holds none of the demo documents"
    ):
        call_command("seed_history", "--days", "2", stdout=io.StringIO(), stderr=io.StringIO())
