"""The nightly run's depth: fast by default with label changes confirmed at the full depth, or the
workspace's own ``verification_depth`` (settable through the API)."""

from __future__ import annotations

import pytest

from audit import constants
from audit.models import NightlyItem
from audit.services.nightly import nightly_audit_run
from tests.factories import in_regulated_domain
from tests.nightly.test_nightly import DAY, seeded_day  # noqa: F401 — the fixture

pytestmark = pytest.mark.slow  # loads the embedding model


def _depths(report) -> dict[str, tuple[str, bool]]:
    items = NightlyItem.objects.filter(report=report).select_related("claim")
    return {i.claim.claim_id: (i.result["depth"], i.changed) for i in items}


def test_a_default_run_is_fast_and_confirms_each_label_change_at_the_full_depth(seeded_day):  # noqa: F811
    report = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY).report

    assert report.report["figures"]["verification_depth"] == "fast"
    depths = _depths(report)
    assert depths["c1"] == ("full", True) and depths["c2"] == ("full", True)  # NEI/REFUTED -> SUPPORTED
    assert depths["c4"] == ("fast", False)  # nothing in the KB: no change to confirm


def test_the_full_depth_confirmations_stop_at_the_runs_budget(seeded_day, monkeypatch):  # noqa: F811
    monkeypatch.setattr(constants, "NIGHTLY_FULL_DEPTH_MAX_CLAIMS", 1)

    report = nightly_audit_run(workspace=seeded_day["workspace"], day=DAY).report

    assert sorted(d for d, _ in _depths(report).values()) == ["fast", "fast", "fast", "full"]


def test_a_workspace_that_sets_its_depth_gets_that_depth_at_night(seeded_day, admin_user_obj):  # noqa: F811
    from rest_framework.test import APIClient

    workspace = seeded_day["workspace"]
    api = APIClient()
    api.force_authenticate(admin_user_obj)
    response = api.put(
        "/api/v1/settings/thresholds", {"threshold_overrides": {"verification_depth": "full"}}, format="json"
    )
    assert response.status_code == 200
    workspace.refresh_from_db()

    report = nightly_audit_run(workspace=workspace, day=DAY).report

    assert report.report["figures"]["verification_depth"] == "full"
    assert {d for d, _ in _depths(report).values()} == {"full"}


def test_a_regulated_answers_claims_are_rechecked_at_the_strictness_their_audit_had(
    seeded_day,  # noqa: F811
    monkeypatch,
):
    """The nightly re-check judges each claim by its answer's domain (the regulated operating point
    in a regulated domain), at the run's depth, as the web step and the deep check do."""
    from audit.kb.encodings import ENCODINGS
    from audit.services import nightly_verify

    workspace = seeded_day["workspace"]
    in_regulated_domain(seeded_day["answer"])
    seen = []
    stores = []
    real = nightly_verify.verify_batch
    monkeypatch.setattr(
        nightly_verify,
        "verify_batch",
        lambda drafts, hits, job, embed, **kwargs: (
            seen.append((job.domain, job.thresholds.strictness, job.thresholds.verification_depth))
            or stores.append(kwargs.get("encodings"))
            or real(drafts, hits, job, embed, **kwargs)
        ),
    )

    nightly_audit_run(workspace=workspace, day=DAY)

    assert seen and {strictness for _, strictness, _ in seen} == {"regulated"}
    assert set(stores) == {ENCODINGS}  # the knowledge base's sentences, encoded at ingestion, are read
    assert seen[0] == ("compliance", "regulated", "fast")  # the fast pass, then its confirmations at full
