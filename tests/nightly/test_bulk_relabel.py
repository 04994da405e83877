"""The nightly batch's bulk writes store what the one-claim relabel stores."""

from __future__ import annotations

import datetime as dt

import pytest

from audit.models import AuditEvent, Claim
from audit.services.labels import claim_machine_relabel, claims_machine_relabel

pytestmark = pytest.mark.django_db
NOW = dt.datetime(2026, 11, 21, 2, 0, tzinfo=dt.timezone.utc)


def _stored(claim: Claim) -> tuple:
    claim.refresh_from_db()
    history = [{k: v for k, v in entry.items() if k != "at"} for entry in claim.label_history]
    return claim.machine_label, claim.label, claim.verdict, claim.confidence, claim.verified_at, history


def test_it_relabels_a_batch_exactly_as_one_claim_at_a_time(workspace, store_answer):
    human = [
        {"at": "2026-11-20T10:00:00+00:00", "by": "expert", "by_human": True, "from": "NEI", "to": "REFUTED"}
    ]
    specs = [
        ("Alpha rises.", "NEI", 0.3),
        {"text": "Beta falls.", "label": "REFUTED", "confidence": 0.2, "label_history": human},
        ("Gamma holds.", "NEI", 0.4),
    ]
    one = list(store_answer(workspace, NOW - dt.timedelta(hours=5), claims=specs).claims.order_by("claim_id"))
    many = list(
        store_answer(workspace, NOW - dt.timedelta(hours=5), claims=specs).claims.order_by("claim_id")
    )
    verdicts = [
        ("SUPPORTED", 0.91, "supported"),
        ("SUPPORTED", 0.87, "supported"),
        ("NEI", 0.45, "not_found"),
    ]

    singles = [
        claim_machine_relabel(
            claim=c, label=label, confidence=conf, verdict=v, source="nightly_audit", reason="r", now=NOW
        )
        for c, (label, conf, v) in zip(one, verdicts)
    ]
    bulk = claims_machine_relabel(
        changes=[(c, *v) for c, v in zip(many, verdicts)],
        workspace=workspace,
        source="nightly_audit",
        reason="r",
        now=NOW,
    )

    assert bulk == singles == [True, True, False]
    assert [_stored(c) for c in many] == [_stored(c) for c in one]
    assert [c.label for c in many] == ["SUPPORTED", "REFUTED", "NEI"]  # the person's REFUTED is kept
    events = {e.object_id: e for e in AuditEvent.objects.filter(action="claim.label_drifted")}
    assert set(events) == {str(c.pk) for c in one[:2] + many[:2]}
    for a, b in zip(one[:2], many[:2]):
        assert events[str(a.pk)].details == events[str(b.pk)].details
        assert (
            events[str(b.pk)].workspace_id == workspace.id
            and events[str(b.pk)].actor_label == "nightly_audit"
        )
