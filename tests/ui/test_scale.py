"""The list pages and the dashboard with 100,000 claims: aggregate queries, a fixed query count.

Marked slow (it bulk-loads 100,000 claims and 20,000 cases). It prints the timings it measured
but does not assert them: wall-clock time on a shared 2-core machine is a benchmark figure, not a
pass/fail condition; the query bound is what fails when a page starts querying per row.
"""

from __future__ import annotations

import datetime as dt
import random
import time

import pytest
from django.db import connection
from django.utils import timezone

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CLAIMS = 100_000
PER_ANSWER = 5
CASES = 20_000


def _load(workspace):
    from audit.models import Answer, Claim, VerificationRun
    from escalation.models import ReviewCase

    rng = random.Random(9)
    now = timezone.now()
    answers = Answer.objects.bulk_create(
        Answer(
            workspace=workspace,
            public_id=f"a-bench-{i:06d}",
            query="q",
            text="t",
            original_text="t",
            mode="audit-local",
            domain=rng.choice(["neuroscience", "pharmacology", "general"]),
            created_at=now - dt.timedelta(minutes=rng.randrange(60 * 24 * 60)),
        )
        for i in range(CLAIMS // PER_ANSWER)
    )
    labels = ["SUPPORTED", "REFUTED", "NEI"]
    Claim.objects.bulk_create(
        (
            Claim(
                answer=a,
                claim_id=f"c{j + 1}",
                text=f"claim {a.pk}/{j}",
                label=(lab := rng.choice(labels)),
                machine_label=lab,
                confidence=rng.random(),
                drafted_at=a.created_at,
                verified_at=a.created_at,
            )
            for a in answers
            for j in range(PER_ANSWER)
        ),
        batch_size=5000,
    )
    VerificationRun.objects.bulk_create(
        (
            VerificationRun(answer=a, mode="audit-local", started_at=a.created_at, audit_score=rng.random())
            for a in answers
        ),
        batch_size=5000,
    )
    claim_ids = list(Claim.objects.values_list("id", flat=True)[:CASES])
    ReviewCase.objects.bulk_create(
        (
            ReviewCase(
                workspace=workspace,
                number=n,
                ticket=f"COMP-ESC-{n:06d}",
                claim_id=cid,
                trigger="low_confidence",
                tier=rng.choice([1, 2, 3]),
                risk_score=rng.random(),
                opened_at=(opened := now - dt.timedelta(minutes=rng.randrange(60 * 24 * 20))),
                clock_started_at=opened,
                due_at=opened + dt.timedelta(hours=rng.choice([0.5, 4, 8])),
            )
            for n, cid in enumerate(claim_ids, start=1)
        ),
        batch_size=5000,
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # planner statistics, as autovacuum keeps them in production
            cursor.execute("ANALYZE")


def test_it_serves_the_pages_with_bounded_queries_at_100000_claims(
    client, lead, workspace, django_assert_max_num_queries, capsys
):
    from audit.models import Claim

    started = time.perf_counter()
    _load(workspace)
    load_s = time.perf_counter() - started
    assert Claim.objects.count() == CLAIMS
    client.force_login(lead)
    timings = {}
    for path in (
        "/dashboard/",
        "/claims/",
        "/claims/?label=REFUTED&domain=neuroscience",
        "/escalations/",
        f"/dashboard/?date_from={(timezone.now() - dt.timedelta(days=90)).date()}",
        "/answers/",
        "/answers/?refuted=true&domain=neuroscience",
    ):
        client.get(path)  # warm caches (roles, templates)
        with django_assert_max_num_queries(25):
            started = time.perf_counter()
            response = client.get(path)
            timings[path] = time.perf_counter() - started
        assert response.status_code == 200
    with capsys.disabled():
        print(f"\nloaded {CLAIMS} claims and {CASES} cases in {load_s:.1f}s")
        for path, seconds in timings.items():
            print(f"  {path:<60} {seconds * 1000:7.0f} ms")
