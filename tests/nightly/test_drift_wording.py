"""The nightly report's drift reads the machine's label before and after (never "REFUTED->REFUTED"),
its count equals "Labels changed", and every day of "All reports" opens its own report."""

from __future__ import annotations

import pytest

from audit.models import Claim, NightlyReport
from audit.services.nightly import nightly_audit_run
from tests.nightly.test_nightly import DAY, seeded_day  # noqa: F401 — the fixture

pytestmark = pytest.mark.slow  # loads the embedding model


def test_a_drift_under_a_human_label_reads_the_machines_labels_and_matches_labels_changed(
    seeded_day,  # noqa: F811
    lead,
    client,
):
    from audit.services.claims import claim_relabel

    c1 = Claim.objects.get(
        answer=seeded_day["answer"], claim_id="c1"
    )  # the machine says NEI; the nightly finds SUPPORTED
    claim_relabel(claim=c1, label="REFUTED", actor=lead, reason="a reviewer read the source")
    nightly_audit_run(workspace=seeded_day["workspace"], day=DAY)

    report = NightlyReport.objects.get()
    transitions = report.report["label_drift"]["transitions"]
    assert all(before != after for before, after in (t.split("->") for t in transitions))
    assert "NEI->SUPPORTED" in transitions
    assert sum(transitions.values()) == report.labels_changed == report.report["counts"]["labels_changed"]

    client.force_login(lead)
    listed = client.get("/reports/nightly/").content.decode()
    assert f'<a href="/reports/nightly/?day={DAY.isoformat()}">{DAY.isoformat()}</a>' in listed
    page = client.get("/reports/nightly/", {"day": DAY.isoformat()})
    assert page.status_code == 200 and "NEI-&gt;SUPPORTED" in page.content.decode()
    assert client.get("/reports/nightly/", {"day": "1999-01-01"}).status_code == 404
    assert client.get("/reports/nightly/", {"day": "yesterday"}).status_code == 400
