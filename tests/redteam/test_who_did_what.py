"""Who did what, on the demo knowledge base (issue 33): the hippocampus passage credits John O'Keefe
with place cells (1971) and May-Britt and Edvard Moser with grid cells. A claim that credits the
finding to the other person is not Supported; the true statements are. Through ``POST /api/v1/audits``
in audit-local mode: retrieval from the ingested demo knowledge base, the default judge, the
structural check and its role binding (audit/pipeline/binding.py)."""

from __future__ import annotations

import pytest

from tests.redteam.conftest import post_audit

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

QUERY = "Who discovered place cells and grid cells?"


@pytest.mark.parametrize(
    ("answer", "supported"),
    [
        ("Edvard Moser described hippocampal place cells in 1971.", False),
        ("John O'Keefe discovered grid cells in the entorhinal cortex.", False),
        ("May-Britt Moser described place cells in 1971.", False),
        ("John O'Keefe described place cells in 1971.", True),
        ("May-Britt Moser and Edvard Moser discovered grid cells in the entorhinal cortex.", True),
    ],
)
def test_a_finding_is_supported_only_when_credited_as_the_passage_credits_it(
    front_end, demo_kb, answer, supported
):
    data = post_audit(front_end, answer, query=QUERY)
    (card,) = data["claims"]
    assert (card["label"] == "SUPPORTED") is supported, (card["label"], card["confidence"])
