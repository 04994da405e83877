"""Labels at their thresholds and the answer-level metric formulas (seed 000 §5, §7; RAGAS)."""

from __future__ import annotations

import pytest

from audit.constants import Thresholds
from audit.pipeline import scoring
from audit.pipeline.entailment_model import confidence_from_logit
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit, MethodResult, Passage

T = Thresholds()


def _claim(importance="material", text="LTP needs NMDA receptors."):
    return ClaimDraft(claim_id="c1", text=text, span=(0, len(text)), importance=importance)


def _hit():
    return [EvidenceHit(passage=Passage(id="p1", text="LTP needs NMDA receptors."), relevance=1.0)]


def _label(conf, p_ref=0.0, numeric=None, flags=()):
    results = {
        "entailment": MethodResult("entailment", score=conf, details={"p_refuted": p_ref}, flags=list(flags))
    }
    if numeric:
        results["numeric"] = MethodResult("numeric", score=0.0, verdict=numeric)
    return scoring.label_claim(_claim(), _hit(), results, T)


def test_it_labels_supported_exactly_at_the_audit_threshold():
    v = _label(0.80)
    assert (v.label, v.verdict) == ("SUPPORTED", "supported")


def test_it_labels_just_below_the_threshold_weak_nei():
    v = _label(0.7999)
    assert (v.label, v.verdict) == ("NEI", "weak")


def test_it_labels_below_the_weak_threshold_not_found():
    assert _label(0.4999).verdict == "not_found"
    assert _label(0.50).verdict == "weak"


def test_it_labels_a_contradicted_claim_refuted_with_low_confidence():
    v = _label(0.2, p_ref=0.5)
    assert (v.label, v.verdict) == ("REFUTED", "contradicted")
    assert v.confidence == pytest.approx(0.2)


def test_it_labels_a_contradicted_number_refuted_with_confidence_near_zero():
    v = _label(0.6, numeric="contradicted")
    assert v.label == "REFUTED" and v.confidence <= scoring.CONTRADICTION_CAP


def test_it_never_labels_a_claim_with_conflicting_sources_supported():
    v = _label(0.95, flags=["conflict"])
    assert v.label == "NEI" and v.verdict == "contradicted" and "conflict" in v.risk_flags
    assert v.confidence < T.audit_score_threshold


def test_it_labels_a_claim_without_evidence_nei_not_found_with_zero_confidence():
    v = scoring.label_claim(_claim(), [], {}, T)
    assert (v.label, v.verdict, v.confidence) == ("NEI", "not_found", 0.0)
    assert "no_evidence" in v.risk_flags


def test_it_maps_the_balanced_logit_zero_onto_the_threshold():
    assert confidence_from_logit(0.0, 0.8) == pytest.approx(0.8)
    assert confidence_from_logit(0.0, 0.6) == pytest.approx(0.6)
    assert confidence_from_logit(-5.0, 0.8) < 0.05
    assert confidence_from_logit(5.0, 0.8) > 0.99


def test_a_workspace_override_moves_the_supported_threshold():
    strict = Thresholds().updated({"audit_score_threshold": 0.9})
    results = {"entailment": MethodResult("entailment", score=0.85, details={})}
    assert scoring.label_claim(_claim(), _hit(), results, strict).label == "NEI"
    assert scoring.label_claim(_claim(), _hit(), results, T).label == "SUPPORTED"
    with pytest.raises(ValueError):
        Thresholds().updated({"no_such_threshold": 1})


def _verdict(verdict, importance="material", label=None):
    label = label or {"supported": "SUPPORTED", "contradicted": "REFUTED"}.get(verdict, "NEI")
    return ClaimVerdict(claim=_claim(importance), label=label, verdict=verdict, confidence=0.5)


def test_it_computes_coverage_and_unsupported_rate_over_non_minor_claims():
    vs = [
        _verdict("supported"),
        _verdict("weak"),
        _verdict("not_found"),
        _verdict("contradicted"),
        _verdict("not_found", importance="minor"),
    ]
    assert scoring.coverage(vs) == pytest.approx(2 / 4)
    assert scoring.unsupported_rate(vs) == pytest.approx(1 / 4)
    assert scoring.coverage([_verdict("not_found", "minor")]) == 1.0
    assert scoring.coverage(vs, any_evidence=False) == 0.0


def test_it_computes_ragas_faithfulness_and_context_precision():
    vs = [_verdict("supported"), _verdict("supported"), _verdict("weak"), _verdict("contradicted")]
    assert scoring.faithfulness(vs) == pytest.approx(0.5)
    assert scoring.faithfulness([]) == 1.0
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2
    assert scoring.context_precision([True, False, True]) == pytest.approx((1 + 2 / 3) / 2)
    assert scoring.context_precision([False, False]) == 0.0


def test_it_weights_the_audit_score_and_applies_the_quality_gates():
    metrics = {
        "faithfulness": 1.0,
        "mean_confidence": 0.5,
        "answer_relevance": 0.0,
        "context_precision": 1.0,
        "evidence_coverage": 0.85,
        "unsupported_rate": 0.05,
    }
    w = T.audit_score_weights
    expected = (w["faithfulness"] * 1.0 + w["mean_confidence"] * 0.5 + w["context_precision"] * 1.0) / sum(
        w.values()
    )
    assert scoring.audit_score(metrics, T) == pytest.approx(expected)
    gates = scoring.quality_gates(metrics, [_verdict("supported")], T)
    assert gates == {
        "evidence_coverage": True,
        "unsupported_rate": True,
        "critical_unsupported": True,
        "contradictions": True,
    }
    gates = scoring.quality_gates(
        {**metrics, "evidence_coverage": 0.84, "unsupported_rate": 0.06},
        [_verdict("contradicted"), _verdict("not_found", "critical")],
        T,
    )
    assert gates == {
        "evidence_coverage": False,
        "unsupported_rate": False,
        "critical_unsupported": False,
        "contradictions": False,
    }
