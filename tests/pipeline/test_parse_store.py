"""Knowledge-base sentences parsed at ingestion and read at request time (audit/pipeline/parse_store.py)."""

from __future__ import annotations

import pytest

from audit.pipeline import binding, parse_store
from audit.pipeline.encodings import FileStore

PASSAGE = (
    "Place cells in the hippocampus fire when an animal occupies a particular location. John O'Keefe "
    "described them in 1971. May-Britt Moser and Edvard Moser discovered grid cells in the entorhinal "
    "cortex. The clinic does not reimburse the insurer for visits after 6 p.m."
)
REVERSAL = "The insurer reimburses the clinic for visits after 6 p.m."


def _token_attrs(doc):
    return [
        (t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.lemma_, str(t.morph), t.is_sent_start, t.is_stop)
        for t in doc
    ]


@pytest.fixture
def store(tmp_path):
    return FileStore(tmp_path / "store.sqlite3")


def test_a_stored_parse_rebuilds_the_parsers_doc_token_by_token():
    parser = binding.get_parser()
    for sentence in parse_store.passage_sentences(PASSAGE):
        fresh = parser(sentence)
        rebuilt = parse_store.unpack(parse_store.pack(fresh))
        assert rebuilt.text == sentence
        assert _token_attrs(rebuilt) == _token_attrs(fresh)
        assert binding.frames_of(rebuilt) == binding.frames_of(fresh)


def test_a_passage_is_stored_as_the_binding_splits_it_and_a_sentence_over_the_cap_is_left_out():
    from audit.constants import BINDING_MAX_SENTENCE_CHARS

    sentences = parse_store.passage_sentences(PASSAGE)
    assert sentences == list(binding.evidence_sentences([("p", PASSAGE)]))
    assert len(sentences) == 4
    long = (
        "The register lists " + ", ".join(f"item {k}" for k in range(BINDING_MAX_SENTENCE_CHARS // 7)) + "."
    )
    assert len(long) > BINDING_MAX_SENTENCE_CHARS
    assert parse_store.passage_sentences(f"{long} {PASSAGE}") == sentences


def test_precompute_parses_each_sentence_once_and_stores_it_under_the_parsers_version(store):
    assert parse_store.precompute([PASSAGE, PASSAGE], store) == 4
    assert len(store) == 4
    assert parse_store.precompute([PASSAGE], store) == 0  # stored: nothing parsed again
    sentences = parse_store.passage_sentences(PASSAGE)
    assert set(parse_store.stored(sentences, store)) == set(sentences)


def test_another_parser_version_reads_nothing_an_older_one_stored(store, monkeypatch):
    parse_store.precompute([PASSAGE], store)
    sentence = parse_store.passage_sentences(PASSAGE)[0]
    monkeypatch.setattr(parse_store, "parser_version", lambda: "another-parser==9.9/spacy==9.9/-senter,ner")
    assert parse_store.stored([sentence], store) == {}
    assert parse_store.precompute([PASSAGE], store) == 4


def test_the_binding_reads_a_stored_parse_instead_of_parsing_it(store, monkeypatch):
    parse_store.precompute([PASSAGE], store)
    sentences = parse_store.passage_sentences(PASSAGE)
    binding.PARSES.clear()
    parser = binding.get_parser()
    monkeypatch.setattr(parser, "pipe", lambda *a, **k: pytest.fail("a stored sentence was parsed"))
    parsed, read = binding.PARSES.parsed, binding.PARSES.read
    docs = binding.parse(sentences, parse_store.reader(store))
    assert [d.text for d in docs] == sentences
    assert (binding.PARSES.parsed - parsed, binding.PARSES.read - read) == (0, 4)
    assert binding.parse(sentences) == docs  # cached now, as a parse is


def test_a_row_that_does_not_rebuild_is_parsed_again(store):
    import zlib

    first, second, third = parse_store.passage_sentences(PASSAGE)[:3]
    parser = binding.get_parser()
    store.write(
        {
            parse_store.parse_key(first): b"not a parse",
            parse_store.parse_key(second): zlib.compress(b"\x81\xa4text"),
            # another sentence's parse under this one's key
            parse_store.parse_key(third): parse_store.pack(parser(first)),
        }
    )
    assert parse_store.stored([first, second, third], store) == {}
    binding.PARSES.clear()
    docs = binding.parse([first, second, third], parse_store.reader(store))
    assert [d.text for d in docs] == [first, second, third]


def _structure(claims: list[str], encodings):
    from audit.constants import Thresholds
    from audit.pipeline.methods.base import record_results, verify_context
    from audit.pipeline.methods.structure import StructureMethod
    from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult, Passage

    drafts = [ClaimDraft(f"c{k}", t, (0, len(t))) for k, t in enumerate(claims)]
    ctx = verify_context(Thresholds(), encodings=encodings)
    # SUPPORTED by the judge: the binding reads every claim
    record_results(
        ctx,
        "entailment",
        drafts,
        [MethodResult("entailment", score=0.99, verdict="supported") for _ in drafts],
    )
    items = [(d, [EvidenceHit(Passage("p1", PASSAGE), 0.9)]) for d in drafts]
    return StructureMethod().verify_many(items, ctx)


def test_the_structure_method_finds_the_same_with_stored_parses_and_parses_only_the_claims(
    embedder, store, monkeypatch
):
    claims = [
        "Edvard Moser described place cells in 1971.",
        REVERSAL,
        "The clinic reimburses the insurer for visits after 6 p.m.",
        "Grid cells were discovered in the entorhinal cortex by the Mosers.",
    ]
    binding.clear_caches()
    fresh = _structure(claims, None)
    parse_store.precompute([PASSAGE], store)
    binding.clear_caches()
    parser = binding.get_parser()
    parsed: list[str] = []
    real_pipe = parser.pipe

    def counting_pipe(texts, **kwargs):
        texts = list(texts)
        parsed.extend(texts)
        return real_pipe(texts, **kwargs)

    monkeypatch.setattr(parser, "pipe", counting_pipe)
    from_store = _structure(claims, store)
    assert [(r.verdict, r.score, r.details) for r in from_store] == [
        (r.verdict, r.score, r.details) for r in fresh
    ]
    assert {r.verdict for r in fresh} >= {"contradicted", "not_found"}  # the reading found something
    assert set(parsed) == set(claims)  # the evidence sentences came from the store


def test_the_msgpack_hooks_installed_packages_name_are_searched_once_and_still_used(monkeypatch):
    import catalogue
    import srsly.msgpack

    registry = srsly.msgpack.msgpack_decoders
    searched, decoded = [], []

    def hook(obj, chain=None):  # a decoder that passes every object on
        decoded.append(1)
        return chain(obj) if chain is not None else obj

    def entry_points():
        searched.append(1)
        return {"theoria_probe": hook}

    monkeypatch.setattr(registry, "entry_points", True)
    monkeypatch.setattr(registry, "get_entry_points", entry_points)
    parse_store.msgpack_hooks_read_once.cache_clear()
    try:
        doc = binding.get_parser()(REVERSAL)
        for _ in range(3):
            assert _token_attrs(parse_store.unpack(parse_store.pack(doc))) == _token_attrs(doc)
        assert searched == [1] and decoded  # searched once, used by every unpack
        assert registry.entry_points is False and registry.get_all()["theoria_probe"] is hook
    finally:
        catalogue.REGISTRY.pop((*registry.namespace, "theoria_probe"), None)
        parse_store.msgpack_hooks_read_once.cache_clear()
