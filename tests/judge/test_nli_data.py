"""The public entailment pairs: labels read, groups never straddling the held-out split, a clear error."""

from __future__ import annotations

import json

import pytest

from audit.evaluation.nli_data import NOT_ENTAILMENT, is_heldout, load_nli


def _write(folder, name, rows):
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_it_reads_every_source_and_keeps_each_group_on_one_side_of_the_split(tmp_path):
    vitaminc = [
        {"premise": f"Page {k}: the tower is {h} metres tall.", "hypothesis": f"It is {h} m.", "label": lab}
        for k in range(60)
        for h, lab in ((300, "entailment"), (310, "contradiction"), (320, "neutral"))
    ]
    fever = [
        {"premise": f"Claim {k} holds.", "hypothesis": f"Claim {k}.", "label": "not_entailment"}
        for k in range(40)
    ]
    _write(tmp_path, "vitaminc.jsonl", vitaminc)
    _write(tmp_path, "fever_nli.jsonl", fever + [{"premise": "x", "hypothesis": "y", "label": "maybe"}])
    train, held = load_nli(tmp_path)
    assert len(train) + len(held) == len(vitaminc) + len(fever)  # the unknown label is skipped
    assert held, "a tenth of the groups is held out"
    pages_held = {p.group for p in held if p.source == "vitaminc"}
    pages_train = {p.group for p in train if p.source == "vitaminc"}
    assert pages_held and not pages_held & pages_train  # all three revisions of a page stay together
    assert all(p.group.startswith("Page ") for p in train if p.source == "vitaminc")
    assert {p.label for p in train + held if p.source == "fever_nli"} == {NOT_ENTAILMENT}
    assert [p.group for p in held] == [p.group for p in load_nli(tmp_path)[1]]  # deterministic


def test_the_split_is_a_hash_of_source_and_group():
    assert is_heldout("snli", "A man plays.") == is_heldout("snli", "A man plays.")
    share = sum(is_heldout("snli", f"premise {k}") for k in range(4000)) / 4000
    assert 0.08 < share < 0.12


def test_a_folder_without_data_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load_nli(tmp_path)
