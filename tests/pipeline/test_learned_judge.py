"""The learned judge: generated training pairs, the head's NumPy arithmetic against its torch twin,
the artefact's round trip, and the shipped judge through the pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from audit.evaluation.learned_fit import NEI, REFUTED, SUPPORTED, generate_pairs, torch_head
from audit.pipeline.learned_judge import ARTIFACT_PATH, LearnedModel

RECORDS = [
    {
        "claim": "Aspirin inhibits platelets.",
        "evidence": [
            {
                "id": "e0",
                "text": (
                    "Aspirin irreversibly inhibits cyclooxygenase-1 in platelets, and the effect lasts for about 10 days. "
                    "Low doses reduce the risk of myocardial infarction in patients with stable angina. "
                    "Higher doses are needed for the anti-inflammatory effect described by Vane in 1971."
                ),
            }
        ],
    },
    {
        "claim": "The account locks.",
        "evidence": [
            {
                "id": "e1",
                "text": (
                    "The account is locked after five failed sign-in attempts within 15 minutes. "
                    "All administrators must always use a hardware key when they sign in to the console. "
                    "Unlocking an account is possible only through the help desk of the Berlin office."
                ),
            }
        ],
    },
]


def test_it_generates_every_class_from_evidence_text_alone():
    pairs = generate_pairs(RECORDS, 30, seed=3)
    labels = [lab for _, _, lab in pairs]
    assert labels.count(SUPPORTED) == labels.count(REFUTED) == labels.count(NEI) == 10
    sources = {s for _, ev, _ in pairs for s in ev}
    for claim, evidence, label in pairs:
        assert (evidence and claim not in evidence) or label == NEI
        if label == REFUTED:  # a contradiction changes a word of a sentence it is judged against
            assert any(len(set(claim.split()) ^ set(s.split())) <= 4 for s in evidence)
    assert pairs == generate_pairs(RECORDS, 30, seed=3) and len(sources) >= 4


def test_the_numpy_head_computes_what_the_trained_torch_head_computes():
    import torch

    torch.manual_seed(1)
    head = torch_head()
    rng = np.random.default_rng(0)
    claim = rng.normal(size=(5, 384)).astype(np.float32)
    ev = rng.normal(size=(9, 384)).astype(np.float32)
    claim /= np.linalg.norm(claim, axis=1, keepdims=True)
    ev /= np.linalg.norm(ev, axis=1, keepdims=True)
    with torch.no_grad():
        want = head(
            torch.from_numpy(claim[None]),
            torch.ones(1, 5, dtype=torch.bool),
            torch.from_numpy(ev[None]),
            torch.ones(1, 9, dtype=torch.bool),
        )[0].numpy()
    assert np.allclose(head.weights().logits(claim, ev), want, atol=1e-4)


@pytest.mark.skipif(not ARTIFACT_PATH.is_file(), reason="the learned judge artefact is not built")
def test_the_shipped_artefact_round_trips_and_stays_small(tmp_path):
    model = LearnedModel.load(ARTIFACT_PATH)
    assert ARTIFACT_PATH.stat().st_size < 50e6
    model.save(tmp_path / "copy.npz")
    again = LearnedModel.load(tmp_path / "copy.npz")
    rng = np.random.default_rng(0)
    c, e = rng.normal(size=(4, 384)).astype(np.float32), rng.normal(size=(7, 384)).astype(np.float32)
    assert np.allclose(model.head.logits(c, e), again.head.logits(c, e), atol=1e-3)
    assert again.calibration == model.calibration


@pytest.mark.skipif(not ARTIFACT_PATH.is_file(), reason="the learned judge artefact is not built")
def test_a_workspace_on_the_learned_judge_gets_its_verdicts(embedder):
    from audit.pipeline import verify_claims

    ev = ["Long-term potentiation in the hippocampus requires the activation of NMDA receptors."]
    good, bad = verify_claims(
        [
            ("LTP in the hippocampus requires NMDA receptor activation.", ev),
            ("The annual membership fee is $150.", ev),
        ],
        thresholds={"judge": "learned"},
    )
    entail = next(m for m in good.methods if m.method == "entailment")
    assert entail.details["judge"] == "learned" and set(entail.details["head"]) == {
        "head_supported",
        "head_refuted",
        "head_nei",
    }
    assert good.confidence > bad.confidence and bad.label != "SUPPORTED"
