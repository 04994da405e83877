"""The contrastive suite in the repository: its shape, and how a family is scored."""

from __future__ import annotations

from collections import Counter, defaultdict

from audit.evaluation.contrast import FAMILIES, load_suite, score_family


def test_the_suite_has_at_least_thirty_minimal_pairs_in_each_of_its_families():
    rows = load_suite()
    pairs = defaultdict(list)
    for r in rows:
        pairs[(r["family"], r["pair"])].append(r)
    per_family = Counter(f for f, _ in pairs)
    assert set(per_family) == set(FAMILIES) and len(FAMILIES) >= 8
    assert min(per_family.values()) >= 30
    for members in pairs.values():
        assert len(members) == 2 and members[0]["premise"] == members[1]["premise"]
        assert "SUPPORTED" in {m["label"] for m in members}
        assert {m["label"] for m in members} <= {"SUPPORTED", "REFUTED", "NEI"}
    assert len({r["premise"] for r in rows}) == len(pairs)


def test_a_family_scores_two_classes_three_classes_and_whole_pairs():
    rows = [
        {"pair": "a", "label": "SUPPORTED"},
        {"pair": "a", "label": "REFUTED"},
        {"pair": "b", "label": "SUPPORTED"},
        {"pair": "b", "label": "NEI"},
    ]
    s = score_family(rows, ["SUPPORTED", "NEI", "SUPPORTED", "SUPPORTED"])
    assert s == {"n": 4, "acc2": 0.75, "acc3": 0.5, "pairs": 0.5}


def test_a_suite_sentence_reworded_in_the_training_text_is_found_and_another_is_not():
    from audit.evaluation.suite_overlap import overlap

    suite = [
        {
            "premise": "The council approved the new library budget on Monday after a long debate.",
            "hypothesis": "The council approved the library budget.",
        }
    ]
    training = [
        "The council approved the new library budget on Monday after a debate.",
        "Residents asked for longer opening hours at the swimming pool.",
    ]
    found = overlap(
        suite, training, [{"premise": "Minutes: the council approved the library budget.", "hypothesis": "x"}]
    )
    assert [a for a, _ in found["near"]] == training[:1]
    assert found["exact"] == []
    assert found["inside"] == ["the council approved the library budget"]
