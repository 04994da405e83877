"""Each tier's own on-call target hears of the cases waiting at its tier, and only those."""

from __future__ import annotations

import pytest

from escalation import services
from escalation.models import Notification, NotificationTarget

pytestmark = pytest.mark.django_db


def _told(event_kind: str) -> set[str]:
    return set(Notification.objects.filter(event__kind=event_kind).values_list("address", flat=True))


@pytest.fixture
def targets(workspace, settings):
    # the deployment's own on-call address is told of everything: left out here
    settings.THEORIA = {**settings.THEORIA, "ONCALL_EMAIL": "", "SLACK_WEBHOOK_URL": ""}
    for address, tier in (("all@example.org", None), ("l1@example.org", 1), ("l2@example.org", 2)):
        NotificationTarget.objects.create(workspace=workspace, channel="email", address=address, tier=tier)


def test_an_unassigned_case_is_told_to_its_tiers_group_and_an_escalation_to_l2_to_the_l2_group(
    targets, refuted_claim, analyst
):
    (case,) = services.cases_open_for_answer(answer=refuted_claim.answer)
    assert _told("opened") == {"all@example.org", "l1@example.org"}
    case = services.case_acknowledge(case=case, actor=analyst)  # the analyst owns it at L1
    case = services.case_escalate(case=case, actor=analyst, reason="needs a domain expert")
    assert case.owner is None  # an L1 analyst may not own an L2 case: it waits for the L2 group
    assert _told("escalated") == {"all@example.org", "l2@example.org"}


def test_an_escalation_that_keeps_its_owner_is_not_told_to_the_tiers_group(targets, refuted_claim, lead):
    (case,) = services.cases_open_for_answer(answer=refuted_claim.answer)
    case = services.case_acknowledge(case=case, actor=lead)
    case = services.case_escalate(case=case, actor=lead, reason="needs the lead's eye")
    assert case.owner == lead
    assert _told("escalated") == {"all@example.org"}


def test_a_tier_outside_one_to_three_is_refused(workspace):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        NotificationTarget.objects.create(
            workspace=workspace, channel="email", address="x@example.org", tier=4
        )
