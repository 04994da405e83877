"""The NLI judge's parts: which evidence the cross-encoder reads, what it makes of the probabilities,
the stacker's file, and the model's contract."""

from __future__ import annotations

import numpy as np
import pytest

from audit.constants import NLI_SENTENCES, NLI_UNRELATED_MAX_P, NLI_WINDOWS
from audit.pipeline.entailment_model import LinearHead
from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES, prepare
from audit.pipeline.nli_judge import (
    NLI_FEATURE_NAMES,
    NLIStacker,
    best_chunks,
    candidate_texts,
    nli_features,
    passage_chunks,
    text_coverage,
    unrelated_cap,
)
from audit.pipeline.nli_model import NLIModel

LONG_PAGE = " ".join(
    f"Section {k} of the handbook covers topic {k} and nothing about travel refunds." for k in range(40)
)


def test_it_reads_a_bounded_number_of_texts_however_long_the_evidence():
    claim = "Travel refunds are paid within 30 days of the request."
    passages = [
        LONG_PAGE,
        "Travel refunds are paid within 30 days. Requests go to the finance team.",
        "The finance team answers requests in writing.",
    ]
    texts = candidate_texts(prepare(claim, passages))
    assert 1 <= len(texts) <= NLI_SENTENCES + NLI_WINDOWS
    assert (
        texts[0] == "Travel refunds are paid within 30 days."
    )  # the sentence sharing most words comes first
    windows = [t for t in texts if t.count(".") == 2]
    assert windows == ["Travel refunds are paid within 30 days. Requests go to the finance team."]
    # a window never joins the last sentence of one passage to the first of the next
    assert all("team. The finance" not in t for t in texts)


def test_no_evidence_means_nothing_to_read():
    assert candidate_texts(prepare("A claim.", [])) == []


def test_the_nli_features_take_the_text_that_entails_most_and_the_strongest_contradiction():
    probs = np.array([[0.1, 0.8, 0.1], [0.7, 0.1, 0.2], [0.2, 0.2, 0.6]], dtype=np.float32)
    f = dict(zip(NLI_FEATURE_NAMES, nli_features(probs, coverage=0.5)))
    assert f["nli_entail_max"] == pytest.approx(0.7) and f["nli_contra_at_best"] == pytest.approx(0.1)
    assert f["nli_contra_max"] == pytest.approx(0.8) and f["nli_entail_first"] == pytest.approx(0.1)
    assert f["nli_entail_logit"] == pytest.approx(np.log(0.7 / 0.3), rel=1e-4)
    assert f["nli_entail_logit_x_coverage"] == pytest.approx(0.5 * np.log(0.7 / 0.3), rel=1e-4)
    assert f["nli_contra_logit_x_coverage"] == pytest.approx(0.5 * np.log(0.8 / 0.2), rel=1e-4)
    empty = dict(zip(NLI_FEATURE_NAMES, nli_features(np.zeros((0, 3)), coverage=1.0)))
    assert empty["nli_entail_max"] == 0 and empty["nli_neutral_at_best"] == 1 and empty["nli_coverage"] == 0


def test_coverage_counts_the_claims_words_the_texts_read_hold():
    p = prepare("Refunds are paid within 30 days.", ["Refunds are paid quickly. Payments take 30 days."])
    assert text_coverage(p, ["Refunds are paid quickly."]) == pytest.approx(0.5)
    assert text_coverage(p, ["Refunds are paid quickly.", "Payments take 30 days."]) == pytest.approx(1.0)
    assert text_coverage(p, []) == 0


def _stacker():
    n = len(FEATURE_NAMES) + len(NLI_FEATURE_NAMES)
    rng = np.random.default_rng(0)

    def head(k):
        return LinearHead(np.zeros(k), np.ones(k), rng.normal(size=k), 0.1)

    return NLIStacker(
        head(n),
        head(n),
        head(len(FAST_FEATURES) + len(NLI_FEATURE_NAMES)),
        (1.2, -0.3),
        (0.9, 0.1),
        {"x": 1.0},
        {"version": "t1"},
    )


