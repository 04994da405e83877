"""The fast depth's reading as ``fit_nli --fast-head`` measures and fits it (audit/evaluation/fast_reading.py)."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from audit.evaluation.fast_reading import compare, describe, fast_inputs, fit_fast_head, out_of_fold
from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES, featurize
from audit.pipeline.nli_judge import NLI_FEATURE_NAMES, candidate_texts
from audit.pipeline.nli_model import get_nli_model

EVIDENCE = (
    "Requests go to the finance team. Travel refunds are paid within 30 days. The team pays in euros. "
    "Receipts are kept for seven years."
)
CLAIMS = [
    ("Travel refunds are paid within 30 days.", "SUPPORTED"),
    ("Travel refunds are paid within 60 days.", "NEI"),
    ("The team pays in euros.", "SUPPORTED"),
    ("The team pays in dollars.", "NEI"),
    ("Receipts are kept for seven years.", "SUPPORTED"),
    ("Receipts are never kept.", "NEI"),
]


def _records(n_groups: int = 5) -> list[dict]:
    return [
        {
            "id": f"c{g}-{k}",
            "dataset": "wice" if g % 2 else "scifact",
            "claim": claim,
            "evidence": [{"id": "e", "text": EVIDENCE}],
            "label": label,
        }
        for g in range(n_groups)
        for k, (claim, label) in enumerate(CLAIMS)
    ]


def _shipped_heads(meta: dict):
    """A stacker of the shipped heads under its own ``meta`` (what ``ship_fast_head`` changes)."""
    from audit.pipeline.nli_judge import NLIStacker, default_stacker

    shipped = default_stacker()
    return NLIStacker(
        shipped.support,
        shipped.refute,
        shipped.fast,
        shipped.calibration,
        shipped.fast_calibration,
        shipped.idf,
        meta,
    )


def test_the_fast_inputs_are_the_words_only_features_beside_each_readings_cross_encoder_features():
    records = _records(1)
    rows = fast_inputs(records, [], get_nli_model(), {}, [(2, 1), (1, 0)], log=lambda line: None)
    assert [r.reading for r in rows] == [(2, 1), (1, 0)]
    assert rows[1].pairs_per_claim == 1.0 and rows[0].pairs_per_claim == 3.0
    X, prepared = featurize([(r["claim"], [EVIDENCE]) for r in records], None, {})
    words_only = X[:, [FEATURE_NAMES.index(n) for n in FAST_FEATURES]]
    for r in rows:
        assert r.dev.shape == (len(records), len(FAST_FEATURES) + len(NLI_FEATURE_NAMES))
        np.testing.assert_allclose(r.dev[:, : len(FAST_FEATURES)], words_only)
    # the one sentence read is the first text of the wider reading: the same cross-encoder row
    assert candidate_texts(prepared[0], 1, 0) == candidate_texts(prepared[0])[:1]
    entail = len(FAST_FEATURES) + NLI_FEATURE_NAMES.index("nli_entail_max")
    assert rows[0].dev[0, entail] >= rows[1].dev[0, entail]


def test_the_fast_head_is_measured_out_of_fold_and_compared_on_the_same_resamples():
    records = _records(10)
    rng = np.random.default_rng(3)
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=float)
    X = np.column_stack([y + rng.normal(0, 0.3, len(y)), rng.normal(0, 1, len(y))])
    z = out_of_fold(records, X, [], np.zeros((0, 2)))
    assert np.mean((z > 0) == (y > 0)) > 0.9  # the informative column is learnt without seeing the fold
    head = fit_fast_head(records, X, [], np.zeros((0, 2)))
    assert head.logit(np.array([[1.0, 0.0]]))[0] > head.logit(np.array([[0.0, 0.0]]))[0]
    noise = rng.uniform(0, 1, len(y))
    text = compare(records, noise, 1 / (1 + np.exp(-z)), ("noise", "fitted"), 0.5)
    assert "paired change of the macro AUROC (fitted - noise): +" in text
    assert "catch at macro false alarm <= 25 %" in text
    assert "fitted: SUPPORTED at the decision point P >= 0.50" in text


@pytest.mark.parametrize("value", ["2", "a,b", "0,1", "1,-1"])
def test_fit_nli_refuses_a_malformed_reading_to_compare_with(value):
    with pytest.raises(CommandError, match="--fast-before must be SENTENCES,WINDOWS"):
        call_command("fit_nli", "--fast-head", "--fast-before", value)


def test_fit_nli_fast_head_needs_the_dev_claims_but_not_the_training_data(tmp_path):
    missing = tmp_path / "claims.jsonl"
    with pytest.raises(CommandError, match=f"The DEV claims file {missing} does not exist."):
        call_command("fit_nli", "--fast-head", "--claims", str(missing), "--nli-dir", str(tmp_path / "none"))


def test_shipping_the_fast_head_twice_on_the_same_rows_gives_the_same_version_and_keeps_the_full_one():
    from audit.evaluation.fast_reading import FastRows, ship_fast_head
    from audit.pipeline.nli_judge import default_stacker

    records = _records(10)
    rng = np.random.default_rng(5)
    width = len(FAST_FEATURES) + len(NLI_FEATURE_NAMES)
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=float)
    X = rng.normal(0, 1, (len(records), width))
    X[:, 0] += 2 * y
    rows = FastRows((1, 0), X, np.zeros((0, width)), 1.0)
    shipped = default_stacker()
    versions = []
    for _ in range(2):
        stacker = _shipped_heads({"version": "full-artefact", "best_threshold": 0.5})
        ship_fast_head(stacker, records, [], rows)
        ship_fast_head(stacker, records, [], rows)  # a rerun on a stacker that already has one
        versions.append(stacker.version)
        assert stacker.meta["full_version"] == "full-artefact"
        assert stacker.meta["fast_reading"] == [1, 0]
        assert stacker.support is shipped.support and stacker.calibration == shipped.calibration
        assert stacker.fast.logit(X[:1]).shape == (1,)
    assert versions[0] == versions[1] != "full-artefact"


@pytest.mark.parametrize("value", ["1", "x,1", "0,2"])
def test_fit_nli_refuses_a_malformed_reading_to_measure(value):
    with pytest.raises(CommandError, match="--fast-after must be SENTENCES,WINDOWS"):
        call_command("fit_nli", "--fast-head", "--fast-after", value)


def test_fit_nli_measures_another_fast_reading_but_never_ships_its_head():
    with pytest.raises(CommandError, match="--fast-after 1,0 is measured only: add --no-write"):
        call_command("fit_nli", "--fast-head", "--fast-after", "1,0")


def test_the_judge_reads_the_fast_reading_it_is_given_at_the_fast_depth_only():
    from audit.constants import Thresholds
    from audit.pipeline.judge_base import JudgePair
    from audit.pipeline.methods.base import VerifyContext
    from audit.pipeline.nli_judge import NLIJudge

    read = []

    class Recording:
        version = "recording"

        def probabilities(self, pairs):
            read.append(len(pairs))
            return get_nli_model().probabilities(pairs)

    pair = JudgePair(claim="Travel refunds are paid within 30 days.", passages=[EVIDENCE])
    for depth, reading, texts in (("fast", (1, 0), 1), ("fast", None, 3), ("full", (1, 0), 3)):
        judge = NLIJudge(model=Recording(), cascade=False, fast_reading=reading)
        ctx = VerifyContext(thresholds=Thresholds().updated({"verification_depth": depth}))
        judge.judge([pair], ctx)
        assert read.pop() == texts, (depth, reading)


def test_the_contrast_suite_is_read_under_each_reading_with_a_head_fitted_on_it():
    from audit.evaluation.contrast import load_suite
    from audit.evaluation.fast_reading import contrast_by_reading
    from audit.pipeline.nli_judge import default_stacker

    records = _records(5)
    shipped = default_stacker()
    stacker = _shipped_heads(dict(shipped.meta))
    rows = fast_inputs(records, [], get_nli_model(), {}, [(2, 1), (1, 0)], log=lambda line: None)
    suite = [r for r in load_suite() if r["family"] == "unit"][:6]
    text = contrast_by_reading(
        stacker, records, [], {"before 2,1": rows[0], "after 1,0": rows[1]}, get_nli_model(), suite
    )
    assert "before 2,1" in text and "after 1,0" in text
    assert "claims right under before 2,1 only / under after 1,0 only" in text
    assert stacker.fast is shipped.fast and stacker.meta == shipped.meta  # each head fitted on a copy


def test_one_reading_alone_is_described_without_a_comparison():
    records = _records(10)
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=float)
    p = np.clip(y * 0.6 + 0.2, 0, 1)
    text = describe(records, p, "reading (2, 1)", 0.5)
    assert "reading (2, 1): AUROC of P(supported) (out of fold)" in text
    assert "reading (2, 1): SUPPORTED at the decision point P >= 0.50" in text
    assert "paired change" not in text
    rows = fast_inputs(_records(1), [], get_nli_model(), {}, [(2, 1)], log=lambda line: None)
    assert [r.reading for r in rows] == [(2, 1)]
