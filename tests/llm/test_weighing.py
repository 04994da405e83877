"""The LLM judge is one signal weighed with the offline judge's (docs/LLM.md#weighing-the-llm-judge)."""

from __future__ import annotations

import pytest

from audit.constants import LLM_JUDGE_WEIGHT, LLM_OFFLINE_CONFIDENT_MARGIN, Thresholds
from audit.pipeline.llm.combine import weigh
from audit.pipeline.scoring import label_claim
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult, Passage
from escalation.policy import review_reasons

T = Thresholds()


# a fitted weighing (issue 37: unfitted, the LLM moves nothing; these tests read a fit's behaviour)
FIT = {"weight": 0.25, "margin": 0.05}


def _weigh(offline, p_ref, llm, llm_p_ref, **fit):
    return weigh(
        offline,
        p_ref,
        llm,
        llm_p_ref,
        threshold=T.audit_score_threshold,
        refuted_threshold=T.refuted_threshold,
        **(fit or FIT),
    )


def test_unfitted_the_llm_moves_no_verdict_and_every_disagreement_goes_to_review():
    assert (LLM_JUDGE_WEIGHT, LLM_OFFLINE_CONFIDENT_MARGIN) == (0.0, 0.0)
    unfitted = {"weight": LLM_JUDGE_WEIGHT, "margin": LLM_OFFLINE_CONFIDENT_MARGIN}
    unsure = T.audit_score_threshold - 0.01  # a fit would let the LLM tip it; unfitted it stays
    w = _weigh(unsure, 0.1, 0.95, 0.0, **unfitted)
    assert (w.confidence, w.p_refuted, w.disagreement) == (unsure, 0.1, True)
    agree = _weigh(0.95, 0.0, 0.95, 0.0, **unfitted)
    assert (agree.confidence, agree.disagreement) == (0.95, False)
    for offline in (0.05, 0.5, unsure, 0.9, 0.99):
        for llm, llm_p_ref in ((0.95, 0.0), (0.6, 0.05), (0.2, 0.1), (0.05, 0.95)):
            assert _weigh(offline, 0.0, llm, llm_p_ref, **unfitted).confidence == offline


def test_a_confident_offline_support_stands_when_the_llm_contradicts_it():
    w = _weigh(0.95, 0.0, 0.05, 0.95)
    assert (w.confidence, w.p_refuted, w.disagreement) == (0.95, 0.0, True)


def test_a_confident_offline_doubt_is_not_flipped_to_supported_by_the_llm():
    w = _weigh(0.2, 0.1, 0.95, 0.0)
    assert (w.confidence, w.disagreement) == (0.2, True)


def test_an_unsure_offline_judge_moves_by_the_llm_weight_only():
    unsure = T.audit_score_threshold - FIT["margin"] / 2
    w = _weigh(unsure, 0.1, 0.95, 0.0)
    assert not w.disagreement
    assert w.confidence == pytest.approx((1 - FIT["weight"]) * unsure + FIT["weight"] * 0.95)
    assert w.confidence >= T.audit_score_threshold  # close to the threshold: the LLM may tip it


def test_the_llm_never_changes_the_label_of_a_confident_offline_verdict():
    margin = FIT["margin"]
    for offline in (T.audit_score_threshold + margin, T.audit_score_threshold - margin, 0.05, 0.99):
        for llm, llm_p_ref in ((0.95, 0.0), (0.6, 0.05), (0.2, 0.1), (0.05, 0.95)):
            w = _weigh(offline, 0.0, llm, llm_p_ref)
            assert (w.confidence >= T.audit_score_threshold) == (offline >= T.audit_score_threshold)


def test_agreeing_judges_blend_without_a_disagreement():
    w = _weigh(0.95, 0.0, 0.95, 0.0)
    assert w.confidence == pytest.approx(0.95) and not w.disagreement


def _labelled(offline_score, llm_verdict):
    from audit.constants import LLM_JUDGE_VERDICTS

    score, p_ref, _, verdict = LLM_JUDGE_VERDICTS[llm_verdict]
    claim = ClaimDraft(claim_id="c1", text="The board meets monthly.", span=(0, 24))
    hits = [EvidenceHit(passage=Passage(id="p1", text="The board meets every month."), relevance=1.0)]
    results = {
        "entailment": MethodResult("entailment", score=offline_score, details={"p_refuted": 0.0}),
        "llm_judge": MethodResult("llm_judge", score=score, verdict=verdict, details={"p_refuted": p_ref}),
    }
    return label_claim(claim, hits, results, T)


def test_a_claim_the_llm_contradicts_against_a_confident_offline_verdict_goes_to_review_unflipped():
    v = _labelled(0.95, "CONTRADICTED")
    assert v.label == "SUPPORTED" and "llm_disagreement" in v.risk_flags
    reasons = review_reasons(
        label=v.label,
        confidence=v.confidence,
        domain="",
        regulated_domains=[],
        low_confidence_threshold=T.low_confidence_threshold,
        risk_flags=v.risk_flags,
    )
    assert reasons == ["llm_disagreement"]


def test_a_claim_both_judges_support_opens_no_case():
    v = _labelled(0.95, "SUPPORTED")
    assert v.label == "SUPPORTED" and "llm_disagreement" not in v.risk_flags
    assert not review_reasons(
        label=v.label,
        confidence=v.confidence,
        domain="",
        regulated_domains=[],
        low_confidence_threshold=T.low_confidence_threshold,
        risk_flags=v.risk_flags,
    )
