"""The pgvector back end of knowledge-base search, for large deployments.

When the database is PostgreSQL with the ``vector`` extension, migration 0006 makes
``Chunk.search_vector`` a ``vector(384)`` column with an HNSW index (cosine) and adds
``search_tsv``, a stored ``tsvector`` of the chunk text with a GIN index. Search then runs in
SQL and no process holds the knowledge base in memory: :class:`PgVectorIndex` asks HNSW for the
nearest chunks and full-text search (GIN) for the best keyword matches among chunks sharing two
consecutive content words with the query, and fuses the union exactly as the in-process
``HybridIndex`` does (``w * cosine + (1 - w) * rank / max rank``), with ``ts_rank`` over all the
query's words in place of BM25 (at most the ``PGVECTOR_LEXICAL_SCAN_CAP`` newest keyword
matches ranked per query, so the same query always ranks the same chunks). SQLite, and
PostgreSQL without the extension, keep the in-process index (``audit.kb.search``);
:func:`pgvector_ready` makes the choice, per database.
"""

from __future__ import annotations

import re
from itertools import pairwise

import numpy as np
from django.db import DatabaseError, transaction
from django.db import connection as default_connection

from audit.constants import (
    INDEX_CANDIDATES_FACTOR,
    INDEX_DENSE_WEIGHT,
    PGVECTOR_EF_SEARCH,
    PGVECTOR_HNSW_EF_CONSTRUCTION,
    PGVECTOR_HNSW_M,
    PGVECTOR_LEXICAL_SCAN_CAP,
)
from audit.models.vector import (  # the per-database checks the column's type shares with search
    extension_installed as extension_installed,
)
from audit.models.vector import (
    forget_backend_checks,
    pgvector_ready,
    vector_literal,
)
from audit.pipeline.text import content_words

TS_CONFIG = "english"
HNSW_INDEX = "audit_chunk_search_vector_hnsw"
GIN_INDEX = "audit_chunk_search_tsv_gin"
_WORD = re.compile(r"[^\W_]+")


def kb_backend(connection=None) -> str:
    """The search back end in use: "pgvector" or "in-process"."""
    return "pgvector" if pgvector_ready(connection) else "in-process"


def kb_backend_label(connection=None) -> str:
    if pgvector_ready(connection):
        return (
            f"pgvector (HNSW m={PGVECTOR_HNSW_M}, ef_search={PGVECTOR_EF_SEARCH}) + PostgreSQL full-text "
            "search, in the database"
        )
    return "in-process (torch bfloat16 exact cosine + BM25), loaded in each process"


# --- schema ------------------------------------------------------------------------------------
def create_extension(connection) -> bool:
    """CREATE EXTENSION vector where PostgreSQL offers it and we may; False otherwise (never raises)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cur.fetchone() is None:
            return False
        try:
            with transaction.atomic(using=connection.alias):
                cur.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError:  # e.g. a role that may not create extensions: stay in-process
            return False
    forget_backend_checks()
    return True


def add_search_columns(connection, *, backfill_batch: int = 2000) -> bool:
    """Where ``search_vector`` is a vector: fill it for existing chunks, add ``search_tsv`` and both indexes."""
    forget_backend_checks()
    if not pgvector_ready(connection):
        return False
    backfill_vectors(connection, batch=backfill_batch)
    with connection.cursor() as cur:
        cur.execute(
            f"ALTER TABLE audit_chunk ADD COLUMN IF NOT EXISTS search_tsv tsvector "
            f"GENERATED ALWAYS AS (to_tsvector('{TS_CONFIG}', text)) STORED"
        )
        cur.execute(
            f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON audit_chunk USING hnsw "
            f"(search_vector vector_cosine_ops) WITH (m = {PGVECTOR_HNSW_M}, "
            f"ef_construction = {PGVECTOR_HNSW_EF_CONSTRUCTION})"
        )
        cur.execute(f"CREATE INDEX IF NOT EXISTS {GIN_INDEX} ON audit_chunk USING gin (search_tsv)")
    return True


def backfill_vectors(connection, *, batch: int = 2000) -> int:
    """Fill ``search_vector`` from ``embedding`` where it is NULL (chunks stored before the column); the count."""
    done = 0
    with connection.cursor() as cur:
        last = 0
        while True:  # chunks stored before the column existed (keyset pages)
            cur.execute(
                "SELECT id, embedding FROM audit_chunk WHERE search_vector IS NULL AND id > %s "
                "ORDER BY id LIMIT %s",
                [last, batch],
            )
            rows = cur.fetchall()
            if not rows:
                break
            vectors = np.frombuffer(b"".join(bytes(e) for _, e in rows), dtype="<f4").reshape(len(rows), -1)
            cur.execute(
                "UPDATE audit_chunk AS c SET search_vector = v.vec::vector "
                "FROM unnest(%s::bigint[], %s::text[]) AS v(id, vec) WHERE c.id = v.id",
                [[pk for pk, _ in rows], [vector_literal(v) for v in vectors]],
            )
            last = rows[-1][0]
            done += len(rows)
    return done


def drop_search_columns(connection) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
            cur.execute(f"DROP INDEX IF EXISTS {GIN_INDEX}")
            cur.execute("ALTER TABLE audit_chunk DROP COLUMN IF EXISTS search_tsv")
    forget_backend_checks()


# --- search ------------------------------------------------------------------------------------
def _terms(text: str) -> list[str]:
    return list(dict.fromkeys(w for word in content_words(text) for w in _WORD.findall(word)))


def tsquery_terms(text: str) -> str:
    """A ``to_tsquery`` text OR-ing the content words of ``text`` (PostgreSQL stems them): the ranking."""
    return " | ".join(_terms(text))


def tsquery_pairs(text: str) -> str:
    """A ``to_tsquery`` text matching chunks that hold two consecutive content words of ``text``.

    The keyword candidates: on 100k chunks a claim's words OR-ed match ~20% of the chunks (a
    sequential scan ranking all of them, 0.5-1.7 s), adjacent pairs ~0.5% (GIN, tens of ms).
    """
    terms = _terms(text)
    if len(terms) < 2:
        return " | ".join(terms)
    return " | ".join(f"({a} & {b})" for a, b in pairwise(terms))


SEARCH_SQL = f"""
WITH dense AS (
    SELECT c.id FROM audit_chunk c JOIN audit_document d ON d.id = c.document_id
    WHERE d.workspace_id = %(ws)s AND c.search_vector IS NOT NULL
    ORDER BY c.search_vector <=> %(vec)s::vector LIMIT %(n)s
), matches AS (
    SELECT c.id, c.search_tsv FROM audit_chunk c JOIN audit_document d ON d.id = c.document_id
    WHERE d.workspace_id = %(ws)s AND c.search_tsv @@ to_tsquery('{TS_CONFIG}', %(pairs)s)
    ORDER BY c.id DESC LIMIT %(cap)s
), lexical AS (
    SELECT m.id FROM matches m
    ORDER BY ts_rank(m.search_tsv, to_tsquery('{TS_CONFIG}', %(terms)s)) DESC, m.id LIMIT %(n)s
)
SELECT c.id, 1 - (c.search_vector <=> %(vec)s::vector),
       ts_rank(c.search_tsv, to_tsquery('{TS_CONFIG}', %(terms)s))