def test_the_stacker_round_trips_through_its_file(tmp_path):
    st = _stacker()
    st.save(tmp_path / "stacker.json")
    again = NLIStacker.load(tmp_path / "stacker.json")
    XN = np.random.default_rng(1).normal(size=(4, len(FEATURE_NAMES) + len(NLI_FEATURE_NAMES)))
    for depth in ("full", "fast"):
        assert np.allclose(st.support_logit(XN, depth), again.support_logit(XN, depth))
        z = again.support_logit(XN, depth)
        assert np.all((again.calibrated(z, depth) > 0) & (again.calibrated(z, depth) < 1))
    assert np.allclose(st.refute_prob(XN), again.refute_prob(XN)) and again.version == "t1"


def test_a_stacker_fitted_on_other_features_is_refused(tmp_path):
    import json

    st = _stacker()
    st.save(tmp_path / "stacker.json")
    payload = json.loads((tmp_path / "stacker.json").read_text())
    payload["nli_features"] = payload["nli_features"][:-1]
    (tmp_path / "stacker.json").write_text(json.dumps(payload))
    with pytest.raises(RuntimeError, match="fit_nli"):
        NLIStacker.load(tmp_path / "stacker.json")
    with pytest.raises(RuntimeError, match="fit_nli"):
        NLIStacker.load(tmp_path / "missing.json")


def test_a_model_folder_without_weights_says_how_to_build_them(tmp_path):
    with pytest.raises(RuntimeError, match="fit_nli"):
        NLIModel(tmp_path).probabilities([("A premise.", "A claim.")])


def test_a_text_sharing_no_word_with_the_claim_and_not_read_as_entailing_caps_its_support():
    unrelated = nli_features(np.array([[0.01, 0.0, 0.99]], dtype=np.float32), coverage=0.0)
    paraphrase = nli_features(np.array([[0.9, 0.0, 0.1]], dtype=np.float32), coverage=0.0)
    related = nli_features(np.array([[0.01, 0.0, 0.99]], dtype=np.float32), coverage=0.5)
    capped = unrelated_cap(np.array([0.9, 0.9, 0.9]), np.stack([unrelated, paraphrase, related]))
    assert capped.tolist() == [NLI_UNRELATED_MAX_P, 0.9, 0.9]


def test_an_unrelated_passage_never_supports_a_claim():
    from audit.pipeline import verify_claim

    v = verify_claim(
        "Incident reports are kept for several years by the records office.",
        ["Level 1 analysts acknowledge cases within 30 minutes."],
    )
    entailment = next(m for m in v.methods if m.method == "entailment")
    assert v.label != "SUPPORTED" and entailment.details["p_supported"] <= NLI_UNRELATED_MAX_P


class _Recorder:
    """A cross-encoder stand-in that records the (text, claim) pairs it is asked to read."""

    version = "recorder"

    def __init__(self):
        self.read: list[tuple[str, str]] = []

    def probabilities(self, pairs):
        self.read += pairs
        return np.tile(np.array([[0.6, 0.1, 0.3]], dtype=np.float32), (len(pairs), 1))


def test_a_claim_read_against_one_passage_alone_reads_its_best_sentence_and_no_window():
    from audit.constants import Thresholds
    from audit.pipeline.judges import JudgePair
    from audit.pipeline.methods.base import verify_context
    from audit.pipeline.nli_judge import NLIJudge

    claim = "Travel refunds are paid within 30 days of the request."
    passage = (
        "Travel refunds are paid within 30 days. Requests go to the finance team. The team pays in euros."
    )
    other = "Refund requests are answered in writing. Payments follow the request."
    joint = prepare(claim, [passage, other])
    allowed = {joint.sentences[k] for k in joint.selected}
    recorder = _Recorder()
    NLIJudge(model=recorder, cascade=False).judge(
        [JudgePair(claim, [passage, other]), JudgePair(claim, [passage], allowed)],
        verify_context(Thresholds()),
    )
    joint_texts = candidate_texts(joint)
    assert any(t.count(".") == 2 for t in joint_texts)  # the joint judgement reads its window
    passage_texts = [t for t, _ in recorder.read[len(joint_texts) :]]
    # one text: the passage's sentence sharing most words with the claim, which the joint judgement
    # read already (the per-passage judgement costs no new reading here)
    assert passage_texts == ["Travel refunds are paid within 30 days."]
    assert passage_texts[0] in joint_texts


