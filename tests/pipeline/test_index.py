"""HybridIndex: dense + BM25 search that stays consistent after add and remove."""

from __future__ import annotations

import numpy as np

from audit.pipeline.index import HybridIndex, VectorIndex


def _vecs(n, seed=0):
    v = np.random.default_rng(seed).normal(size=(n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


TEXTS = [
    "cats purr when they are content",
    "dogs bark at strangers",
    "the stock rose five percent",
    "neurons fire action potentials",
    "long-term potentiation needs NMDA receptors",
]


def _index():
    ix = HybridIndex()
    vecs = _vecs(len(TEXTS))
    ix.add([f"d{i}" for i in range(len(TEXTS))], TEXTS, vecs)
    return ix, vecs


def assert_keeps_the_vector_index_contract(make_index):
    """What the pipeline relies on from any ``VectorIndex`` back end, checked on a fresh one.

    Hits are (stored id, float score) pairs, at most ``k``, best first; a removed id is never
    returned and ``len`` counts live entries; ``search_many`` answers each query as ``search`` does.
    """
    ix = make_index()
    assert isinstance(ix, VectorIndex)
    vecs = _vecs(len(TEXTS))
    ids = [f"d{i}" for i in range(len(TEXTS))]
    ix.add(ids, TEXTS, vecs)
    assert len(ix) == len(TEXTS)
    hits = ix.search("NMDA receptors", vecs[4], k=3)
    assert 0 < len(hits) <= 3 and hits[0][0] == "d4"
    assert all(isinstance(i, str) and i in ids and isinstance(s, float) for i, s in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    many = ix.search_many(["cats", "NMDA receptors"], vecs[[0, 4]], k=2)
    assert many == [ix.search("cats", vecs[0], k=2), ix.search("NMDA receptors", vecs[4], k=2)]
    ix.remove(["d4", "no-such-id"])
    assert len(ix) == len(TEXTS) - 1
    assert "d4" not in [i for i, _ in ix.search("NMDA receptors", vecs[4], k=len(TEXTS))]
    assert ix.search_many([], vecs[:0], k=2) == []


def test_it_keeps_the_vector_index_contract():
    assert_keeps_the_vector_index_contract(HybridIndex)


def test_it_finds_a_document_by_its_vector_and_its_words():
    ix, vecs = _index()
    assert ix.search("NMDA receptors potentiation", vecs[4], k=3)[0][0] == "d4"
    # words alone (a vector pointing elsewhere) still bring the lexical match up
    hits = ix.search("NMDA receptors potentiation", vecs[0], k=5)
    assert "d4" in [h[0] for h in hits[:2]]


def test_it_forgets_removed_documents_and_finds_added_ones():
    ix, vecs = _index()
    ix.remove(["d4"])
    assert "d4" not in [h[0] for h in ix.search("NMDA receptors", vecs[4], k=5)]
    assert len(ix) == 4
    ix.add(["n1"], ["NMDA receptors gate potentiation"], vecs[4:5])
    assert ix.search("NMDA receptors", vecs[4], k=1)[0][0] == "n1"


def test_it_replaces_a_document_added_again_under_the_same_id():
    ix, vecs = _index()
    ix.add(["d0"], ["completely different text about volcanoes"], vecs[1:2])
    assert len(ix) == 5
    assert ix.text("d0") == "completely different text about volcanoes"
    assert ix.search("volcanoes", vecs[1], k=1)[0][0] in ("d0", "d1")


def test_it_answers_many_queries_at_once_like_one_by_one():
    ix, vecs = _index()
    queries = ["cats", "stock percent", "neurons"]
    many = ix.search_many(queries, vecs[[0, 2, 3]], k=2)
    single = [ix.search(q, vecs[i], k=2) for q, i in zip(queries, [0, 2, 3])]
    assert [[h[0] for h in r] for r in many] == [[h[0] for h in r] for r in single]


def test_it_returns_nothing_from_an_empty_index():
    assert HybridIndex().search("anything", _vecs(1)[0], k=3) == []


def test_it_compacts_after_many_removals_and_stays_correct():
    ix = HybridIndex()
    n = 3000
    vecs = _vecs(n, seed=1)
    ix.add([f"x{i}" for i in range(n)], [f"document number {i} about topic {i % 7}" for i in range(n)], vecs)
    ix.remove([f"x{i}" for i in range(2500)])
    assert len(ix) == 500
    top = ix.search("document", vecs[2700], k=1)
    assert top[0][0] == "x2700"


def test_it_hands_back_the_stored_vectors_of_live_ids_only():
    ix, vecs = _index()
    ix.remove(["d1"])

    found = ix.vectors(["d3", "d1", "nope", "d0"])

    assert list(found) == ["d3", "d0"]
    assert np.allclose(found["d3"], vecs[3], atol=1e-2) and found["d0"].dtype == np.float32
    assert ix.vectors([]) == {}


def test_its_keyword_leg_ignores_removed_documents_and_words_no_document_holds():
    ix, vecs = _index()
    ix.remove(["d4"])

    assert "d4" not in [i for i, _ in ix.search("NMDA receptors potentiation", vecs[0], k=5)]
    assert [i for i, _ in ix.search("zzzz qqqq", vecs[2], k=1)] == ["d2"]  # the dense leg alone
