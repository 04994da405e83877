"""The weighted RAG verification score of seed 001: the pure computation with its fallbacks, then
every Audit-Local answer through the API, the per-workspace weights and the dashboard trend."""

from __future__ import annotations

import pytest

from audit.constants import RAG_NEUTRAL_SCORE, Thresholds
from audit.pipeline.rag_score import citation_coverage, keyword_alignment, rag_score
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit, Passage

SOURCES = [
    Passage(
        id="kb1",
        title="Synaptic Plasticity Overview",
        text="Long-term potentiation is dependent on NMDA receptor activation in CA1 synapses.",
    ),
    Passage(id="kb2", title="Hippocampus Anatomy", text="The hippocampus proper has three layers."),
]
ANSWER = "Long-term potentiation requires NMDA receptor activation [1]."


def verdict(label: str, passage: Passage | None = SOURCES[0], n: int = 1) -> ClaimVerdict:
    claim = ClaimDraft(
        claim_id=f"c{n}", text="Long-term potentiation requires NMDA receptor activation.", span=(0, 10)
    )
    hits = [EvidenceHit(passage=passage, relevance=0.9, cited=True)] if passage else []
    return ClaimVerdict(claim=claim, label=label, verdict="supported", confidence=0.9, evidence=hits)


def fake_embed(texts):
    import numpy as np

    return np.array(
        [[1.0, 0.0] if "potentiation" in t.lower() else [0.0, 1.0] for t in texts], dtype="float32"
    )


def failing_embed(texts):
    raise RuntimeError("model not loaded")


def test_the_score_is_the_weighted_sum_of_its_three_parts():
    result = rag_score(ANSWER, [verdict("SUPPORTED"), verdict("NEI", n=2)], SOURCES, embed=fake_embed)

    assert set(result) == {"alignment", "citation_coverage", "fact_score", "score", "method"}
    assert result["method"] == {
        "alignment": "embedding",
        "citation_coverage": "citations",
        "fact_score": "claim_labels",
    }
    assert result["alignment"] == 1.0  # the only evidence passage is about potentiation
    assert result["citation_coverage"] == 0.5  # [1] cites one of the two passages sent, no pattern
    assert result["fact_score"] == 0.5
    assert result["score"] == pytest.approx(0.4 * 1.0 + 0.3 * 0.5 + 0.3 * 0.5)


def test_it_falls_back_to_keyword_alignment_when_the_embedding_fails():
    result = rag_score(ANSWER, [verdict("SUPPORTED")], SOURCES, embed=failing_embed)

    assert result["method"]["alignment"] == "keyword"
    assert result["method"]["alignment_fallback"] == "embedding failed: RuntimeError"
    assert result["alignment"] == pytest.approx(
        keyword_alignment("Long-term potentiation requires NMDA receptor activation.", [SOURCES[0]]), abs=1e-4
    )
    assert 0.5 < result["alignment"] < 1.0


def test_given_the_answer_and_source_vectors_it_embeds_nothing():
    import numpy as np

    asked = []

    result = rag_score(
        ANSWER,
        [verdict("SUPPORTED")],
        SOURCES,
        embed=failing_embed,
        answer_vector=np.array([1.0, 0.0], dtype="float32"),
        source_vectors=lambda sources: (
            asked.extend(p.id for p in sources) or [np.array([0.6, 0.8], dtype="float32") for _ in sources]
        ),
    )

    assert asked == ["kb1"]  # the answer's top source, as before
    assert result["method"]["alignment"] == "embedding"
    assert result["alignment"] == pytest.approx(0.6)


def test_parts_that_cannot_run_score_neutral_and_say_so():
    result = rag_score("Nothing to check here.", [], [], embed=fake_embed)

    assert result["method"] == {
        "alignment": "neutral",
        "citation_coverage": "neutral",
        "fact_score": "neutral",
    }
    assert result["alignment"] == result["citation_coverage"] == result["fact_score"] == RAG_NEUTRAL_SCORE
    assert result["score"] == RAG_NEUTRAL_SCORE


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("LTP needs NMDA receptors.", 0.0),
        ("LTP needs NMDA receptors [1].", 0.5),
        ("LTP needs NMDA receptors [Source: 1], according to the Hippocampus Anatomy notes.", 1.0),
        (
            "According to the review, LTP needs NMDA receptors, as the study shows that plasticity in the "
            "hippocampal report is real (source: x).",
            0.3,
        ),
        ("The Synaptic Plasticity Overview says LTP needs NMDA receptors.", 0.5),
        ("LTP needs NMDA receptors [cite:kb2] [kb1].", 1.0),
    ],
)
def test_citation_coverage_counts_cited_sources_and_the_seed_citation_patterns(answer, expected):
    assert citation_coverage(answer, SOURCES) == pytest.approx(expected)


