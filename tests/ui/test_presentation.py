"""Pure helpers of the pages: inline claim marks, word diffs, chart figures (no database)."""

from __future__ import annotations

from types import SimpleNamespace

from audit.web import charts
from audit.web.presentation import key_metrics, mark_claims, word_diff


def claim(cid, start, end, label="SUPPORTED"):
    return SimpleNamespace(claim_id=cid, span_start=start, span_end=end, label=label)


def test_it_cuts_text_into_plain_and_claim_stretches_in_order():
    text = "One. Two. Three."
    segments = mark_claims(text, [claim("c2", 5, 9), claim("c1", 0, 4)])
    assert [(s.text, [c.claim_id for c in s.claims]) for s in segments] == [
        ("One.", ["c1"]),
        (" ", []),
        ("Two.", ["c2"]),
        (" Three.", []),
    ]
    assert "".join(s.text for s in segments) == text


def test_it_groups_claims_sharing_a_sentence_and_keeps_badges_of_bad_spans():
    text = "Alpha and beta. Gamma."
    segments = mark_claims(
        text, [claim("c1", 0, 15), claim("c2", 0, 15), claim("c3", 10, 20), claim("c4", 30, 40)]
    )
    assert [c.claim_id for c in segments[0].claims] == ["c1", "c2", "c3", "c4"]
    assert "".join(s.text for s in segments) == text


def test_it_still_shows_badges_when_no_span_fits_the_text():
    segments = mark_claims("Short.", [claim("c1", 50, 60)])
    assert segments[-1].text == "" and [c.claim_id for c in segments[-1].claims] == ["c1"]


def test_it_diffs_words_keeping_whitespace():
    parts = word_diff("The cat sat on the mat.", "The dog sat on the mat.")
    assert [(p.op, p.text) for p in parts] == [
        ("equal", "The "),
        ("delete", "cat"),
        ("insert", "dog"),
        ("equal", " sat on the mat."),
    ]


def test_it_picks_the_headline_metrics_in_plain_words_and_leaves_internal_scores_out():
    metrics = {
        "zeta": 0.1,
        "p_refuted": 1.0,
        "best_similarity": 0.84,
        "faithfulness": 0.8,
        "flag": True,
        "note": "x",
    }
    assert key_metrics(metrics) == [("faithfulness", 0.8), ("similarity to the best passage", 0.84)]


def test_it_says_what_each_label_means_with_p_supported_named_as_such():
    from audit.web.presentation import label_meaning

    assert (
        label_meaning("SUPPORTED", 0.951) == "Supported: the evidence backs this claim (P(supported) 0.95)."
    )
    assert (
        label_meaning("REFUTED", 0.08) == "Refuted: the evidence contradicts this claim (P(supported) 0.08)."
    )
    assert "no source backs this claim well enough" in label_meaning("NEI", 0.35)
    assert label_meaning("NEI", 0.35).endswith("(P(supported) 0.35).")


def test_it_builds_sla_attainment_bars_with_met_over_total_text():
    fig = charts.sla_attainment({1: {"met": 3, "total": 4}, 2: {"met": 0, "total": 0}})
    bar = fig["data"][0]
    assert bar["y"] == [0.75, None] and bar["text"] == ["3 of 4 met", "0 of 0 met"]
    assert fig["layout"]["title"]["text"] == "SLA attainment by tier"


def test_the_word_diff_rebuilds_both_texts_from_its_parts():
    import random

    rng = random.Random(7)
    words = ["a", "b", "c.", "d!", "e\n", "f", "g?", "8", "4"]
    for _ in range(500):
        before = " ".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
        after = " ".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
        parts = word_diff(before, after)
        assert "".join(p.text for p in parts if p.op != "insert") == before
        assert "".join(p.text for p in parts if p.op != "delete") == after
        assert all(p.text for p in parts) and not parts.too_long


def test_the_word_diff_finds_one_change_in_a_long_repetitive_text():
    before = "`a " * 30_000
    after = before[:30_000] + "changed " + before[30_000:]
    parts = word_diff(before, after)
    assert [(p.op, p.text) for p in parts if p.op != "equal"] == [("insert", "changed ")]


def test_the_word_diff_says_too_long_to_compare_past_its_sentence_cap(monkeypatch):
    from audit import constants

    monkeypatch.setattr(constants, "DIFF_MAX_CHANGED_SENTENCES", 3)
    close = word_diff("A. B. C. D. E.", "A. X. C. Y. E.")
    assert not close.too_long and [p.text for p in close if p.op == "insert"] == ["X.", "Y."]
    far = word_diff("A. B. C. D. E.", "V. W. X. Y. Z.")
    assert list(far) == [] and "Too long to compare" in far.too_long


def test_the_word_diff_strikes_and_adds_a_stretch_too_large_to_align_word_by_word(monkeypatch):
    from audit import constants

    monkeypatch.setattr(constants, "DIFF_MAX_WORD_CELLS", 4)
    parts = word_diff("Keep. one two three four. Keep.", "Keep. one six three five. Keep.")
    assert [(p.op, p.text) for p in parts] == [
        ("equal", "Keep. one "),
        ("delete", "two three four."),
        ("insert", "six three five."),
        ("equal", " Keep."),
    ]
