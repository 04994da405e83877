"""Training the cross-encoder: the loss of two-way rows, the batches, and a resume that changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from audit.evaluation.nli_data import NLIPair
from audit.evaluation.nli_train import BATCH, batch_order, nli_loss, train_stage


def test_a_not_entailment_row_is_scored_on_contradiction_or_neutral():
    import torch

    logits = torch.tensor([[2.0, 0.0, 0.0], [2.0, 0.0, 0.0], [-2.0, 1.0, 1.0]])
    three = nli_loss(logits[:1], torch.tensor([0]))
    assert torch.isclose(three, -torch.log_softmax(logits[0], -1)[0])
    two = nli_loss(logits[2:], torch.tensor([-1]))
    p = torch.softmax(logits[2], -1)
    assert torch.isclose(two, -torch.log(p[1] + p[2]), atol=1e-6)
    assert nli_loss(logits[1:2], torch.tensor([-1])) > two  # entailment-leaning logits cost more


def test_batches_are_full_seeded_and_group_similar_lengths():
    lengths = list(np.random.default_rng(0).integers(10, 120, size=5 * BATCH))
    a, b = batch_order(lengths, 12, seed=3), batch_order(lengths, 12, seed=3)
    assert a == b and len(a) == 12 and all(len(x) == BATCH for x in a)
    assert batch_order(lengths, 12, seed=4) != a
    spread = np.mean([np.ptp([lengths[i] for i in x]) for x in a])
    assert spread < np.ptp(lengths) / 2  # sorted within windows: less padding than random batches


@pytest.mark.slow
def test_an_interrupted_stage_resumes_to_the_same_weights(tmp_path):
    import torch

    pairs = [
        NLIPair(
            f"The fee is {k} euros per month.",
            f"The fee is {k + (k % 3)} euros per month.",
            k % 3,
            "t",
            str(k),
        )
        for k in range(3 * BATCH)
    ]
    whole = train_stage("w", pairs, epochs=2 / 3, seed=1, checkpoint_dir=tmp_path / "a")
    assert (
        train_stage(
            "p", pairs, epochs=2 / 3, seed=1, checkpoint_dir=tmp_path / "b", max_minutes=0, checkpoint_every=1
        )
        is None
    )
    assert (tmp_path / "b" / "p.pt").is_file()
    resumed = train_stage("p", pairs, epochs=2 / 3, seed=1, checkpoint_dir=tmp_path / "b")
    a = torch.load(whole, weights_only=True)["model"]
    b = torch.load(resumed, weights_only=True)["model"]
    assert a.keys() == b.keys() and "encoder.embeddings.word_embeddings.weight" not in a
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
