"""Pure helpers of the pages: inline claim marks, word diffs, chart figures (no database)."""

from __future__ import annotations

from types import SimpleNamespace

from audit import charts
from audit.presentation import key_metrics, mark_claims, word_diff


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


def test_it_says_what_each_label_means_with_its_confidence():
    from audit.presentation import label_meaning

    assert (
        label_meaning("SUPPORTED", 0.951) == "Supported: confidence 0.95 that the evidence backs this claim."
    )
    assert label_meaning("REFUTED", 0.08).startswith("Refuted: the evidence contradicts this claim")
    assert "nothing found backs or contradicts" in label_meaning("NEI", 0.35)


def test_it_builds_sla_attainment_bars_with_met_over_total_text():
    fig = charts.sla_attainment({1: {"met": 3, "total": 4}, 2: {"met": 0, "total": 0}})
    bar = fig["data"][0]
    assert bar["y"] == [0.75, None] and bar["text"] == ["3 of 4 met", "0 of 0 met"]
    assert fig["layout"]["title"]["text"] == "SLA attainment by tier"