def test_workspace_weights_change_the_score():
    t = Thresholds().updated({"rag_score_weights": {"alignment": 0.0, "citation_coverage": 0.0}})

    result = rag_score(
        ANSWER, [verdict("SUPPORTED"), verdict("NEI", n=2)], SOURCES, thresholds=t, embed=fake_embed
    )

    assert result["score"] == pytest.approx(result["fact_score"])


# --- through the API -----------------------------------------------------------------------------

CONTEXTS = [
    {"id": "kb1", "title": "Synaptic Plasticity Overview", "text": SOURCES[0].text},
    {"id": "kb2", "title": "Hippocampus Anatomy", "text": SOURCES[1].text},
]


@pytest.fixture
def front_end(client_for, submitter, embedder, workspace):
    workspace.allow_external_calls = False
    workspace.save(update_fields=["allow_external_calls"])
    return client_for(submitter)


def post_audit(client, answer=ANSWER):
    response = client.post(
        "/api/v1/audits",
        {
            "query": "What does long-term potentiation require?",
            "answer": answer,
            "contexts": CONTEXTS,
            "mode": "audit-local",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.slow
def test_every_audit_carries_its_rag_score_and_the_run_stores_it(front_end, client_for, auditor):
    data = post_audit(front_end)

    rag = data["audit"]["rag_score"]
    assert rag["method"] == {
        "alignment": "embedding",
        "citation_coverage": "citations",
        "fact_score": "claim_labels",
    }
    assert rag["fact_score"] == 1.0 and rag["citation_coverage"] == 0.5 and 0.5 < rag["alignment"] <= 1.0
    assert rag["score"] == pytest.approx(
        0.4 * rag["alignment"] + 0.3 * rag["citation_coverage"] + 0.3, abs=1e-3
    )
    run = client_for(auditor).get("/api/v1/runs").json()["results"][0]
    assert run["rag_score"] == rag
    assert client_for(auditor).get(f"/api/v1/answers/{data['answer_id']}").json()["audit"]["rag_score"] == rag


@pytest.mark.slow
def test_workspace_weight_overrides_apply_to_the_next_audit(front_end, client_for, admin_user_obj):
    admin = client_for(admin_user_obj)
    response = admin.put(
        "/api/v1/settings/thresholds",
        {
            "threshold_overrides": {
                "rag_score_weights": {"alignment": 0, "citation_coverage": 1, "fact_score": 0}
            }
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["effective"]["rag_score_weights"] == {
        "alignment": 0,
        "citation_coverage": 1,
        "fact_score": 0,
    }

    rag = post_audit(front_end)["audit"]["rag_score"]

    assert rag["score"] == rag["citation_coverage"] == 0.5


@pytest.mark.parametrize(
    "weights, where",
    [
        ({"relevance": 0.5}, "threshold_overrides.rag_score_weights.relevance"),
        ({"alignment": -1}, "threshold_overrides.rag_score_weights.alignment"),
        ({"alignment": "high"}, "threshold_overrides.rag_score_weights.alignment"),
        ({"alignment": 0, "citation_coverage": 0, "fact_score": 0}, "threshold_overrides.rag_score_weights"),
    ],
)
def test_bad_weights_are_refused_naming_the_weight(client_for, admin_user_obj, workspace, weights, where):
    response = client_for(admin_user_obj).put(
        "/api/v1/settings/thresholds", {"threshold_overrides": {"rag_score_weights": weights}}, format="json"
    )

    assert response.status_code == 400 and where in response.json()["errors"], response.content
    workspace.refresh_from_db()
    assert workspace.threshold_overrides == {}


def test_the_dashboard_trends_the_mean_rag_score_per_day(workspace, client, analyst):
    import datetime as dt

    from django.utils import timezone

    from audit.models import VerificationRun
    from audit.selectors import dashboard as dashboard_selectors
    from tests.api.conftest import build_answer

    today = timezone.now().replace(hour=12)
    for score in (0.6, 0.8, None):
        answer, _ = build_answer(workspace, created_at=today - dt.timedelta(days=1))
        VerificationRun.objects.filter(answer=answer).update(
            started_at=today - dt.timedelta(days=1), rag_score={} if score is None else {"score": score}
        )
    period = dashboard_selectors.DateRange.ending_today(days=3, today=today.date())

    summary = dashboard_selectors.trust_summary(workspace=workspace, period=period)

    assert summary["rag_score"] == [None, 0.7, None]  # runs without a score stay out of the mean
    client.force_login(analyst)
    page = client.get("/dashboard/")
    assert page.status_code == 200 and b"chart-rag-score" in page.content