FROM audit_chunk c WHERE c.id IN (SELECT id FROM dense UNION SELECT id FROM lexical)
"""

DENSE_SQL = """
SELECT c.id, 1 - (c.search_vector <=> %(vec)s::vector) FROM audit_chunk c
JOIN audit_document d ON d.id = c.document_id
WHERE d.workspace_id = %(ws)s AND c.search_vector IS NOT NULL
ORDER BY c.search_vector <=> %(vec)s::vector LIMIT %(n)s
"""


def fuse(rows, k: int, dense_weight: float = INDEX_DENSE_WEIGHT) -> list[tuple[str, float]]:
    """(chunk pk, cosine, rank) rows -> the top ``k`` (source id, fused score), best first; ties by pk."""
    top_rank = max((float(r or 0.0) for _, _, r in rows), default=0.0)
    scored = []
    for pk, cosine, rank in rows:
        lexical = float(rank or 0.0) / top_rank if top_rank > 0 else 0.0
        scored.append(
            (dense_weight * min(1.0, max(0.0, float(cosine or 0.0))) + (1.0 - dense_weight) * lexical, pk)
        )
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(f"kb_chunk_{pk}", score) for score, pk in scored[:k]]


class PgVectorIndex:
    """The ``SearchIndex`` of one workspace's chunks, answered by PostgreSQL (nothing held in memory)."""

    backend = "pgvector"

    def __init__(
        self,
        workspace_id: int,
        size: int = 0,
        *,
        ef_search: int = PGVECTOR_EF_SEARCH,
        dense_weight: float = INDEX_DENSE_WEIGHT,
        connection=None,
        lexical_cap: int = PGVECTOR_LEXICAL_SCAN_CAP,
    ):
        self.workspace_id = workspace_id
        self.lexical_cap = lexical_cap
        self.size = size
        self.ef_search = ef_search
        self.dense_weight = dense_weight
        self._connection = connection

    def __len__(self) -> int:
        return self.size

    @property
    def connection(self):
        return self._connection or default_connection

    def _tune(self, cur, n: int) -> None:
        # HNSW returns at most ef_search rows; the iterative scan keeps going past chunks of other
        # workspaces, so a filtered query still gets its n nearest.
        cur.execute(
            "SELECT set_config('hnsw.ef_search', %s, false), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', false)",
            [str(max(self.ef_search, n))],
        )

    def search(self, query_text: str, query_vec: np.ndarray, k: int = 10) -> list[tuple[str, float]]:
        return self.search_many([query_text], np.asarray(query_vec).reshape(1, -1), k)[0]

    def search_many(
        self, query_texts: list[str], query_vecs: np.ndarray, k: int = 10
    ) -> list[list[tuple[str, float]]]:
        if not query_texts:
            return []
        n = max(k, 1) * INDEX_CANDIDATES_FACTOR
        vecs = np.asarray(query_vecs, dtype=np.float32).reshape(len(query_texts), -1)
        out = []
        with self.connection.cursor() as cur:
            self._tune(cur, n)
            for text, vec in zip(query_texts, vecs):
                cur.execute(
                    SEARCH_SQL,
                    {
                        "ws": self.workspace_id,
                        "vec": vector_literal(vec),
                        "n": n,
                        "terms": tsquery_terms(text),
                        "pairs": tsquery_pairs(text),
                        "cap": self.lexical_cap,
                    },
                )
                out.append(fuse(cur.fetchall(), k, self.dense_weight))
        return out

    def dense_search(self, query_vec: np.ndarray, k: int = 10) -> list[tuple[int, float]]:
        """The ``k`` nearest chunks by cosine alone (HNSW): (chunk pk, cosine), nearest first."""
        with self.connection.cursor() as cur:
            self._tune(cur, k)
            cur.execute(DENSE_SQL, {"ws": self.workspace_id, "vec": vector_literal(query_vec), "n": k})
            return [(pk, float(c)) for pk, c in cur.fetchall()]
