"""Step 4 of fit_nli: in-style pairs and their hard negatives (audit/evaluation/nli_attribution.py)."""

import numpy as np

from audit.evaluation.nli_attribution import (
    REPLAY_PAIRS,
    C,
    E,
    claim_sentences,
    mixed_pairs,
    read_premise,
    reverse_by_parse,
    reversed_twin,
)
from audit.evaluation.nli_data import NOT_ENTAILMENT, NLIPair

DOC = (
    "The council met on Monday. It approved the new library budget after a long debate. "
    "Residents had asked for longer opening hours. The mayor thanked the volunteers."
)


def summedits(summary: str, label: str) -> dict:
    return {
        "premise": DOC,
        "hypothesis": summary,
        "label": label,
        "source": "summedits-news",
        "group": "doc1",
    }


def test_a_consistent_summary_gives_each_of_its_sentences_as_entailed():
    rows = [summedits("The council met on Monday. It approved the library budget.", "entailment")]
    assert [(s, lab) for _, s, lab in claim_sentences(rows)] == [
        ("The council met on Monday.", E),
        ("It approved the library budget.", E),
    ]


def test_an_inconsistent_edit_gives_only_its_edited_sentence_as_not_entailed():
    rows = [
        summedits("The council met on Monday. It approved the library budget.", "entailment"),
        summedits("The council met on Monday. It rejected the library budget.", "not_entailment"),
    ]
    edited = [(s, lab) for _, s, lab in claim_sentences(rows) if lab != E]
    assert edited == [("It rejected the library budget.", NOT_ENTAILMENT)]


def test_an_edit_without_a_consistent_twin_is_left_out():
    rows = [summedits("The council met on Tuesday. It approved the library budget.", "not_entailment")]
    assert claim_sentences(rows) == []


def test_the_premise_is_what_the_judge_reads_for_the_claim():
    premise = read_premise("The mayor thanked the volunteers.", DOC, words=12)
    assert "mayor thanked the volunteers" in premise
    assert len(premise.split()) <= 12


def test_subject_and_object_trade_places_on_the_parse_for_any_verb():
    from audit.pipeline.binding import get_parser

    swapped = reverse_by_parse("The committee criticised the regulator.", get_parser())
    assert swapped == "The regulator criticised the committee."


def test_a_finding_turned_round_is_a_contradiction():
    from audit.evaluation.minimal_pairs import opposite_table
    from audit.pipeline.binding import get_parser

    made = reversed_twin(
        "Exercise increases insulin sensitivity in older adults.",
        np.random.default_rng(0),
        {"opposites": opposite_table(), "entities": []},
        get_parser(),
    )
    assert made is not None and made[1] == C
    assert made[0] != "Exercise increases insulin sensitivity in older adults."


def _pairs(source: str, n: int) -> list[NLIPair]:
    return [NLIPair(f"premise {k}", f"claim {k}", E, source, f"g{k}") for k in range(n)]


def test_step_four_mixes_every_minimal_pair_and_a_sample_of_the_public_ones_in_a_seeded_order():
    built, public, minimal = (
        _pairs("attribution", 40),
        _pairs("snli", REPLAY_PAIRS + 10),
        _pairs("generated:unit", 7),
    )
    mixed = mixed_pairs(built, public, minimal, seed=3)
    sources = [p.source for p in mixed]
    assert (sources.count("attribution"), sources.count("snli"), sources.count("generated:unit")) == (
        40,
        REPLAY_PAIRS,
        7,
    )
    assert mixed == mixed_pairs(built, public, minimal, seed=3)
    assert mixed[:47] != built + minimal
