"""Minimal pairs made from real sentences: each family makes the edit it names, with the label that edit implies."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from audit.evaluation import minimal_pairs as mp

CTX = {"opposites": mp.opposite_table(), "entities": ["Lisbon", "Geneva", "Oslo"]}


def _run(family, sentence, seed=0):
    return mp.FAMILIES[family](sentence, np.random.default_rng(seed), CTX)


@pytest.mark.parametrize(
    ("family", "sentence", "want", "label"),
    [
        ("unit", "The dose was raised to 40 mg after two weeks.", "40 mg", mp.C),
        (
            "roles",
            "The lender pays the borrower a fee at the end of the term.",
            "The borrower pays the lender",
            mp.C,
        ),
        (
            "roles",
            "Coffee exports were higher than tea exports in 2020.",
            "tea exports were higher than coffee",
            mp.C,
        ),
        ("quantifier", "Only some branches were audited in the first quarter.", "all branches", mp.C),
        ("quantifier", "Some branches were audited in the first quarter of the year.", "all branches", mp.N),
        ("modality", "Employees may work from home on Fridays under the new policy.", "must work", mp.N),
        (
            "condition",
            "If the budget is approved, the bridge will be repaired next spring.",
            "The bridge will be repaired",
            mp.N,
        ),
        ("negation", "The committee did not approve the merger in its March meeting.", "did approve", mp.C),
        ("number", "The survey covered 412 households in the eastern districts.", "412", mp.C),
        ("date", "The treaty was signed in 1848 after a long siege of the port.", "1848", mp.C),
        ("rank", "The firm is the second-largest insurer in the region by premiums.", "the largest", mp.C),
        (
            "complement_negated",
            "The museum is closed on Mondays during the winter season.",
            "is not open",
            mp.E,
        ),
        ("compression", "The drug (a beta blocker) lowered blood pressure in most adults.", "beta", mp.E),
    ],
)
def test_each_family_makes_its_edit_with_its_label(family, sentence, want, label):
    made = _run(family, sentence)
    assert made is not None, family
    text, got = made
    assert got == label and text != sentence
    if family in ("unit", "number", "date", "compression"):
        assert not re.search(
            rf"(?<![\w.]){re.escape(want)}(?![\w.])", text
        )  # the named words are gone or changed
    else:
        assert want.lower() in text.lower()


def test_a_family_that_does_not_apply_makes_nothing():
    assert _run("unit", "The board met and approved the plan without changes.") is None
    assert _run("roles", "It was a long and difficult winter for the farmers of the valley.") is None
    assert _run("condition", "During the war, the factory produced aircraft engines for the navy.") is None


def test_the_generator_is_deterministic_and_mixes_labels_and_families():
    docs = mp.documents_from_texts(
        [
            "The museum is closed on Mondays. Some rooms were renovated in 2019 at a cost of 4 million euros. "
            "If the roof leaks, visitors may use the north entrance. The lender pays the borrower a fee.",
            "Only some branches were audited in 2021. The audit found 12 errors in 300 files. "
            "The bank is the second-largest lender in Norway. Staff must report incidents within 24 hours.",
        ]
    )
    pairs = mp.generate(docs, 200, seed=4)
    assert pairs == mp.generate(docs, 200, seed=4)
    assert set(Counter(p.label for p in pairs)) == {mp.E, mp.C, mp.N}
    families = {p.source.split(":")[1].removesuffix("-twin") for p in pairs}
    assert {"unit", "quantifier", "condition", "negation", "date"} <= families
    for p in pairs:
        assert p.hypothesis and p.premise
        if p.source.endswith("-twin"):
            assert p.label == mp.E
