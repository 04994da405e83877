"""Structural contradiction checks: each rule with a supported twin (the rule must stay silent) and a
contradicted one; the numeric range rule; how scoring combines them; the claim card details."""

from __future__ import annotations

import pytest

from audit.constants import AUDIT_SCORE_THRESHOLD, STRUCTURE_CONTRADICTION_CAP
from audit.pipeline import verify_claim
from audit.pipeline.contradiction import check
from audit.pipeline.methods.numeric import compare_numbers
from audit.pipeline.numbers import extract_ranges
from audit.pipeline.types import Passage


def _similarity(embedder):
    def sim(a, b):
        v = embedder.encode([a, b])
        return float(v[0] @ v[1])

    return sim


def _rules(report):
    return sorted({f.rule for f in report.findings})


NEG_EVIDENCE = (
    "LTP at the Schaffer collateral synapses of the hippocampal CA1 region is dependent on NMDA "
    "receptor activation."
)
PURGE_EVIDENCE = (
    "Records that are tied to an open escalation case must not be purged until the case is resolved."
)


def test_it_finds_a_negated_claim_against_an_affirmative_sentence():
    report = check("LTP does not require NMDA receptor activation.", [("p1", NEG_EVIDENCE)])
    assert report.contradicted and _rules(report) == ["negation"]
    assert report.findings[0].claim_words == "not" and report.findings[0].passage_id == "p1"
    assert report.findings[0].sentence.startswith("LTP at the Schaffer")


def test_it_stays_silent_when_claim_and_sentence_agree_in_polarity():
    assert not check("LTP requires NMDA receptor activation.", [("p1", NEG_EVIDENCE)]).findings
    assert not check(
        "Records tied to an open escalation case must not be purged.", [("p1", PURGE_EVIDENCE)]
    ).findings


def test_it_finds_an_affirmative_claim_against_a_negated_sentence():
    report = check(
        "Records tied to an open escalation case are purged immediately.", [("p1", PURGE_EVIDENCE)]
    )
    assert report.contradicted and _rules(report) == ["negation"]


def test_it_treats_a_lexical_negation_as_agreeing_with_not():
    report = check(
        "The mutant mice do not express the receptor.",
        [("p1", "The mutant mice lack the receptor, as expected from the deletion.")],
    )
    assert not report.contradicted


def test_it_reads_the_negation_in_the_clause_of_the_aligned_predicate():
    evidence = "The drug did not change blood pressure, but it reduced mortality in elderly patients."
    assert not check("The drug reduced mortality in elderly patients.", [("p1", evidence)]).contradicted
    assert check("The drug has not reduced mortality in elderly patients.", [("p1", evidence)]).contradicted


MOTOR = (
    "Afterwards he could not form new long-term declarative memories, although his working memory and "
    "his ability to learn new motor skills were preserved."
)


def test_it_finds_an_opposite_predicate_in_the_aligned_clause():
    report = check("He also lost the ability to learn new motor skills.", [("p1", MOTOR)])
    assert report.contradicted and _rules(report) == ["antonym"]
    assert (report.findings[0].claim_words, report.findings[0].evidence_words) == ("lost", "preserved")


def test_it_keeps_the_antonym_twin_that_uses_the_same_predicate():
    assert not check("His ability to learn new motor skills was preserved.", [("p1", MOTOR)]).findings


def test_it_splits_hyphenated_words_to_see_high_against_low_frequency():
    evidence = (
        "Long-term depression (LTD) is the opposite process: low-frequency stimulation at about 1 Hz "
        "for 10 to 15 minutes weakens synapses."
    )
    report = check("LTD is induced by high-frequency stimulation.", [("p1", evidence)])
    assert report.contradicted and report.findings[0].evidence_words == "low"
    assert not check("LTD is induced by low-frequency stimulation.", [("p1", evidence)]).contradicted


def test_it_ignores_an_antonym_whose_clause_has_the_other_polarity():
    # "not decreased" is no opposite of "increased": the double negation agrees rather than refutes
    evidence = "Serum ferritin was not decreased in treated patients at twelve weeks."
    report = check("Serum ferritin increased in treated patients at twelve weeks.", [("p1", evidence)])
    assert "antonym" not in _rules(report)


GRID = "May-Britt Moser and Edvard Moser discovered grid cells in the entorhinal cortex."


def test_it_finds_a_substituted_entity_in_the_same_slot(embedder):
    report = check("Grid cells were discovered in the amygdala.", [("p1", GRID)], _similarity(embedder))
    assert report.contradicted and _rules(report) == ["substitution"]
    assert report.findings[0].claim_words == "amygdala"
    assert report.findings[0].evidence_words == "entorhinal cortex"


def test_it_accepts_a_near_synonym_in_the_slot(embedder):
    evidence = "Dietary fibre lowered blood glucose in children with type 2 diabetes."
    report = check(
        "Dietary fibre lowered blood glucose in kids with type 2 diabetes.",
        [("p1", evidence)],
        _similarity(embedder),
    )
    assert not report.contradicted