def test_each_depth_reads_a_claim_against_the_texts_its_own_head_was_fitted_on():
    from audit.constants import NLI_FAST_SENTENCES, NLI_FAST_WINDOWS, Thresholds
    from audit.pipeline.judges import JudgePair
    from audit.pipeline.methods.base import verify_context
    from audit.pipeline.nli_judge import NLIJudge

    claim = "Travel refunds are paid within 30 days of the request."
    passage = (
        "Requests go to the finance team. Travel refunds are paid within 30 days. The team pays in euros."
    )
    readings = {"fast": (NLI_FAST_SENTENCES, NLI_FAST_WINDOWS), "full": (NLI_SENTENCES, NLI_WINDOWS)}
    for depth, (sentences, windows) in readings.items():
        recorder = _Recorder()
        NLIJudge(model=recorder, cascade=False).judge(
            [JudgePair(claim, [passage])], verify_context(Thresholds(verification_depth=depth))
        )
        read = [t for t, _ in recorder.read]
        assert read == candidate_texts(prepare(claim, [passage]), sentences, windows)
        assert read[0] == "Travel refunds are paid within 30 days."
        assert len(read) == sentences + windows  # the windows read are two sentences each
        assert sum(t.count(".") == 2 for t in read) == windows


def test_the_shipped_fast_head_was_fitted_on_the_reading_the_fast_depth_reads():
    from audit.constants import NLI_FAST_SENTENCES, NLI_FAST_WINDOWS
    from audit.pipeline.nli_judge import default_stacker

    assert default_stacker().meta.get("fast_reading") == [NLI_FAST_SENTENCES, NLI_FAST_WINDOWS]


def test_a_passage_is_cut_into_runs_of_whole_sentences_that_fit_beside_the_claim():
    claim = "Travel refunds are paid within 30 days."
    p = prepare(
        claim, [LONG_PAGE, "Travel refunds are paid within 30 days. Requests go to the finance team."]
    )
    chunks = passage_chunks(p, budget=40, least=10)
    room = 40 - len(claim.split())
    assert all(len(c.split()) <= room or c.count(". ") == 0 for c in chunks)
    # every evidence sentence is read once, in order, and no chunk spans two passages
    assert " ".join(chunks) == " ".join(p.sentences)
    assert not any("handbook" in c and "finance" in c for c in chunks)
    assert len(chunks) > 2
    assert chunks[-1] == "Travel refunds are paid within 30 days. Requests go to the finance team."


def test_the_chunks_read_are_those_covering_most_of_the_claim_and_come_after_the_sentences():
    claim = "Travel refunds are paid within 30 days."
    p = prepare(
        claim, [LONG_PAGE, "Travel refunds are paid within 30 days. Requests go to the finance team."]
    )
    assert best_chunks(p, 1) == ["Travel refunds are paid within 30 days. Requests go to the finance team."]
    assert best_chunks(p, 0) == []
    texts = candidate_texts(p, chunks=2)
    assert texts[: len(candidate_texts(p, chunks=0))] == candidate_texts(p, chunks=0)
    assert len(texts) <= NLI_SENTENCES + NLI_WINDOWS + 2
    assert candidate_texts(p, sentences=0, windows=0, chunks=1) == best_chunks(p, 1)
