"""The in-process search index of each workspace's knowledge base, kept in step with the database.

Each process (web server, task worker, command) holds one :class:`KnowledgeBase` per workspace.
Before a search, :func:`kb_index` compares ``Workspace.kb_version`` (one cheap query) with the
version the index was built at; when they differ it loads only the chunks added since and drops
the ones deleted, so ingestion and deletion in any process are seen everywhere without a full
reload. The index itself is ``audit.pipeline.index.HybridIndex`` (dense + BM25); a pgvector
back end would implement the same ``VectorIndex`` protocol.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from audit import constants
from audit.models import Chunk, Workspace
from audit.pipeline.index import HybridIndex
from audit.pipeline.types import Passage


@dataclass(frozen=True)
class ChunkMeta:
    chunk_pk: int
    document_pk: int
    title: str
    uri: str
    domain: str
    published: object  # date | None
    sensitive: bool


class KnowledgeBase:
    """A workspace's searchable chunks: the hybrid index plus what a claim card needs of each."""

    def __init__(self, workspace_id: int):
        self.workspace_id = workspace_id
        self.index = HybridIndex()
        self.meta: dict[str, ChunkMeta] = {}
        self.version = -1
        self.lock = threading.RLock()

    def __len__(self) -> int:
        return len(self.index)

    def passage(self, source_id: str) -> Passage | None:
        meta = self.meta.get(source_id)
        if meta is None:
            return None
        return Passage(id=source_id, text=self.index.text(source_id) or "", title=meta.title, uri=meta.uri,
                       source_type="kb", published=meta.published, domain=meta.domain)

    def search(self, query_text: str, query_vec: np.ndarray, k: int = 10) -> list[tuple[Passage, float]]:
        hits = self.index.search(query_text, query_vec, k)
        return [(p, score) for p, score in ((self.passage(i), s) for i, s in hits) if p is not None]

    def search_many(self, query_texts: list[str], query_vecs: np.ndarray, k: int = 10) -> list[list[tuple[Passage, float]]]:
        results = self.index.search_many(query_texts, query_vecs, k)
        return [[(self.passage(i), s) for i, s in hits if i in self.meta] for hits in results]

    def sync(self, version: int) -> None:
        """Bring the index to the database's current chunks (added and deleted since last sync)."""
        with self.lock:
            if version == self.version:
                return
            db_ids = set(Chunk.objects.filter(document__workspace_id=self.workspace_id).values_list("pk", flat=True))
            known = {m.chunk_pk for m in self.meta.values()}
            stale = known - db_ids
            if stale:
                gone = [f"kb_chunk_{pk}" for pk in stale]
                self.index.remove(gone)
                for source_id in gone:
                    self.meta.pop(source_id, None)
            new = sorted(db_ids - known)
            for start in range(0, len(new), 5000):
                self._load(new[start : start + 5000])
            self.version = version

    def _load(self, pks: list[int]) -> None:
        rows = (
            Chunk.objects.filter(pk__in=pks)
            .values_list("pk", "text", "embedding", "document_id", "document__title", "document__uri",
                         "document__domain", "document__published_at", "document__sensitive")
        )
        ids, texts, vectors = [], [], []
        for pk, text, emb, doc_pk, title, uri, domain, published, sensitive in rows:
            source_id = f"kb_chunk_{pk}"
            ids.append(source_id)
            texts.append(text)
            vectors.append(np.frombuffer(bytes(emb), dtype="<f4"))
            self.meta[source_id] = ChunkMeta(pk, doc_pk, title, uri, domain, published, sensitive)
        if ids:
            self.index.add(ids, texts, np.vstack(vectors).reshape(len(ids), constants.EMBEDDING_DIM))


_INDEXES: dict[int, KnowledgeBase] = {}
_LOCK = threading.Lock()


def kb_index(workspace: Workspace | int) -> KnowledgeBase:
    """Return the workspace's knowledge base index, synced with the database."""
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    with _LOCK:
        kb = _INDEXES.get(workspace_id)
        if kb is None:
            kb = _INDEXES[workspace_id] = KnowledgeBase(workspace_id)
    version = Workspace.objects.filter(pk=workspace_id).values_list("kb_version", flat=True).first()
    if version is None:
        raise Workspace.DoesNotExist(f"workspace {workspace_id} does not exist")
    kb.sync(version)
    return kb


def kb_index_reset() -> None:
    """Forget every loaded index (tests that recreate the database between cases)."""
    with _LOCK:
        _INDEXES.clear()
