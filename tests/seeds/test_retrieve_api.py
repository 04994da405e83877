"""POST /api/v1/retrieve: claim-focused retrieval with freshness filters (spec 004 §7), over real HTTP
handling (DRF test client), the real embedding model and the workspace's hybrid index."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

pytestmark = pytest.mark.slow

NOW = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def kb(ingest):
    return {
        "ltp_new": ingest(
            "LTP review 2026",
            "Long-term potentiation requires NMDA receptor activation in CA1.",
            domain="neuroscience",
            published_at=dt.date(2026, 5, 1),
        ),
        "ltp_old": ingest(
            "LTP classic 2019",
            "Long-term potentiation depends on NMDA receptors at CA1 synapses.",
            domain="neuroscience",
            published_at=dt.date(2019, 3, 1),
        ),
        "ltp_undated": ingest(
            "LTP notes",
            "NMDA receptor activation is needed for long-term potentiation.",
            domain="neuroscience",
        ),
        "finance": ingest(
            "Revenue report",
            "Apple reported revenue of 394 billion dollars in 2023.",
            domain="finance",
            published_at=dt.date(2024, 2, 1),
        ),
    }


def post(client, body):
    return client.post("/api/v1/retrieve", body, format="json")


@time_machine.travel(NOW, tick=False)
def test_it_returns_the_best_passages_for_a_claim_with_age_staleness_and_score(client_for, auditor, kb):
    response = post(client_for(auditor), {"claim": "LTP requires NMDA receptor activation [1].", "top_k": 3})

    assert response.status_code == 200, response.content
    data = response.json()
    assert data["kind"] == "claim" and data["top_k"] == 3
    results = data["results"]
    assert len(results) == 3
    assert {r["title"] for r in results} == {"LTP review 2026", "LTP classic 2019", "LTP notes"}
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    by_title = {r["title"]: r for r in results}
    new, old, undated = by_title["LTP review 2026"], by_title["LTP classic 2019"], by_title["LTP notes"]
    assert new["published_at"] == "2026-05-01" and new["age_months"] == pytest.approx(6.8, abs=0.1)
    assert (new["stale"], new["freshness_limit_months"]) == (False, 18)  # the neuroscience policy
    assert old["stale"] is True and old["age_months"] > 18
    assert (undated["published_at"], undated["age_months"], undated["stale"]) == (None, None, None)
    assert new["id"].startswith("kb_chunk_") and new["uri"] == "kb://ltp-review-2026"
    assert new["document_id"] == kb["ltp_new"].pk and "NMDA" in new["text"]


@time_machine.travel(NOW, tick=False)
def test_it_applies_the_domain_age_and_date_filters(client_for, auditor, kb):
    client = client_for(auditor)

    fresh = post(client, {"query": "NMDA receptors and long-term potentiation", "max_age_months": 24}).json()
    after = post(
        client,
        {
            "query": "NMDA receptors and long-term potentiation",
            "published_after": "2019-04-01",
            "domain": "neuroscience",
        },
    ).json()
    finance = post(client, {"query": "NMDA receptors and long-term potentiation", "domain": "Finance"}).json()

    assert {r["title"] for r in fresh["results"]} <= {"LTP review 2026", "Revenue report"}
    assert "LTP review 2026" in {r["title"] for r in fresh["results"]}
    assert [r["title"] for r in after["results"]] == ["LTP review 2026"]
    assert all(r["domain"] == "finance" for r in finance["results"])


@time_machine.travel(NOW, tick=False)
def test_staleness_follows_the_workspace_freshness_policy(client_for, auditor, kb, workspace):
    workspace.freshness_policy = {"neuroscience": 6}
    workspace.save(update_fields=["freshness_policy"])

    results = post(client_for(auditor), {"claim": "LTP requires NMDA receptor activation."}).json()["results"]

    new = next(r for r in results if r["title"] == "LTP review 2026")
    assert (new["stale"], new["freshness_limit_months"]) == (True, 6)


@time_machine.travel(NOW, tick=False)
def test_the_request_domain_decides_which_freshness_limit_applies(client_for, auditor, kb):
    results = post(
        client_for(auditor), {"claim": "Apple reported revenue of 394 billion dollars.", "domain": "finance"}
    ).json()["results"]

    assert results[0]["title"] == "Revenue report"
    assert (results[0]["freshness_limit_months"], results[0]["stale"]) == (36, False)  # general fallback


def test_it_names_each_bad_filter_in_one_400(client_for, auditor, kb):
    response = post(
        client_for(auditor),
        {"query": "LTP", "top_k": 0, "max_age_months": "soon", "published_after": "last year", "domain": 7},
    )

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert set(errors) == {"top_k", "max_age_months", "published_after", "domain"}


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "claim"),
        ({"claim": "a", "query": "b"}, "claim"),
        ({"claim": ""}, "claim"),
        ({"query": "LTP", "top_k": 51}, "top_k"),
        ({"query": "LTP", "max_age_months": -1}, "max_age_months"),
        ({"query": "LTP", "since": "2020-01-01"}, "since"),
    ],
)
def test_it_refuses_a_request_without_one_text_or_with_an_unknown_filter(client_for, auditor, body, field):
    response = post(client_for(auditor), body)

    assert response.status_code == 400 and field in response.json()["errors"]


def test_it_searches_only_the_callers_workspace(client_for, auditor, ingest, kb):
    from audit.models import Workspace

    other = Workspace.objects.create(name="Other", slug="other")
    ingest(
        "Secret LTP memo",
        "Long-term potentiation requires NMDA receptor activation, says the memo.",
        into=other,
        domain="neuroscience",
    )

    results = post(client_for(auditor), {"claim": "LTP requires NMDA receptor activation."}).json()["results"]

    assert results and "Secret LTP memo" not in {r["title"] for r in results}


def test_it_needs_a_token(client_for):
    assert post(client_for(None), {"query": "LTP"}).status_code == 401


def test_it_returns_no_results_from_an_empty_knowledge_base(client_for, auditor):
    response = post(client_for(auditor), {"query": "anything at all"})

    assert response.status_code == 200 and response.json()["results"] == []
