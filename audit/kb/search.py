"""Each workspace's knowledge-base search, kept in step with the database, on one of two back ends.

Each process (web worker, task worker, command) holds one knowledge base per workspace. Before a
search, :func:`kb_index` compares ``Workspace.kb_version`` (one cheap query) with the version the
knowledge base was synced at, so ingestion and deletion in any process are seen everywhere.

- :class:`InProcessKnowledgeBase` (SQLite, PostgreSQL without pgvector): the chunks live in memory in an
  ``audit.pipeline.index.HybridIndex`` (dense + BM25); a sync loads only the chunks added since
  and drops the deleted ones. Memory grows with the knowledge base (~1.4 GB at 100k chunks).
- :class:`PgKnowledgeBase` (PostgreSQL with pgvector, ``audit.kb.pgvector``): search runs in SQL
  and only the chunks a search returns are read; a sync re-counts the chunks. Memory does not
  grow with the knowledge base.

The back end is chosen per database by :func:`audit.kb.pgvector.pgvector_ready`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

import numpy as np

from audit import constants
from audit.kb.encodings import ENCODINGS
from audit.kb.pgvector import PgVectorIndex, forget_backend_checks, pgvector_ready
from audit.models import Chunk, Workspace
from audit.pipeline.index import HybridIndex, SearchIndex
from audit.pipeline.retrieval import KnowledgeBase as RetrievalKnowledgeBase
from audit.pipeline.types import Passage

META_FIELDS = (
    "pk",
    "document_id",
    "document__title",
    "document__uri",
    "document__domain",
    "document__published_at",
    "document__sensitive",
)
PG_META_CACHE = 20_000  # chunk descriptions a pgvector knowledge base remembers between searches


@dataclass(frozen=True)
class ChunkMeta:
    chunk_pk: int
    document_pk: int
    title: str
    uri: str
    domain: str
    published: date | None
    sensitive: bool


class _Searchable:
    """What both back ends share: search results as passages."""

    index: SearchIndex  # each back end sets its own in __init__

    def __len__(self) -> int:
        return len(self.index)

    def passages(self, source_ids: list[str]) -> dict[str, Passage]:
        raise NotImplementedError

    def passage(self, source_id: str) -> Passage | None:
        return self.passages([source_id]).get(source_id)

    def vectors(self, source_ids: list[str]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def for_pipeline(self) -> RetrievalKnowledgeBase:
        """This knowledge base as the pipeline's retrieval sees one (its index, passages and stored vectors by
        id, and its sentences' encodings computed at ingestion)."""
        return RetrievalKnowledgeBase(
            index=self.index, lookup=self.passages, vectors=self.vectors, encodings=ENCODINGS
        )

    def ports(self) -> tuple[RetrievalKnowledgeBase | None, Callable[[set[str]], dict[str, ChunkMeta]]]:
        """What an audit in the pipeline reads of this knowledge base: its search (None while it is
        empty) and :meth:`cited_meta`."""
        return (self.for_pipeline() if len(self) else None), self.cited_meta

    def cited_meta(self, source_ids: set[str]) -> dict[str, ChunkMeta]:
        """The metadata (chunk, sensitivity) of the passages an audit cites whose chunk still exists:
        what their evidence rows link and how their snippets are stored."""
        found = self.meta_for(source_ids)
        chunk_pks = [m.chunk_pk for m in found.values()]
        valid = set(Chunk.objects.filter(pk__in=chunk_pks).values_list("pk", flat=True)) if found else set()
        return {k: m for k, m in found.items() if m.chunk_pk in valid}

    def meta_for(self, source_ids: Iterable[str]) -> dict[str, ChunkMeta]:
        raise NotImplementedError

    def search(self, query_text: str, query_vec: np.ndarray, k: int = 10) -> list[tuple[Passage, float]]:
        return self.search_many([query_text], np.asarray(query_vec).reshape(1, -1), k)[0]

    def search_many(
        self, query_texts: list[str], query_vecs: np.ndarray, k: int = 10
    ) -> list[list[tuple[Passage, float]]]:
        results = self.index.search_many(query_texts, query_vecs, k)
        found = self.passages(sorted({i for hits in results for i, _ in hits}))
        return [[(found[i], s) for i, s in hits if i in found] for hits in results]


def _passage(source_id: str, text: str, meta: ChunkMeta) -> Passage:
    return Passage(
        id=source_id,
        text=text,
        title=meta.title,
        uri=meta.uri,
        source_type="kb",
        published=meta.published,
        domain=meta.domain,
    )


