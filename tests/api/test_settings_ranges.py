"""Settings are finite, whole where whole numbers are meant and in their documented ranges (400
naming the key); a bad value already stored never breaks an audit, a read or a purge."""

from __future__ import annotations

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def _put_raw(client, raw: str):
    return client.generic("PUT", "/api/v1/settings/thresholds", raw, content_type="application/json")


@pytest.mark.parametrize(
    "raw, key",
    [
        ('{"threshold_overrides": {"max_revisions": 1e309}}', "threshold_overrides.max_revisions"),
        ('{"threshold_overrides": {"retrieval_top_k": 1e309}}', "threshold_overrides.retrieval_top_k"),
        ('{"threshold_overrides": {"retrieval_top_k": 1e18}}', "threshold_overrides.retrieval_top_k"),
        ('{"threshold_overrides": {"retrieval_top_k": 2.5}}', "threshold_overrides.retrieval_top_k"),
        (
            '{"threshold_overrides": {"freshness_months": {"law": 1e309}}}',
            "threshold_overrides.freshness_months.law",
        ),
        (
            '{"threshold_overrides": {"audit_score_weights": {"faithfulness": 1e309}}}',
            "threshold_overrides.audit_score_weights.faithfulness",
        ),
        (
            '{"threshold_overrides": {"audit_score_threshold": -1e309}}',
            "threshold_overrides.audit_score_threshold",
        ),
        (
            '{"threshold_overrides": {"max_claims_per_answer": 0}}',
            "threshold_overrides.max_claims_per_answer",
        ),
    ],
)
def test_an_impossible_threshold_gets_400_naming_its_key(client_for, admin_user_obj, raw, key):
    response = _put_raw(client_for(admin_user_obj), raw)
    assert response.status_code == 400, response.content
    assert key in response.json()["errors"], response.json()


@pytest.mark.parametrize(
    "body, key",
    [
        ({"retention_days": 2147483648}, "retention_days"),
        ({"retention_days": 0}, "retention_days"),
        ({"llm_token_budget": 10**13}, "llm_token_budget"),
        ({"freshness_policy": {"law": 10**9}}, "freshness_policy.law"),
    ],
)
def test_an_impossible_workspace_setting_gets_400_naming_its_key(
    client_for, admin_user_obj, workspace, body, key
):
    response = client_for(admin_user_obj).patch("/api/v1/settings/workspace", body, format="json")
    assert response.status_code == 400, response.content
    assert key in response.json()["detail"]
    workspace.refresh_from_db()
    assert workspace.retention_days == 90


def test_a_bad_stored_threshold_is_ignored_when_read(client_for, admin_user_obj, workspace):
    from audit import constants
    from audit.models import Workspace
    from audit.selectors.api import thresholds_for

    Workspace.objects.filter(pk=workspace.pk).update(
        threshold_overrides={
            "retrieval_top_k": 10**18,
            "max_revisions": 1.5,
            "audit_score_threshold": 0.9,
            "no_such": 1,
            "freshness_months": {"law": -3, "medicine": 12},
        }
    )
    workspace.refresh_from_db()
    thresholds = thresholds_for(workspace)
    assert thresholds.retrieval_top_k == constants.RETRIEVAL_TOP_K
    assert thresholds.max_revisions == constants.MAX_REVISIONS
    assert thresholds.audit_score_threshold == 0.9  # the good ones still apply
    assert thresholds.freshness_months.get("law") is None or thresholds.freshness_months["law"] > 0
    body = client_for(admin_user_obj).get("/api/v1/settings/thresholds").json()
    assert body["effective"]["retrieval_top_k"] == constants.RETRIEVAL_TOP_K


def test_a_stored_retention_beyond_its_range_purges_with_the_longest_retention_allowed(workspace):
    import datetime as dt

    from django.utils import timezone

    from audit import constants
    from audit.models import Answer, Workspace
    from tests.factories import AnswerFactory

    Workspace.objects.filter(pk=workspace.pk).update(retention_days=1_000_000)  # past year 1 as a cutoff
    longest = dt.timedelta(days=constants.RETENTION_DAYS_RANGE[1])
    now = timezone.now()
    expired, kept = AnswerFactory(workspace=workspace), AnswerFactory(workspace=workspace)
    Answer.objects.filter(pk=expired.pk).update(created_at=now - longest - dt.timedelta(days=2))
    Answer.objects.filter(pk=kept.pk).update(created_at=now - longest + dt.timedelta(days=2))

    call_command("purge_expired")

    assert list(Answer.objects.filter(workspace=workspace).values_list("pk", flat=True)) == [kept.pk]
