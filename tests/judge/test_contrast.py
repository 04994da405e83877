"""The contrastive suite in the repository: its shape, and how a family is scored."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

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


def test_two_columns_print_the_claims_each_gets_right_that_the_other_does_not():
    from audit.evaluation.contrast import format_discordant

    rows = [
        {"family": "unit", "pair": "a", "label": "SUPPORTED"},
        {"family": "unit", "pair": "a", "label": "NEI"},
        {"family": "rank", "pair": "b", "label": "SUPPORTED"},
        {"family": "rank", "pair": "b", "label": "REFUTED"},
    ]
    text = format_discordant(
        rows,
        {
            "nli, full": ["SUPPORTED", "NEI", "NEI", "REFUTED"],
            "nli, fast": ["SUPPORTED", "SUPPORTED", "SUPPORTED", "NEI"],
        },
    )
    lines = {line.split()[0]: line for line in text.splitlines()[1:]}
    # unit: full catches the edit, fast lets it through; rank: fast gets the faithful claim, full does not
    assert lines["unit"].split() == ["unit", "1", "(1)", "/", "0", "(0)"]
    assert lines["rank"].split() == ["rank", "0", "(0)", "/", "1", "(0)"]
    assert lines["all"].split() == ["all", "1", "(1)", "/", "1", "(0)"]
    assert set(lines) == {"unit", "rank", "all"}


def test_the_suite_runs_at_each_depth_named_through_the_real_pipeline(tmp_path, monkeypatch):
    import io
    import json

    from audit.evaluation import contrast
    from audit.pipeline import audit

    rows = [r for r in load_suite() if r["family"] == "unit"][:4]
    path = tmp_path / "suite.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    depths_seen = []
    verify = audit.verify_claims

    def spy(claims, **kwargs):
        depths_seen.append(kwargs["thresholds"]["verification_depth"])
        return verify(claims, **kwargs)

    monkeypatch.setattr(audit, "verify_claims", spy)
    out = io.StringIO()
    results = contrast.run_contrast(["nli"], out=out, err=io.StringIO(), path=path, depths=("full", "fast"))
    assert depths_seen == ["full", "fast"]
    assert set(results) == {"nli, full", "nli, fast"}
    assert all(results[c]["all"]["n"] == 4 for c in results)
    text = out.getvalue()
    assert "nli, full" in text and "claims right under nli, full only / under nli, fast only" in text


def test_evaluate_refuses_a_depth_without_the_contrast_suite_in_one_sentence():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="--depth applies to --contrast only"):
        call_command("evaluate", "--depth", "fast", "--claims-only")
