"""Claim extraction: segmentation, assertion filter, decomposition, type, importance, anchors."""

from __future__ import annotations

import time

from audit.pipeline.extraction import (
    citation_anchors,
    claim_type,
    claims_json,
    decompose,
    extract_claims,
    importance,
    is_assertion,
    split_sentences,
)


def test_it_keeps_abbreviations_decimals_and_initials_inside_sentences():
    text = (
        "Dr. Smith et al. measured 3.5 times more uptake in the U.S. than in e.g. Europe. "
        "J. Doe agreed. The next trial was calm."
    )
    assert split_sentences(text) == [
        "Dr. Smith et al. measured 3.5 times more uptake in the U.S. than in e.g. Europe.",
        "J. Doe agreed.",
        "The next trial was calm.",
    ]


def test_it_splits_list_items_headings_and_keeps_citation_markers_with_their_sentence():
    text = "## Findings\n- The fee is $150 [1].\n- Payment is due in 30 days (Source: 2).\n1. Refunds take a week [Key]."
    sents = split_sentences(text)
    assert sents == [
        "## Findings",
        "- The fee is $150 [1].",
        "- Payment is due in 30 days (Source: 2).",
        "1. Refunds take a week [Key].",
    ]


def test_a_quoted_question_inside_a_sentence_does_not_end_it_with_or_without_its_marker():
    cited = 'Ask questions such as "Why now?[7]" or "How likely is it?[8]" Then stop. He said "Go!" and left.'
    plain = 'Ask questions such as "Why now?" or "How likely is it?" Then stop. He said "Go!" and left.'
    assert split_sentences(cited) == [
        'Ask questions such as "Why now?[7]" or "How likely is it?[8]"',
        "Then stop.",
        'He said "Go!" and left.',
    ]
    assert split_sentences(plain) == [
        'Ask questions such as "Why now?" or "How likely is it?"',
        "Then stop.",
        'He said "Go!" and left.',
    ]


def test_it_reads_every_citation_anchor_style():
    text = "A [cite:ab12cd] B [1] C [2, 3] D [Source: 4] E (Source: 5) F [Arxiv] G [Arxiv-2]"
    assert citation_anchors(text) == ("cite:ab12cd", "1", "2", "3", "4", "5", "Arxiv", "Arxiv-2")


def test_it_leaves_out_questions_hypotheticals_opinions_connectors_greetings_and_meta_statements():
    for sentence in [
        "What does LTP require?",
        "Suppose the fee were waived for everyone.",
        "I think the policy is too strict.",
        "However,",
        "Thank you for your question.",
        "In this answer I summarise the sources.",
        "Hope this helps!",
    ]:
        assert not is_assertion(sentence), sentence
    assert is_assertion("The fee is $150.")
    assert is_assertion("LTP requires NMDA receptor activation.")


def test_it_splits_coordinated_facts_into_stand_alone_claims():
    parts = decompose("GPT-4 was released in March 2023; it achieved 90% on the bar exam.")
    assert parts == ["GPT-4 was released in March 2023.", "GPT-4 achieved 90% on the bar exam."]


def test_it_does_not_split_short_claims():
    assert decompose("Cats and dogs are pets.") == ["Cats and dogs are pets."]


def test_it_types_numeric_policy_definition_and_fact_claims():
    assert claim_type("The fee is $150.") == "numeric"
    assert claim_type("All requests must be submitted in writing.") == "policy"
    assert claim_type("A business day refers to Monday through Friday.") == "definition"
    assert claim_type("The office is on the second floor.") == "fact"


def test_it_rates_numeric_and_direct_answers_critical_policies_material():
    assert importance("The fee is $150.") == "critical"
    assert importance("LTP requires NMDA receptors.", "What does LTP require?") == "critical"
    assert importance("Requests must be made in writing.") == "material"
    assert importance("Cats are pets.") == "minor"


def test_it_numbers_claims_in_reading_order_and_is_deterministic():
    answer = (
        "LTP requires NMDA receptors [1]. What else? The fee is $150, and it must be paid "
        "within 30 days [2]. I think that is fair."
    )
    first = claims_json(answer)
    assert first == claims_json(answer)
    assert [c["claim_id"] for c in first] == ["c1", "c2", "c3"]
    assert [c["text"] for c in first] == [
        "LTP requires NMDA receptors.",
        "The fee is $150.",
        "The fee must be paid within 30 days.",
    ]
    claims = extract_claims(answer)
    assert claims[0].citations == ("1",) and claims[2].citations == ("2",)


def test_it_returns_no_claims_for_an_empty_answer():
    assert extract_claims("") == []
    assert extract_claims("   \n\n ") == []


def test_it_extracts_a_20000_word_answer_quickly():
    sentence = "The hippocampus supports the consolidation of episodic memory in adults. "
    answer = sentence * 2000  # 20,000 words
    start = time.perf_counter()
    claims = extract_claims(answer)
    assert len(claims) == 2000
    assert time.perf_counter() - start < 10


def test_it_handles_non_english_and_odd_unicode():
    answer = (
        "Die Gebühr beträgt 150 Euro und ist innerhalb von 30 Tagen fällig. "
        "海马体对记忆巩固至关重要。 Zero\u200bwidth and emoji 🧠 text is here. \ufeff"
    )
    claims = extract_claims(answer)
    assert claims, "a German sentence is a claim"
    assert claims[0].text.startswith("Die Gebühr")
    assert all(isinstance(c.text, str) and c.text for c in claims)
