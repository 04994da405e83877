"""In-process hybrid knowledge-base index: exact dense cosine (torch bfloat16) + BM25 (bm25s).

``HybridIndex`` implements the small ``VectorIndex`` protocol; the pgvector back end
(``audit.kb.pgvector``) implements its search half, ``SearchIndex``. Scores are fused as ``w * cosine + (1 - w) * bm25 / max_bm25`` over the union
of both sides' candidates (w = ``INDEX_DENSE_WEIGHT``). The dense matrix grows by doubling;
removed rows are masked at once and compacted later; BM25 is rebuilt lazily on the next search
after an add (removals are masked immediately), so results always reflect every add/remove.
Measured costs and why torch bf16: ``docs/PERFORMANCE.md``.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

import numpy as np

from audit.constants import EMBEDDING_DIM, INDEX_CANDIDATES_FACTOR, INDEX_DENSE_WEIGHT
from audit.pipeline.text import tokenize_for_bm25


@runtime_checkable
class SearchIndex(Protocol):
    """What the pipeline needs from a knowledge-base index: hybrid search and a size.

    ``HybridIndex`` (in process) and ``audit.kb.pgvector.PgVectorIndex`` (in PostgreSQL, written
    by ingestion rather than through this interface) implement it.
    """

    def search(self, query_text: str, query_vec: np.ndarray, k: int = 10) -> list[tuple[str, float]]: ...

    def search_many(
        self, query_texts: list[str], query_vecs: np.ndarray, k: int = 10
    ) -> list[list[tuple[str, float]]]: ...

    def __len__(self) -> int: ...


@runtime_checkable
class VectorIndex(SearchIndex, Protocol):
    """A search index that is kept in step by adding and removing entries."""

    def add(self, ids: list[str], texts: list[str], vectors: np.ndarray) -> None: ...

    def remove(self, ids: list[str]) -> None: ...


class HybridIndex:
    """Dense + BM25 index over (id, text, vector) triples; thread-safe for concurrent searches."""

    def __init__(self, dim: int = EMBEDDING_DIM, dense_weight: float = INDEX_DENSE_WEIGHT):
        import torch

        self._torch = torch
        self.dim = dim
        self.dense_weight = dense_weight
        self._lock = threading.RLock()
        self._matrix = torch.zeros((0, dim), dtype=torch.bfloat16)
        self._n = 0  # rows used (alive + dead)
        self._ids: list[str | None] = []
        self._tokens: list[list[str]] = []
        self._row: dict[str, int] = {}
        self._alive = np.zeros(0, dtype=bool)
        self._bm25 = None
        self._bm25_rows = 0  # rows covered by the current BM25 build
        self._texts: dict[str, str] = {}

    # -- maintenance -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, item: str) -> bool:
        return item in self._row

    def text(self, id_: str) -> str | None:
        return self._texts.get(id_)

    def vectors(self, ids: list[str]) -> dict[str, np.ndarray]:
        """The stored unit vectors (float32) of the ``ids`` held here; unknown ids are left out."""
        with self._lock:
            rows = [(i, r) for i in ids if (r := self._row.get(i)) is not None]
            if not rows:
                return {}
            block = self._matrix[[r for _, r in rows]].float().numpy()
        return {i: block[j] for j, (i, _) in enumerate(rows)}

    def add(self, ids: list[str], texts: list[str], vectors: np.ndarray) -> None:
        """Add or replace entries. ``vectors`` are (n, dim) and should be L2-normalised."""
        torch = self._torch
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        if len(ids) != len(texts):
            raise ValueError("ids, texts and vectors must have the same length")
        with self._lock:
            self.remove([i for i in ids if i in self._row])
            # an id repeated within one call: the last occurrence wins
            last = {id_: j for j, id_ in enumerate(ids)}
            keep = sorted(last.values())
            n_new = len(keep)
            if not n_new:
                return
            need = self._n + n_new
            if need > self._matrix.shape[0]:
                cap = max(need, 2 * self._matrix.shape[0], 1024)
                grown = torch.zeros((cap, self.dim), dtype=torch.bfloat16)
                grown[: self._n] = self._matrix[: self._n]
                self._matrix = grown
                alive = np.zeros(cap, dtype=bool)
                alive[: self._n] = self._alive[: self._n]
                self._alive = alive
            block = torch.from_numpy(np.ascontiguousarray(vectors[keep])).to(torch.bfloat16)
            self._matrix[self._n : need] = block
            for offset, j in enumerate(keep):
                row = self._n + offset
                self._ids.append(ids[j])
                self._tokens.append(tokenize_for_bm25(texts[j]))
                self._row[ids[j]] = row
                self._texts[ids[j]] = texts[j]
            self._alive[self._n : need] = True
            self._n = need
            self._bm25 = None  # rebuilt lazily on the next search

    def remove(self, ids: list[str]) -> None:
        with self._lock:
            for id_ in ids:
                row = self._row.pop(id_, None)
                if row is None:
                    continue
                self._alive[row] = False
                self._ids[row] = None
                self._texts.pop(id_, None)
            dead = self._n - len(self._row)
            if dead > 1000 and dead > 0.25 * self._n:
                self._compact()

    def _compact(self) -> None:
        torch = self._torch
        rows = np.flatnonzero(self._alive[: self._n])
        self._matrix = self._matrix[torch.from_numpy(rows)].clone()
        self._ids = [self._ids[r] for r in rows]
        self._tokens = [self._tokens[r] for r in rows]
        self._n = len(rows)
        self._alive = np.ones(self._n, dtype=bool)
        self._row = {id_: r for r, id_ in enumerate(self._ids) if id_ is not None}  # all alive now
        self._bm25 = None

    def _ensure_bm25(self) -> Any:
        if self._bm25 is None and self._n:
            import bm25s

            retriever = bm25s.BM25()
            retriever.index([toks or [""] for toks in self._tokens[: self._n]], show_progress=False)
            self._bm25 = retriever
            self._bm25_rows = self._n
        return self._bm25

    def warm(self) -> None:
        """Build BM25 now (e.g. when a worker starts) instead of on the first search."""
        with self._lock:
            self._ensure_bm25()

    # -- search ----------------------------------------------------------------------------
    def search(self, query_text: str, query_vec: np.ndarray, k: int = 10) -> list[tuple[str, float]]:
        return self.search_many([query_text], np.asarray(query_vec).reshape(1, -1), k)[0]

    def exact_top(self, query_vecs: np.ndarray, k: int = 10) -> list[list[str]]:
        """For each query vector, the ids of the ``k`` live chunks of highest cosine (exact, no keywords)."""
        with self._lock:
            if not self._row:
                return [[] for _ in range(len(query_vecs))]
            _, top = self._dense(query_vecs, min(self._n, max(k, 1)))
            return [[self._ids[r] for r in row] for row in top]

    def _dense(self, query_vecs: np.ndarray, k: int) -> tuple[Any, np.ndarray]:
        """(the (Q, n) cosines of every row, dead rows at -2; the rows of the ``k`` best per query).
        Called under the lock."""
        torch = self._torch
        n = self._n
        alive = self._alive[:n]
        q = torch.from_numpy(np.ascontiguousarray(np.asarray(query_vecs, dtype=np.float32)))
        sims = (self._matrix[:n] @ q.to(torch.bfloat16).T).float().T  # (Q, n)
        if not alive.all():
            sims[:, torch.from_numpy(~alive)] = -2.0
        return sims, torch.topk(sims, k, dim=1).indices.numpy()

    def search_many(
        self, query_texts: list[str], query_vecs: np.ndarray, k: int = 10
    ) -> list[list[tuple[str, float]]]:
        """For each query, the top ``k`` (id, fused score) pairs, best first."""
        if not len(query_texts):
            return []
        with self._lock:
            if not self._row:
                return [[] for _ in query_texts]
            bm25 = self._ensure_bm25()
            n = self._n
            alive = self._alive[:n]
            n_cand = min(n, max(k, 1) * INDEX_CANDIDATES_FACTOR)
            sims, dense_top = self._dense(query_vecs, n_cand)
            sims_np = sims.numpy()
            results = []
            for qi, text in enumerate(query_texts):
                tokens = tokenize_for_bm25(text)
                # only the live chunks holding a query word have a keyword score: work on those, not
                # on every row (a chunk outside both top lists can never reach the fused top k)
                lex = np.zeros(0, dtype=np.float32)
                hit = np.zeros(0, dtype=np.int64)
                if tokens and bm25 is not None:
                    lex = np.asarray(bm25.get_scores(tokens), dtype=np.float32)[:n]
                    hit = np.flatnonzero(lex > 0)
                    hit = hit[alive[hit]]
                if hit.size:
                    hit_scores = lex[hit]
                    lex_max = float(hit_scores.max())
                    if hit.size > n_cand:
                        hit = hit[np.argpartition(-hit_scores, n_cand - 1)[:n_cand]]
                    cand = np.union1d(dense_top[qi], hit)
                else:
                    lex_max = 0.0
                    cand = dense_top[qi]
                cand = cand[alive[cand]]
                lex_n = lex[cand] / lex_max if lex_max > 0 else np.zeros(len(cand), dtype=np.float32)
                fused = (
                    self.dense_weight * np.clip(sims_np[qi, cand], 0.0, 1.0)
                    + (1.0 - self.dense_weight) * lex_n
                )
                order = np.argsort(-fused, kind="stable")[:k]
                results.append([(self._ids[cand[o]], float(fused[o])) for o in order])
            return results
