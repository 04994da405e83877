"""Sentence encodings computed at ingestion and read at request time (``audit/pipeline/encodings.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from audit.pipeline.encodings import (
    FileStore,
    encoding_key,
    pack,
    precompute,
    stored,
    unpack,
    unstored,
)
from audit.pipeline.features import passage_sentences

PASSAGES = [
    "Long-term potentiation in the hippocampus requires NMDA receptors. Blocking them prevents it.",
    "The annual membership fee is $150. Members renew every January.",
]


class _NoModel:
    """An embedder's model that must not be run: every sentence asked for is in the store."""

    def __getattr__(self, name):
        raise AssertionError(f"the model was used ({name}) for a sentence the store holds")


def test_a_packed_encoding_unpacks_to_the_same_float32_values():
    rng = np.random.default_rng(0)
    vector, pieces = rng.normal(size=384).astype(np.float32), rng.normal(size=(7, 384)).astype(np.float32)
    got_vector, got_pieces = unpack(pack(vector, pieces))
    assert np.array_equal(got_vector, vector) and np.array_equal(got_pieces, pieces)
    empty_vector, empty_pieces = unpack(pack(vector, np.zeros((0, 384), np.float32)))
    assert empty_pieces.shape == (0, 384) and np.array_equal(empty_vector, vector)


def test_the_key_names_the_encoder_version_and_the_text():
    assert encoding_key("a sentence.") == encoding_key("a sentence.")
    assert encoding_key("a sentence.") != encoding_key("a sentence!")
    assert len(encoding_key("x")) == 64


def test_a_file_store_keeps_the_first_value_of_a_key(tmp_path):
    store = FileStore(tmp_path / "enc.sqlite3")
    store.write({"k1": b"one", "k2": b"two"})
    store.write({"k1": b"changed", "k3": b"three"})
    assert store.read(["k1", "k3", "absent"]) == {"k1": b"one", "k3": b"three"}
    assert len(store) == 3 and store.read([]) == {}
    assert FileStore(tmp_path / "enc.sqlite3").read(["k2"]) == {"k2": b"two"}  # on disk, not in memory


def test_precompute_encodes_each_sentence_of_the_passages_once(tmp_path, embedder):
    store = FileStore(tmp_path / "enc.sqlite3")
    sentences = {s for p in PASSAGES for s in passage_sentences(p)}
    batches: list[int] = []
    assert (
        precompute(PASSAGES + PASSAGES[:1], store, embedder.encode_with_tokens, progress=batches.append)
        == len(sentences)
        == 4
    )
    assert batches == [4]
    assert (
        precompute(PASSAGES, store, embedder.encode_with_tokens) == 0
    )  # a second ingestion of the same text encodes nothing
    assert unstored([*PASSAGES, "A new sentence about fees."], store) == ["A new sentence about fees."]
    assert set(stored(sorted(sentences), store)) == sentences


def test_a_stored_encoding_equals_the_one_the_embedder_computes(tmp_path, embedder):
    from audit.pipeline.embedding import Embedder

    store = FileStore(tmp_path / "enc.sqlite3")
    # two embedders with empty caches, so both encode the same sentences in the same batch: under a
    # bfloat16 kernel another batch (the shared fixture's cache holds other tests' texts) rounds otherwise
    precompute(PASSAGES, store, Embedder(model=embedder.model).encode_with_tokens)
    sentences = [s for p in PASSAGES for s in passage_sentences(p)]
    fresh_vectors, fresh_pieces = Embedder(model=embedder.model).encode_with_tokens(sentences)
    vectors, pieces = Embedder(model=_NoModel()).encode_with_tokens(sentences, store=store)
    assert np.allclose(vectors, fresh_vectors, atol=1e-5)
    for got, want in zip(pieces, fresh_pieces, strict=True):
        assert got.shape == want.shape and np.allclose(got, want, atol=1e-5)


def test_the_embedder_encodes_only_what_the_store_lacks(tmp_path, embedder):
    from audit.pipeline.embedding import Embedder

    store = FileStore(tmp_path / "enc.sqlite3")
    precompute(PASSAGES[:1], store, embedder.encode_with_tokens)
    reading = Embedder(model=_NoModel())
    with pytest.raises(AssertionError, match="the model was used"):
        reading.encode_with_tokens(passage_sentences(PASSAGES[1]), store=store)
    stored_only = passage_sentences(PASSAGES[0])
    vectors, _ = reading.encode_with_tokens(stored_only, store=store)
    assert vectors.shape == (2, 384)
    assert np.array_equal(reading.encode(stored_only), vectors)  # kept in the process's caches too


def test_an_audit_reads_the_same_verdicts_with_and_without_the_stored_encodings(tmp_path, embedder):
    from audit.pipeline.audit import audit_answer
    from audit.pipeline.index import HybridIndex
    from audit.pipeline.retrieval import KnowledgeBase
    from audit.pipeline.types import Passage

    index = HybridIndex()
    ids = [f"kb{i}" for i in range(len(PASSAGES))]
    index.add(ids, PASSAGES, embedder.encode(PASSAGES))

    def lookup(wanted):
        return {i: Passage(id=i, text=index.text(i) or "", source_type="kb") for i in wanted if i in index}

    store = FileStore(tmp_path / "enc.sqlite3")
    precompute(PASSAGES, store, embedder.encode_with_tokens)
    answer = "LTP in the hippocampus requires NMDA receptors. The annual fee is $200."
    results = []
    for encodings in (None, store):
        embedder.clear_cache()
        kb = KnowledgeBase(index=index, lookup=lookup, vectors=index.vectors, encodings=encodings)
        results.append(audit_answer("What is required?", answer, [], kb=kb))
    plain, read = results
    assert [v.label for v in read.claims] == [v.label for v in plain.claims]
    assert [v.confidence for v in read.claims] == pytest.approx(
        [v.confidence for v in plain.claims], abs=1e-4
    )


@pytest.mark.slow  # builds a small benchmark index and audits its answers twice
def test_the_encodings_check_finds_every_label_kept_on_the_bench(tmp_path, embedder):
    from audit.evaluation.encodings_check import compare

    got = compare(300, 3, tmp_path)
    assert got["claims"] > 0 and got["same_label"] == got["same_findings"] == got["claims"]
    assert got["largest_change"] < 1e-4
