"""Knowledge-base sentences parsed when a passage is ingested and read when a request reads it.

The role binding and the negation check parse the evidence sentences of every passage they read
(``binding.parse``: spaCy's tagger, parser and lemmatizer, about 4 ms a sentence on one core). A
knowledge-base sentence is the same text in every request that reads it, so ingestion parses it once
(:func:`precompute`) and stores the parse beside its encoding (``encodings.py``: the same stores, the
database's ``SentenceEncoding`` table and the bench's ``FileStore``); a request reads the stored parse
(a fraction of a millisecond to rebuild) and parses only its own text (its claims, the caller's passages) and what no
ingestion stored.

A stored parse is spaCy's own serialisation of the doc (``Doc.to_bytes``: words, tags, heads, labels,
lemmas, morphology; not the layer the tagger and parser shared, which nothing reads once they ran),
compressed. It rebuilds the same doc the parser gives: :func:`unpack` of :func:`pack` has every
token's tag, head, label and lemma (``tests/pipeline/test_parse_store.py``).

Keys are :func:`parse_key`: the parser's version (its package, spaCy's version and the components it
runs) and the sentence's text, so a new parser reads nothing an old one stored; the rows carry the
version (``parser_version``) and the prune deletes another version's.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from audit.constants import BINDING_MAX_EVIDENCE_CHARS, BINDING_MAX_SENTENCE_CHARS
from audit.pipeline.encodings import EncodingStore, stored_raw, unstored

if TYPE_CHECKING:
    from audit.pipeline.binding import StoredParses

PRECOMPUTE_BATCH = 256  # sentences parsed and stored together
COMPRESSION = 1  # zlib's fastest level: a 20-word parse, 3.8 KB, stores in 1.4 KB
PARSE_EXCLUDE = ["tensor", "user_data"]  # what a stored doc leaves out (the parser's shared layer; memos)
MAX_STORED_CHARS = min(BINDING_MAX_SENTENCE_CHARS, BINDING_MAX_EVIDENCE_CHARS)  # longer: never parsed


@lru_cache(maxsize=1)
def parser_version() -> str:
    """The parser's package and version, spaCy's version and the components left out of it."""
    from importlib.metadata import PackageNotFoundError, version

    from audit.pipeline.binding import PARSER_EXCLUDE, PARSER_PACKAGE, PARSER_VERSION

    try:
        spacy_version = version("spacy")
    except PackageNotFoundError:  # pragma: no cover - spacy is a dependency
        spacy_version = "?"
    return f"{PARSER_PACKAGE}=={PARSER_VERSION}/spacy=={spacy_version}/-{','.join(PARSER_EXCLUDE)}"


def parse_key(text: str) -> str:
    """The store's key of one sentence's parse (sha256 of "parse", the parser's version and the text:
    never an encoding's key)."""
    return hashlib.sha256(f"parse\x00{parser_version()}\x00{text}".encode()).hexdigest()


@lru_cache(maxsize=1)
def msgpack_hooks_read_once() -> None:
    """srsly, spaCy's serialiser, searches every installed package's entry points for msgpack hooks on
    each call, which was most of the time a stored parse took to rebuild (the bench's "negation parses",
    where an answer's 23 stored parses are rebuilt: 16-19 ms an answer before, 14-15 after; `python
    manage.py bench`). Installed packages do not change under a running process, so the hooks they name are
    read once, here, and registered as srsly's own are (a name already registered keeps its function,
    as srsly's lookup would give it); then the search is switched off."""
    import catalogue
    import srsly.msgpack

    for registry in (srsly.msgpack.msgpack_encoders, srsly.msgpack.msgpack_decoders):
        for name, hook in registry.get_entry_points().items():
            if not catalogue.check_exists(*registry.namespace, name):
                registry.register(name, func=hook)
        registry.entry_points = False


def pack(doc: Any) -> bytes:
    """One parsed doc as compressed bytes (spaCy's serialisation, less ``PARSE_EXCLUDE``)."""
    msgpack_hooks_read_once()
    return zlib.compress(doc.to_bytes(exclude=PARSE_EXCLUDE), COMPRESSION)


def unpack(raw: bytes | memoryview) -> Any:
    """The doc :func:`pack` wrote, on the parser's vocabulary."""
    from spacy.tokens import Doc

    from audit.pipeline.binding import get_parser

    msgpack_hooks_read_once()
    return Doc(get_parser().vocab).from_bytes(zlib.decompress(bytes(raw)), exclude=PARSE_EXCLUDE)


def passage_sentences(text: str) -> list[str]:
    """The sentences of one passage that the binding and the negation check may parse, split as they
    split it (``binding.evidence_sentences`` of ``contradiction.parseable``), each once; a sentence
    longer than either of their caps is never parsed and not stored."""
    from audit.pipeline.binding import evidence_sentences
    from audit.pipeline.contradiction import parseable

    return [s for s in evidence_sentences(parseable([("", text)])) if len(s) <= MAX_STORED_CHARS]


def stored(texts: list[str], store: EncodingStore) -> dict[str, Any]:
    """The parses of ``texts`` that ``store`` holds, by text. A row that does not rebuild (truncated,
    written by hand) is left out: its text is parsed again, as if nothing were stored."""
    found: dict[str, Any] = {}
    for text, raw in stored_raw(texts, store, parse_key).items():
        try:
            doc = unpack(raw)
        except (zlib.error, ValueError, TypeError, KeyError):
            continue
        if doc.text == text:
            found[text] = doc
    return found


def reader(store: EncodingStore | None) -> StoredParses | None:
    """What ``binding.parse`` asks for the texts it has not parsed: the parses ``store`` holds."""
    if store is None:
        return None
    return lambda texts: stored(texts, store)


def precompute(
    passages: Iterable[str],
    store: EncodingStore,
    progress: Callable[[int], object] | None = None,
) -> int:
    """Parse and store the sentences of ``passages`` whose parse ``store`` does not hold yet,
    ``PRECOMPUTE_BATCH`` at a time, in one ``nlp.pipe`` pass each; returns how many were parsed.
    ``progress(n)`` is told after each batch of n sentences."""
    from audit.pipeline.binding import get_parser

    missing = unstored(passages, store, passage_sentences, parse_key)
    nlp = get_parser()
    for start in range(0, len(missing), PRECOMPUTE_BATCH):
        batch = missing[start : start + PRECOMPUTE_BATCH]
        docs = nlp.pipe(batch, batch_size=64)
        store.write({parse_key(s): pack(d) for s, d in zip(batch, docs)})
        if progress is not None:
            progress(len(batch))
    return len(missing)
