"""The dashboard's figures are cached per workspace and range, and computed afresh after any change."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


def _relabelled(html: str) -> str:
    return re.search(r'Labels changed by reviewers</th><td><a href="[^"]+">(\d+)</a>', html).group(1)


def test_a_second_visit_reads_the_cached_figures_and_a_relabel_or_case_change_recomputes_them(
    client, lead, workspace
):
    from audit.services.claims import claim_relabel
    from escalation.services import case_acknowledge

    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(lead)
    with CaptureQueriesContext(connection) as first:
        html = client.get("/dashboard/").content.decode()
    with CaptureQueriesContext(connection) as second:
        again = client.get("/dashboard/").content.decode()
    assert len(second) < len(first) / 2, (len(first), len(second))
    assert _relabelled(html) == _relabelled(again) == "0"
    claim_relabel(claim=claims[2], label="REFUTED", actor=lead, reason="checked")
    assert _relabelled(client.get("/dashboard/").content.decode()) == "1"
    before = re.search(
        r"<strong>(\d+)</strong> unassigned", client.get("/dashboard/").content.decode()
    ).group(1)
    case_acknowledge(case=case, actor=lead)
    after = re.search(r"<strong>(\d+)</strong> unassigned", client.get("/dashboard/").content.decode()).group(
        1
    )
    assert (before, after) == ("1", "0")


def test_each_workspace_and_range_has_its_own_cached_figures(client, lead, workspace):
    build_answer(workspace)
    client.force_login(lead)
    month = client.get("/dashboard/").content.decode()
    assert re.search(r">1 claim", month) is None and re.search(r">3 claims<", month)
    old = client.get("/dashboard/?date_from=2020-01-01&date_to=2020-01-31").content.decode()
    assert re.search(r">0 claims<", old)