class InProcessKnowledgeBase(_Searchable):
    """A workspace's searchable chunks held in memory: the hybrid index plus what a claim card needs of each."""

    index: HybridIndex
    backend = "in-process"

    def __init__(self, workspace_id: int):
        self.workspace_id = workspace_id
        self.index = HybridIndex()
        self.meta: dict[str, ChunkMeta] = {}
        self.version = -1
        self.lock = threading.RLock()

    def passages(self, source_ids: list[str]) -> dict[str, Passage]:
        return {i: _passage(i, self.index.text(i) or "", m) for i in source_ids if (m := self.meta.get(i))}

    def meta_for(self, source_ids) -> dict[str, ChunkMeta]:
        return {i: m for i in source_ids if (m := self.meta.get(i)) is not None}

    def vectors(self, source_ids: list[str]) -> dict[str, np.ndarray]:
        return self.index.vectors(source_ids)

    def sync(self, version: int) -> None:
        """Bring the index to the database's current chunks (added and deleted since last sync) and
        their documents' current metadata (an edited domain or date is searched at once)."""
        with self.lock:
            if version == self.version:
                return
            current = {
                pk: ChunkMeta(pk, *meta)
                for pk, *meta in Chunk.objects.filter(document__workspace_id=self.workspace_id).values_list(
                    *META_FIELDS
                )
            }
            db_ids = set(current)
            known = {m.chunk_pk for m in self.meta.values()}
            for pk in known & db_ids:
                self.meta[f"kb_chunk_{pk}"] = current[pk]
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
        rows = Chunk.objects.filter(pk__in=pks).values_list("text", "embedding", *META_FIELDS)
        ids, texts, vectors = [], [], []
        for text, emb, pk, *meta in rows:
            source_id = f"kb_chunk_{pk}"
            ids.append(source_id)
            texts.append(text)
            vectors.append(Chunk.decode_vector(emb))
            self.meta[source_id] = ChunkMeta(pk, *meta)
        if ids:
            self.index.add(ids, texts, np.vstack(vectors).reshape(len(ids), constants.EMBEDDING_DIM))


class PgKnowledgeBase(_Searchable):
    """A workspace's chunks searched in PostgreSQL (pgvector + full-text search); nothing loaded up front.

    Only the descriptions of chunks that searches return are remembered (at most
    ``PG_META_CACHE``, forgotten when the knowledge base changes), so memory stays flat however
    large the knowledge base grows.
    """

    index: PgVectorIndex
    backend = "pgvector"

    def __init__(self, workspace_id: int):
        self.workspace_id = workspace_id
        self.index = PgVectorIndex(workspace_id)
        self.version = -1
        self.lock = threading.RLock()
        self._meta: OrderedDict[str, ChunkMeta] = OrderedDict()

    def sync(self, version: int) -> None:
        with self.lock:
            if version == self.version:
                return
            self.index.size = Chunk.objects.filter(document__workspace_id=self.workspace_id).count()
            self._meta.clear()
            self.version = version

    def _rows(self, source_ids, *fields):
        pks = [int(i.removeprefix("kb_chunk_")) for i in source_ids if i.startswith("kb_chunk_")]
        return Chunk.objects.filter(pk__in=pks, document__workspace_id=self.workspace_id).values_list(*fields)

    def _remember(self, source_id: str, meta: ChunkMeta) -> None:
        with self.lock:
            self._meta[source_id] = meta
            self._meta.move_to_end(source_id)
            while len(self._meta) > PG_META_CACHE:
                self._meta.popitem(last=False)

    def passages(self, source_ids: list[str]) -> dict[str, Passage]:
        out = {}
        for text, pk, *meta in self._rows(source_ids, "text", *META_FIELDS):
            source_id, chunk_meta = f"kb_chunk_{pk}", ChunkMeta(pk, *meta)
            self._remember(source_id, chunk_meta)
            out[source_id] = _passage(source_id, text, chunk_meta)
        return out

    def vectors(self, source_ids: list[str]) -> dict[str, np.ndarray]:
        return {
            f"kb_chunk_{pk}": Chunk.decode_vector(emb)
            for pk, emb in self._rows(source_ids, "pk", "embedding")
        }

    def meta_for(self, source_ids) -> dict[str, ChunkMeta]:
        with self.lock:
            out = {i: m for i in source_ids if (m := self._meta.get(i)) is not None}
        missing = [i for i in source_ids if i not in out]
        for pk, *meta in self._rows(missing, *META_FIELDS) if missing else ():
            out[f"kb_chunk_{pk}"] = chunk_meta = ChunkMeta(pk, *meta)
            self._remember(f"kb_chunk_{pk}", chunk_meta)
        return out


_INDEXES: dict[int, InProcessKnowledgeBase] = {}
_LOCK = threading.Lock()


def kb_index(workspace: Workspace | int) -> InProcessKnowledgeBase | PgKnowledgeBase:
    """Return the workspace's knowledge base index, synced with the database."""
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    cls = PgKnowledgeBase if pgvector_ready() else InProcessKnowledgeBase
    with _LOCK:
        kb = _INDEXES.get(workspace_id)
        if type(kb) is not cls:
            kb = _INDEXES[workspace_id] = cls(workspace_id)
    version = Workspace.objects.filter(pk=workspace_id).values_list("kb_version", flat=True).first()
    if version is None:
        raise Workspace.DoesNotExist(f"workspace {workspace_id} does not exist")
    kb.sync(version)
    return kb


def kb_index_reset() -> None:
    """Forget every loaded index and back-end check (tests that recreate the database between cases)."""
    with _LOCK:
        _INDEXES.clear()
    forget_backend_checks()
