"""Each verification method on hand-written cases (issue 3 §Tests)."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from audit.constants import Thresholds
from audit.pipeline import verify_claim
from audit.pipeline.methods import REGISTRY, VerifyContext
from audit.pipeline.methods.cove import questions_for
from audit.pipeline.methods.linguistic import linguistic_score
from audit.pipeline.methods.numeric import compare_numbers
from audit.pipeline.types import ClaimDraft, EvidenceHit, Passage

NOW = datetime(2026, 11, 22, tzinfo=timezone.utc)
LTP = (
    "Long-term potentiation (LTP) in the hippocampus requires the activation of NMDA receptors. "
    "Blocking NMDA receptors prevents LTP induction."
)


def _claim(text):
    return ClaimDraft(claim_id="c1", text=text, span=(0, len(text)))


def _hits(*passages):
    return [
        EvidenceHit(passage=p if isinstance(p, Passage) else Passage(id=f"p{i}", text=p), relevance=1.0)
        for i, p in enumerate(passages, start=1)
    ]


def test_it_labels_a_claim_stated_by_its_evidence_supported(embedder):
    v = verify_claim("LTP in the hippocampus requires NMDA receptor activation.", [LTP])
    assert v.label == "SUPPORTED" and v.confidence >= 0.8
    assert "entailment" in v.method_names


def test_it_labels_a_claim_absent_from_the_evidence_not_supported(embedder):
    v = verify_claim("The Eiffel Tower was completed in Paris for the 1889 World's Fair.", [LTP])
    assert v.label != "SUPPORTED" and v.confidence < 0.5


def test_it_labels_a_contradicted_number_refuted(embedder):
    v = verify_claim(
        "The annual membership fee is $200.",
        ["The annual membership fee is $150 and must be paid within 30 days."],
    )
    assert v.label == "REFUTED" and v.verdict == "contradicted" and v.confidence < 0.1
    numeric = next(m for m in v.methods if m.method == "numeric")
    assert numeric.details["items"][0]["match_type"] == "mismatch"


def test_it_labels_a_claim_without_any_evidence_nei(embedder):
    v = verify_claim("LTP requires NMDA receptors.", [])
    assert (v.label, v.verdict, v.confidence) == ("NEI", "not_found", 0.0)
    assert "no_evidence" in v.risk_flags


def test_the_entailment_judge_scores_a_negated_claim_below_the_plain_one(embedder):
    plain = verify_claim("LTP requires the activation of NMDA receptors.", [LTP])
    negated = verify_claim("LTP does not require the activation of NMDA receptors.", [LTP])
    assert negated.confidence < plain.confidence


def test_it_matches_numbers_across_multipliers_rounding_and_approximation():
    assert (
        compare_numbers("Revenue was $3.2B.", ["Revenue reached $3,190 million."], 0.02, 0.1)["matched"] == 1
    )
    assert (
        compare_numbers("About 25% of patients improved.", ["In total 24% of patients improved."], 0.02, 0.1)[
            "matched"
        ]
        == 1
    )
    res = compare_numbers(
        "The trial enrolled 500 patients.", ["The trial enrolled 350 patients in total."], 0.02, 0.1
    )
    assert res["mismatched"] == 1 and res["items"][0]["evidence_value"] == "350"
    assert compare_numbers("It opened in 1998.", ["The museum is large."], 0.02, 0.1)["absent"] == 1


def test_numeric_verification_does_not_run_on_a_claim_without_numbers():
    r = REGISTRY["numeric"].verify(_claim("LTP needs NMDA receptors."), _hits(LTP), VerifyContext())
    assert not r.ran


def test_cove_asks_about_numbers_and_names_and_checks_them_against_the_evidence():
    qs = questions_for("Arantius named the hippocampus in 1587.")
    assert {q["kind"] for q in qs} == {"year", "entity"}
    ctx = VerifyContext(now=NOW)
    wrong = REGISTRY["cove"].verify(
        _claim("Arantius named the hippocampus in 1587."),
        _hits("The anatomist Arantius named the hippocampus in 1564."),
        ctx,
    )
    right = REGISTRY["cove"].verify(
        _claim("Arantius named the hippocampus in 1564."),
        _hits("The anatomist Arantius named the hippocampus in 1564."),
        ctx,
    )
    assert right.score == 1.0 and wrong.score < 1.0


def test_it_flags_conflicting_sources(embedder):
    v = verify_claim(
        "The membership fee is $150.",
        ["The membership fee is $150 per year.", "The membership fee is $90 per year."],
    )
    assert "conflict" in v.risk_flags
    assert v.label != "SUPPORTED"


def test_it_flags_a_source_older_than_the_domain_policy():
    old = Passage(id="p1", text=LTP, published=date(2024, 1, 1), domain="neuroscience")
    fresh = Passage(id="p2", text=LTP, published=date(2026, 6, 1), domain="neuroscience")
    ctx = VerifyContext(now=NOW)
    stale = REGISTRY["freshness"].verify(_claim("LTP needs NMDA receptors."), _hits(old), ctx)
    assert "outdated_source" in stale.flags and stale.details["sources"][0]["limit_months"] == 18
    ok = REGISTRY["freshness"].verify(_claim("LTP needs NMDA receptors."), _hits(fresh), ctx)
    assert not ok.flags
    # general sources may be 36 months old; a workspace can tighten that
    general = Passage(id="p3", text=LTP, published=date(2024, 1, 1), domain="general")
    assert not REGISTRY["freshness"].verify(_claim("x is y."), _hits(general), ctx).flags
    strict = VerifyContext(now=NOW, thresholds=Thresholds().updated({"freshness_months": {"general": 12}}))
    assert REGISTRY["freshness"].verify(_claim("x is y."), _hits(general), strict).flags == [
        "outdated_source"
    ]


def test_freshness_does_not_run_without_dated_evidence():
    assert not REGISTRY["freshness"].verify(_claim("x is y."), _hits(LTP), VerifyContext(now=NOW)).ran


@pytest.mark.parametrize(
    "text,expected",
    [
        ("According to the study, the drug works.", 0.65),
        ("The drug may possibly work.", 0.2),
        ("The drug works.", 0.5),
    ],
)
def test_linguistic_indicators_move_the_score_by_fixed_steps(text, expected):
    assert linguistic_score(text)[0] == pytest.approx(expected)


def test_passages_of_one_document_do_not_conflict(embedder):
    v = verify_claim(
        "The membership fee is $150.",
        [
            {"id": "p0", "title": "Fees page", "text": "The membership fee is $150 per year."},
            {"id": "p1", "title": "Fees page", "text": "The membership fee is $90 per year."},
        ],
    )
    assert "conflict" not in v.risk_flags


def test_the_fast_depth_judges_from_the_words_alone(embedder):
    fast = Thresholds().updated({"verification_depth": "fast"})
    supported = verify_claim(
        "LTP in the hippocampus requires NMDA receptor activation.", [LTP], thresholds=fast
    )
    absent = verify_claim("The Eiffel Tower was completed for the 1889 World's Fair.", [LTP], thresholds=fast)
    assert supported.label == "SUPPORTED" and absent.label != "SUPPORTED"
    assert supported.confidence > absent.confidence
    with pytest.raises(ValueError):
        Thresholds().updated({"verification_depth": "deep"})


def test_it_compares_at_most_the_configured_number_of_a_claims_quantities_and_counts_the_rest():
    from audit.constants import NUMERIC_MAX_CLAIM_QUANTITIES

    claim = "The counts were " + ", ".join(str(n) for n in range(1, 501)) + "."
    res = compare_numbers(claim, ["The counts were 1 and 2."], 0.02, 0.1)
    assert len(res["items"]) == NUMERIC_MAX_CLAIM_QUANTITIES
    assert res["unchecked"] == 500 - NUMERIC_MAX_CLAIM_QUANTITIES
    assert res["matched"] == 2
