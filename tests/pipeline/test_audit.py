"""Whole audits through ``audit_answer``: retrieval, labels, metrics, flags and edge cases."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from audit.pipeline import audit_answer
from audit.pipeline.index import HybridIndex
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.types import Passage

NOW = datetime(2026, 11, 22, tzinfo=timezone.utc)
QUERY = "What does LTP require?"


def test_it_audits_an_answer_against_cited_passages(embedder, ltp_passages):
    answer = "LTP in the hippocampus requires NMDA receptor activation [1]. The annual fee is $200 [2]."
    r = audit_answer(QUERY, answer, ltp_passages, now=NOW)
    c1, c2 = r.claims
    assert (c1.label, c2.label) == ("SUPPORTED", "REFUTED")
    assert c1.evidence[0].cited and c1.evidence[0].passage.id == "1"
    assert c2.evidence[0].passage.id == "2"
    assert r.metrics["faithfulness"] == 0.5
    assert r.quality_gates["contradictions"] is False and r.flagged
    assert r.methods_not_run["selfcheck"].startswith("SelfCheck sampling needs an LLM")
    assert 0.0 <= r.audit_score <= 1.0


def test_it_searches_the_passages_when_a_citation_anchor_is_invalid(embedder, ltp_passages):
    r = audit_answer(
        QUERY, "LTP in the hippocampus requires NMDA receptor activation [9].", ltp_passages, now=NOW
    )
    hit = r.claims[0].evidence[0]
    assert not hit.cited and hit.passage.id == "1"


KB_TEXTS = {
    "k1": "The hippocampus is essential for forming new episodic memories.",
    "k2": "Dopamine neurons signal reward prediction errors.",
    "k3": "The cafeteria opens at 9 AM on weekdays.",
}


def _kb(embedder) -> KnowledgeBase:
    index = HybridIndex()
    index.add(list(KB_TEXTS), list(KB_TEXTS.values()), embedder.encode(list(KB_TEXTS.values())))

    def lookup(ids):
        return {i: Passage(id=i, text=KB_TEXTS[i], source_type="kb") for i in ids}

    return KnowledgeBase(index, lookup)


def test_it_finds_evidence_in_the_knowledge_base(embedder):
    r = audit_answer(
        "When does the cafeteria open?", "The cafeteria opens at 9 AM on weekdays.", kb=_kb(embedder), now=NOW
    )
    assert r.claims[0].evidence[0].passage.id == "k3"
    assert r.claims[0].label == "SUPPORTED"


def test_it_computes_context_recall_over_knowledge_base_passages_when_the_request_has_none(embedder):
    r = audit_answer(
        "When does the cafeteria open?",
        "The cafeteria opens at 9 AM on weekdays.",
        kb=_kb(embedder),
        now=NOW,
        reference="The cafeteria opens at 9 AM on weekdays. Dolphins sleep with one eye open.",
    )
    assert r.metrics["context_recall"] == 0.5


def test_its_rag_score_embeds_neither_the_answer_nor_a_knowledge_base_chunk_again(embedder, ltp_passages):
    index = HybridIndex()
    index.add(list(KB_TEXTS), list(KB_TEXTS.values()), embedder.encode(list(KB_TEXTS.values())))
    kb = KnowledgeBase(
        index,
        lambda ids: {i: Passage(id=i, text=KB_TEXTS[i], source_type="kb") for i in ids},
        vectors=index.vectors,
    )
    embedded: list[str] = []

    def embed(texts):
        embedded.extend(texts)
        return embedder.encode(texts)

    answer = "LTP in the hippocampus requires NMDA receptor activation [1]. On weekdays the cafeteria opens at 9 AM."
    r = audit_answer(QUERY, answer, ltp_passages, kb=kb, now=NOW, embed=embed)

    assert {h.passage.id for c in r.claims for h in c.evidence} >= {"1", "k3"}
    assert r.metrics["rag_score"]["method"]["alignment"] == "embedding"
    assert 0.3 < r.metrics["rag_score"]["alignment"] <= 1.0
    assert not any("cafeteria" in t and "LTP" in t for t in embedded)  # never the whole answer
    assert KB_TEXTS["k3"] not in embedded  # the chunk's stored vector is used


def test_it_reports_no_evidence_when_nothing_was_retrieved(embedder):
    r = audit_answer(QUERY, "LTP requires NMDA receptors. The fee is $150.", [], now=NOW)
    assert len(r.claims) == 2
    assert all(c.label == "NEI" and c.verdict == "not_found" for c in r.claims)
    assert r.metrics["evidence_coverage"] == 0.0
    assert r.risk_flags[0]["type"] == "no_evidence" and r.risk_flags[0]["severity"] == "high"
    assert r.flagged


def test_it_audits_an_empty_answer_without_claims(embedder, ltp_passages):
    r = audit_answer(QUERY, "", ltp_passages, now=NOW)
    assert r.claims == [] and r.metrics["claims"] == 0
    assert r.metrics["faithfulness"] == 1.0 and r.metrics["evidence_coverage"] == 1.0


def test_it_flags_an_outdated_source_in_the_audit(embedder):
    ctx = [
        {
            "id": "1",
            "text": "LTP in the hippocampus requires NMDA receptor activation.",
            "published": date(2023, 1, 1),
            "domain": "neuroscience",
        }
    ]
    r = audit_answer(
        QUERY,
        "LTP in the hippocampus requires NMDA receptor activation [1].",
        ctx,
        domain="neuroscience",
        now=NOW,
    )
    assert any(f["type"] == "outdated_source" for f in r.risk_flags)


def test_it_computes_context_recall_against_a_reference_answer(embedder, ltp_passages):
    r = audit_answer(
        QUERY,
        "LTP requires NMDA receptors [1].",
        ltp_passages,
        now=NOW,
        reference="LTP in the hippocampus requires NMDA receptor activation. "
        "Dolphins sleep with one eye open.",
    )
    assert r.metrics["context_recall"] == 0.5


@pytest.mark.slow  # a 20,000-word answer
def test_it_audits_a_20000_word_answer_within_its_read_budget(embedder, ltp_passages):
    """Every claim is reported; those past the read budget (AUDIT_READ_BUDGET_CHARS) are NEI with
    their flag and counted, never dropped, and the claims read are verified as before."""
    from audit.constants import OVER_BUDGET_FLAG

    sentence = (
        "LTP in the hippocampus requires NMDA receptor activation in many experiments "
        "reported by several laboratories over the years. "
    )  # 20 words
    r = audit_answer(QUERY, sentence * 1000, ltp_passages, now=NOW)
    assert len(r.claims) == 1000
    read = [v for v in r.claims if OVER_BUDGET_FLAG not in v.risk_flags]
    assert 0 < len(read) < 1000 and all(v.label == "SUPPORTED" for v in read)
    unread = [v for v in r.claims if OVER_BUDGET_FLAG in v.risk_flags]
    assert all(v.label == "NEI" and not v.methods for v in unread)
    assert r.metrics["not_read"]["claims"] == len(unread) == 1000 - len(read)
    assert sum(f["type"] == OVER_BUDGET_FLAG for f in r.risk_flags) == len(unread)


def test_it_audits_non_english_and_odd_unicode_text(embedder):
    ctx = ["Die Jahresgebühr beträgt 150 Euro.", "海马体对记忆巩固至关重要。"]
    r = audit_answer(
        "Wie hoch ist die Gebühr?", "Die Jahresgebühr beträgt 150 Euro [1]. \u200b🧠\ufeff", ctx, now=NOW
    )
    assert r.claims and r.claims[0].label in ("SUPPORTED", "NEI", "REFUTED")
    assert 0.0 <= r.claims[0].confidence <= 1.0


def test_an_audit_fails_loudly_rather_than_drop_a_claim_the_methods_left_without_a_verdict(
    embedder, ltp_passages, monkeypatch
):
    from audit.pipeline import audit as pipeline_audit

    answer = "LTP in the hippocampus requires NMDA receptor activation [1]. The annual fee is $200 [2]."
    first = audit_answer(QUERY, answer, ltp_passages, now=NOW)
    second = first.claims[1]
    monkeypatch.setattr(pipeline_audit, "run_methods", lambda items, *args, **kwargs: [])  # answers no claim
    with pytest.raises(ValueError):
        audit_answer(
            QUERY,
            answer,
            ltp_passages,
            now=NOW,
            reuse=lambda draft: second if draft.text == second.claim.text else None,
        )
