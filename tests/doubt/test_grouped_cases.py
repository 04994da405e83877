"""One request that raises many cases: through HTTP on real audits, its claims that need a person are
grouped in one case for the answer (the count shown on the queue and the case), every claim not
SUPPORTED still belongs to exactly one case, and a re-audit of the same answer opens no duplicate."""

from __future__ import annotations

import pytest
from django.db.models import Q
from django.test import Client

from audit import constants
from audit.models import Claim
from escalation.models import ReviewCase
from tests.redteam.conftest import post_audit

pytestmark = pytest.mark.django_db

# sentences no passage backs (no passages sent, an empty knowledge base): each one is NEI
UNBACKED = [f"The clinic in district {n} reimbursed {n + 3} insurers in {1990 + n}." for n in range(14)]


def _cases_of(claim: Claim) -> list[ReviewCase]:
    return list(ReviewCase.objects.filter(Q(claim=claim) | Q(joined_claims=claim)).distinct())


def test_one_audit_raising_many_cases_opens_one_case_for_its_answer_and_a_reaudit_no_duplicate(
    front_end, make_user
):
    from audit import roles

    assert len(UNBACKED) >= constants.CASES_GROUPED_FROM
    answer = " ".join(UNBACKED)
    first = post_audit(front_end, answer)
    doubted = Claim.objects.filter(answer__public_id=first["answer_id"]).exclude(label="SUPPORTED")
    assert doubted.count() >= constants.CASES_GROUPED_FROM
    assert ReviewCase.objects.count() == 1  # one case for the answer, not one per claim
    case = ReviewCase.objects.get()
    assert all(len(_cases_of(c)) == 1 for c in doubted)  # each doubted claim in exactly one case
    assert case.joined_claims.count() == doubted.count() - 1

    second = post_audit(front_end, answer)  # the same answer again
    again = Claim.objects.filter(answer__public_id=second["answer_id"]).exclude(label="SUPPORTED")
    assert ReviewCase.objects.count() == 1  # 0 duplicates
    assert all(_cases_of(c) == [case] for c in [*doubted, *again])

    reader = Client()
    reader.force_login(make_user("lead", roles.L3_LEAD))
    queue = reader.get("/escalations/").content.decode()
    total = doubted.count() + again.count()
    assert f"+{total - 1} claims" in queue
    page = reader.get(f"/escalations/{case.ticket}/").content.decode()
    assert f"This case holds {total} claims" in page and 'id="grouped-claims"' in page


def test_an_audit_raising_few_cases_opens_one_per_claim(front_end):
    few = UNBACKED[: constants.CASES_GROUPED_FROM - 1]
    audited = post_audit(front_end, " ".join(few))
    doubted = Claim.objects.filter(answer__public_id=audited["answer_id"]).exclude(label="SUPPORTED")
    assert ReviewCase.objects.count() == doubted.count() and doubted.count() > 0
    assert all(len(_cases_of(c)) == 1 and _cases_of(c)[0].claim_id == c.pk for c in doubted)