def test_it_keeps_the_substitution_twin_naming_the_right_place(embedder):
    assert not check(
        "Grid cells were discovered in the entorhinal cortex.", [("p1", GRID)], _similarity(embedder)
    ).findings


def test_it_reports_a_named_entity_missing_from_the_evidence_without_refuting():
    report = check(
        "Grid cells in the entorhinal cortex were described by O'Keefe.",
        [("p1", "Grid cells in the entorhinal cortex were described in 2005.")],
    )
    assert report.missing_entity and not report.contradicted


def test_it_lets_a_clean_sentence_that_aligns_as_well_outweigh_a_contradicting_one():
    passages = [
        ("p1", "LTP is not blocked by NMDA receptor antagonists in the dentate gyrus."),
        ("p2", "LTP is blocked by NMDA receptor antagonists in the dentate gyrus."),
    ]
    assert not check(
        "LTP is blocked by NMDA receptor antagonists in the dentate gyrus.", passages
    ).contradicted


def test_it_parses_stated_ranges():
    ranges = extract_ranges("about 60 to 80 percent, between 10 and 20 mg, 5-7%, $3–4 million, 1990-1995")
    assert [(r.low, r.high, r.kind) for r in ranges] == [
        (60, 80, "percent"),
        (10, 20, "count"),
        (5, 7, "percent"),
        (3e6, 4e6, "currency"),
        (1990, 1995, "year"),
    ]


def test_it_matches_a_value_inside_a_stated_range_and_not_one_outside():
    ev = ["Motor symptoms usually appear after about 60 to 80 percent of these neurons have been lost."]
    inside = compare_numbers("Symptoms appear after about 70% of neurons are lost.", ev, 0.02, 0.1)
    assert inside["matched"] == 1 and inside["items"][0]["match_type"] == "within_range"
    outside = compare_numbers("Symptoms appear after about 95% of neurons are lost.", ev, 0.02, 0.1)
    assert outside["mismatched"] == 1


@pytest.mark.parametrize(
    "claim,evidence",
    [
        ("LTP does not require NMDA receptor activation.", NEG_EVIDENCE),
        ("He also lost the ability to learn new motor skills.", MOTOR),
        ("Grid cells were discovered in the amygdala.", GRID),
    ],
)
def test_it_labels_a_structural_contradiction_refuted_with_the_finding_on_the_card(embedder, claim, evidence):
    v = verify_claim(claim, [Passage(id="p1", text=evidence, title="t")])
    assert v.label == "REFUTED" and v.verdict == "contradicted"
    assert v.confidence <= STRUCTURE_CONTRADICTION_CAP
    structure = next(m for m in v.methods if m.method == "structure")
    assert structure.verdict == "contradicted" and structure.details["findings"]
    assert structure.details["findings"][0]["sentence"]


def test_it_keeps_a_claim_with_a_missing_named_entity_below_supported(embedder):
    v = verify_claim(
        "Grid cells in the entorhinal cortex were described by O'Keefe.",
        [Passage(id="p1", text="Grid cells in the entorhinal cortex were described in 2005.", title="t")],
    )
    assert v.label != "SUPPORTED" and v.confidence < AUDIT_SCORE_THRESHOLD


def test_it_reads_a_possessive_as_the_entity_itself():
    claim = "It was the main capital during Egypt's New Kingdom."
    assert not check(claim, [("p1", "Thebes was the main capital of Egypt during the New Kingdom.")]).findings
    # the same sentence naming another country: the possessive's entity is missing, and it is found
    other = check(claim, [("p1", "Thebes was the main capital of Nubia during the New Kingdom.")])
    assert _rules(other) == ["missing_entity"]


def test_it_does_not_take_a_few_for_the_opposite_of_more():
    claim = "Strong relationships make students more likely to listen."
    report = check(claim, [("p1", "A few strong relationships make students likely to listen.")])
    assert "antonym" not in _rules(report)
    # the same evidence with the real opposite ("less") is an antonym finding
    opposite = check(claim, [("p1", "A few strong relationships make students less likely to listen.")])
    assert "antonym" in _rules(opposite)


def test_it_knows_an_entity_written_as_two_words_or_as_initials():
    assert not check(
        "The first Gameboy was released by Nintendo in 1989.",
        [("p1", "Nintendo's Game Boy handheld was first released in 1989.")],
    ).findings
    assert not check(
        "UT enrolls more than 7,800 engineering students at its Cockrell School.",
        [
            (
                "p1",
                "The Cockrell School at the University of Texas enrolls more than 7,800 "
                "engineering students.",
            )
        ],
    ).findings
    assert check(
        "The first Gameboy was released by Sega in 1989.",
        [("p1", "Nintendo's Game Boy handheld was first released in 1989.")],
    ).missing_entity
