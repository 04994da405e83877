"""The cross-encoder's forward passes cut by length (audit/pipeline/nli_model.py::length_batches)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from audit.pipeline.nli_model import INFER_BATCH, NLIModel, length_batches


def _cost(lengths: list[int], passes: list[list[int]], pass_cost: int) -> int:
    return sum(max(lengths[i] for i in p) * len(p) + pass_cost for p in passes)


def test_every_pair_is_read_once_and_no_pass_holds_more_than_the_most():
    lengths = [random.Random(7).randint(8, 128) for _ in range(100)]
    passes = length_batches(lengths, most=32, pass_cost=100)
    assert sorted(i for p in passes for i in p) == list(range(100))
    assert all(1 <= len(p) <= 32 for p in passes)
    # sorted by length, so a pass never holds a pair longer than one in the next pass
    assert all(
        max(lengths[i] for i in a) <= min(lengths[i] for i in b) for a, b in itertools.pairwise(passes)
    )


def test_short_pairs_are_not_padded_to_the_long_ones():
    lengths = [120, 14, 12, 118, *[13] * 18, 125]
    passes = length_batches(lengths, most=INFER_BATCH, pass_cost=100)
    assert [sorted(lengths[i] for i in p) for p in passes] == [[12, *[13] * 18, 14], [118, 120, 125]]


def test_pairs_of_about_one_length_share_one_pass():
    assert length_batches([31, 30, 33, 32], pass_cost=100) == [[1, 0, 3, 2]]


def test_nothing_to_read_is_no_pass():
    assert length_batches([]) == []


@pytest.mark.parametrize("seed", range(6))
def test_the_cut_costs_no_more_than_any_other_cut_of_the_sorted_pairs(seed):
    rng = random.Random(seed)
    lengths = [rng.randint(5, 128) for _ in range(9)]
    order = sorted(range(9), key=lambda i: (lengths[i], i))
    best = min(
        _cost(lengths, [order[a:b] for a, b in itertools.pairwise((0, *cuts, 9))], 60)
        for k in range(9)
        for cuts in itertools.combinations(range(1, 9), k)
        if all(b - a <= 4 for a, b in itertools.pairwise((0, *cuts, 9)))
    )
    assert _cost(lengths, length_batches(lengths, most=4, pass_cost=60), 60) == best


def test_the_reading_is_the_same_however_the_passes_are_cut():
    model = NLIModel()
    claim = "The vaccine was approved in 2021."
    pairs = [
        ("The vaccine was approved in 2021.", claim),
        ("It was approved.", claim),
        (
            "The agency reviewed the trial data over many months, and after a public hearing it approved "
            "the vaccine in 2021 for adults, with a later extension to adolescents in the following year.",
            claim,
        ),
        ("The vaccine was rejected in 2021.", claim),
    ]
    model.pass_cost = 0  # one pass a pair, no padding
    alone = model.infer(pairs)
    model.pass_cost = INFER_BATCH * 128  # one pass, padded to the longest
    together = model.infer(pairs)
    assert (alone.argmax(1) == together.argmax(1)).all()
    assert np.abs(alone - together).max() < 0.03  # bfloat16's rounding differs with a pass's shape
