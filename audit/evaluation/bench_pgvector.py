"""The scale benchmark of the pgvector back end (``manage.py bench --backend pgvector --chunks N``).

1. A seeded synthetic knowledge base, generated fast: a pool of real benchmark sentences is
   embedded once (cached under ``var/``); each chunk joins 3-6 of them and its vector is their
   normalised mean, computed in NumPy blocks (realistic, clustered vectors; no model call per chunk).
2. Ingest: ``COPY`` into ``audit_document``/``audit_chunk`` (text, float32 bytes, vector; the
   tsvector is generated) with the search indexes dropped, then the GIN and HNSW builds
   (``maintenance_work_mem`` from ``theoria.pgserver.BENCH_OPTIONS``). The database is a local
   pgvector PostgreSQL under ``var/pgvector-bench`` unless ``--database-url`` names one; a rerun with
   the same size reuses what is there (and its ingest figures) unless ``--rebuild``.
3. recall@10 of the HNSW search against exact cosine (NumPy over every vector), and search p50/p95
   (dense alone, and the hybrid query the pipeline runs).
4. Audit-Local p50/p95 per answer, in a fresh process that stands for one web worker (model loaded
   once; nothing of the knowledge base loaded), whose resident memory is reported.
The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import struct
import sys
import time
from pathlib import Path

import numpy as np

BENCH_DB = "theoria_bench"
CHUNKS_PER_DOCUMENT = 100
QUERIES = 200
SEED = 20261124
COPY_BLOCK = 20_000
CHUNK_COLUMNS = (
    "document_id",
    "ordinal",
    "text",
    "start_offset",
    "end_offset",
    "content_hash",
    "embedding",
    "search_vector",
)


def _rss_mb() -> tuple[float, float]:
    """(resident, peak resident) MB of this process, from /proc."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            key, value = line.split(":", 1)
            values[key] = int(value.split()[0]) / 1024
    return round(values.get("VmRSS", 0.0), 1), round(values.get("VmHWM", 0.0), 1)


def _pct(values, q: float) -> float:
    return round(float(np.percentile(np.asarray(values), q)), 2)


# --- synthetic knowledge base ----------------------------------------------------------------
def sentence_pool(cache_dir: Path, err, size: int = 4000) -> tuple[list[str], np.ndarray]:
    """Real sentences and their embeddings, embedded once and cached."""
    path = cache_dir / f"bench_pool_{size}.npz"
    if path.exists():
        data = np.load(path, allow_pickle=False)
        return [str(t) for t in data["texts"]], data["vectors"]
    from audit.evaluation.cli import benchmark_sentences
    from audit.pipeline.embedding import get_embedder

    texts = benchmark_sentences(err, size)
    print(f"bench: embedding a pool of {len(texts)} sentences (once; cached in {path})", file=err)
    vectors = get_embedder().encode(texts, show_progress=True).astype(np.float32)
    np.savez(path, texts=np.array(texts), vectors=vectors)
    return texts, vectors


def synthetic_chunks(n: int, pool_vectors: np.ndarray, seed: int = SEED, block: int = COPY_BLOCK):
    """Yield (start, picks, counts, vectors) blocks: chunk i joins pool sentences picks[i, :counts[i]]."""
    rng = np.random.default_rng(seed)
    for start in range(0, n, block):
        size = min(block, n - start)
        picks = rng.integers(0, len(pool_vectors), (size, 6))
        counts = rng.integers(3, 7, size)
        mask = (np.arange(6)[None, :] < counts[:, None]).astype(np.float32)
        vectors = np.einsum("nk,nkd->nd", mask, pool_vectors[picks])
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        yield start, picks, counts, vectors.astype(np.float32)


def chunk_text(pool: list[str], picks, count) -> str:
    return " ".join(pool[j] for j in picks[:count])


_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)


def _binary_rows(
    start: int, picks, counts, vectors: np.ndarray, pool: list[str], doc_ids: list[int]
) -> bytes:
    """One block of rows in PostgreSQL's binary COPY format (fields as in CHUNK_COLUMNS)."""
    dims = vectors.shape[1]
    raw = vectors.astype("<f4")
    pg_vectors = vectors.astype(">f4")  # pgvector's binary form: int16 dimensions, int16 unused, float4 BE
    vec_head = struct.pack(">ihh", 4 + 4 * dims, dims, 0)
    emb_head = struct.pack(">i", 4 * dims)
    out = []
    for j in range(len(vectors)):
        i = start + j
        text = chunk_text(pool, picks[j], counts[j]).encode()
        digest = f"sha256:bench{i}".encode()
        out.append(
            b"".join(
                (
                    struct.pack(
                        ">hiqiii",
                        8,
                        8,
                        doc_ids[i // CHUNKS_PER_DOCUMENT],
                        4,
                        i % CHUNKS_PER_DOCUMENT,
                        len(text),
                    ),
                    text,
                    struct.pack(">iiii", 4, 0, 4, len(text)),
                    struct.pack(">i", len(digest)),
                    digest,
                    emb_head,
                    raw[j].tobytes(),
                    vec_head,
                    pg_vectors[j].tobytes(),
                )
            )
        )
    return b"".join(out)


# --- database -------------------------------------------------------------------------------
def bench_server(url: str | None, var_dir: Path, err):
    """(the benchmark database URL, the local server started for it or None)."""
    if url:
        return url, None
    from theoria.pgserver import BENCH_OPTIONS, pgvector_server

    server = pgvector_server(var_dir / "pgvector-bench", BENCH_OPTIONS)
    print(f"bench: local pgvector PostgreSQL on 127.0.0.1:{server.port} ({server.pgdata})", file=err)
    import psycopg

    with psycopg.connect(
        f"host=127.0.0.1 port={server.port} user=postgres dbname=postgres", autocommit=True
    ) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone():
            conn.execute(f"CREATE DATABASE {BENCH_DB}")
    return server.url(BENCH_DB), server


def use_database(url: str):
    """Point Django's default database at ``url`` (before anything has used it) and migrate it."""
    import dj_database_url
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    full = connections.configure_settings({"default": dj_database_url.parse(url)})["default"]
    settings.DATABASES["default"] = connections.settings["default"] = full
    connections["default"].close()
    del connections["default"]
    os.environ["DATABASE_URL"] = url  # for the worker process
    connection = connections["default"]
    if connection.vendor != "postgresql":
        raise SystemExit("bench: --backend pgvector needs a PostgreSQL database URL.")
    call_command("migrate", verbosity=0)
    from audit.kb.pgvector import pgvector_ready

    if not pgvector_ready(connection):
        raise SystemExit(
            "bench: the benchmark database has no pgvector extension (CREATE EXTENSION vector failed)."
        )
    return connection


def _workspace(connection) -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT id FROM audit_workspace WHERE slug = 'bench'")
        row = cur.fetchone()
        if row:
            return row[0]
    from audit.models import Workspace

    return Workspace.objects.create(name="Bench", slug="bench").pk


def ingest(connection, workspace_id: int, n: int, pool: list[str], pool_vectors: np.ndarray, err) -> dict:
    """COPY n synthetic chunks (indexes dropped), then build GIN and HNSW; the timings."""
    from tqdm import tqdm

    from audit.constants import PGVECTOR_HNSW_EF_CONSTRUCTION, PGVECTOR_HNSW_M
    from audit.kb.pgvector import GIN_INDEX, HNSW_INDEX

    connection.ensure_connection()
    cur = connection.connection.cursor()  # psycopg's own cursor, for COPY (Django's connection autocommits)
    cur.execute(
        "DELETE FROM audit_chunk WHERE document_id IN (SELECT id FROM audit_document WHERE workspace_id = %s)",
        [workspace_id],
    )
    cur.execute("DELETE FROM audit_document WHERE workspace_id = %s", [workspace_id])
    cur.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    cur.execute(f"DROP INDEX IF EXISTS {GIN_INDEX}")
    cur.execute("VACUUM audit_chunk")
    n_docs = -(-n // CHUNKS_PER_DOCUMENT)
    cur.execute(
        "INSERT INTO audit_document (workspace_id, title, uri, domain, date_inferred, content_hash, sensitive, "
        "source_path, created_at, updated_at) SELECT %s, 'Bench document ' || g, 'kb://bench/' || g, "
        "'general', false, 'sha256:' || md5(g::text), false, '', now(), now() FROM generate_series(0, %s) g "
        "RETURNING id",
        [workspace_id, n_docs - 1],
    )
    doc_ids = sorted(r[0] for r in cur.fetchall())
    bar = tqdm(
        total=n, desc="bench ingest (COPY)", unit="chunk", file=err, dynamic_ncols=True, mininterval=0.5
    )
    t0 = time.perf_counter()
    with cur.copy(f"COPY audit_chunk ({', '.join(CHUNK_COLUMNS)}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.write(_COPY_HEADER)
        for start, picks, counts, vectors in synthetic_chunks(n, pool_vectors):
            copy.write(_binary_rows(start, picks, counts, vectors, pool, doc_ids))
            bar.update(len(vectors))
        copy.write(b"\xff\xff")
    copy_s = time.perf_counter() - t0
    bar.close()
    t1 = time.perf_counter()
    cur.execute(f"CREATE INDEX {GIN_INDEX} ON audit_chunk USING gin (search_tsv)")
    gin_s = time.perf_counter() - t1
    print(f"bench: COPY {n} chunks {copy_s:.1f}s, GIN {gin_s:.1f}s; building HNSW…", file=err)
    t2 = time.perf_counter()
    cur.execute(
        f"CREATE INDEX {HNSW_INDEX} ON audit_chunk USING hnsw (search_vector vector_cosine_ops) "
        f"WITH (m = {PGVECTOR_HNSW_M}, ef_construction = {PGVECTOR_HNSW_EF_CONSTRUCTION})"
    )
    hnsw_s = time.perf_counter() - t2
    cur.execute("ANALYZE audit_chunk")
    cur.execute("ANALYZE audit_document")
    cur.execute("UPDATE audit_workspace SET kb_version = kb_version + 1 WHERE id = %s", [workspace_id])
    cur.execute("SELECT pg_total_relation_size('audit_chunk')")
    size_mb = cur.fetchone()[0] / 2**20
    total = copy_s + gin_s + hnsw_s
    return {
        "copy_s": round(copy_s, 1),
        "gin_s": round(gin_s, 1),
        "hnsw_s": round(hnsw_s, 1),
        "ingest_chunks_per_s": round(n / total, 1),
        "copy_chunks_per_s": round(n / copy_s, 1),
        "table_mb": round(size_mb, 1),
    }


def _count(connection, workspace_id: int) -> int:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM audit_chunk c JOIN audit_document d ON d.id = c.document_id "
            "WHERE d.workspace_id = %s AND c.search_vector IS NOT NULL",
            [workspace_id],
        )
        return cur.fetchone()[0]


# --- the worker process (Audit-Local) ---------------------------------------------------------
def _worker(workspace_id: int, size: int, answers: list[tuple[str, str]], warmup: int, depth, judge):
    """Runs in a fresh process, like a web worker: the model, a connection, no knowledge base in memory."""
    import django

    django.setup()  # DATABASE_URL names the benchmark database (set by use_database)
    from django.db import connection

    from audit.constants import Thresholds
    from audit.kb.pgvector import PgVectorIndex
    from audit.models import Chunk
    from audit.pipeline.audit import audit_answer
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.retrieval import KnowledgeBase
    from audit.pipeline.types import Passage

    index = PgVectorIndex(workspace_id, size, connection=connection)

    def rows(ids: list[str], columns: str) -> list[tuple]:
        pks = [int(i.removeprefix("kb_chunk_")) for i in ids]
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT c.id, {columns} FROM audit_chunk c JOIN audit_document d ON d.id = c.document_id "
                "WHERE c.id = ANY(%s) AND d.workspace_id = %s",
                [pks, workspace_id],
            )
            return cur.fetchall()

    def lookup(ids: list[str]) -> dict[str, Passage]:
        return {
            f"kb_chunk_{pk}": Passage(id=f"kb_chunk_{pk}", text=text, title=title, source_type="kb")
            for pk, text, title in rows(ids, "c.text, d.title")
        }

    def vectors(ids: list[str]) -> dict[str, np.ndarray]:
        return {f"kb_chunk_{pk}": Chunk.decode_vector(emb) for pk, emb in rows(ids, "c.embedding")}

    kb = KnowledgeBase(index=index, lookup=lookup, vectors=vectors)
    thresholds = Thresholds().updated(
        {**({"verification_depth": depth} if depth else {}), **({"judge": judge} if judge else {})}
    )
    get_embedder()
    for query, answer in answers[:warmup]:
        audit_answer(query, answer, [], kb=kb, thresholds=thresholds)
    rss_warm, _ = _rss_mb()
    latencies, claims = [], 0
    for query, answer in answers[warmup:]:
        start = time.perf_counter()
        result = audit_answer(query, answer, [], kb=kb, thresholds=thresholds)
        latencies.append(1000 * (time.perf_counter() - start))
        claims += len(result.claims)
    rss, peak = _rss_mb()
    return {
        "latencies": latencies,
        "claims": claims,
        "rss_after_warmup_mb": rss_warm,
        "rss_mb": rss,
        "peak_rss_mb": peak,
    }


# --- the command ------------------------------------------------------------------------------
# long: a benchmark script: the server, the data and the timings it reports share one run
def run_pgvector_bench(
    n_chunks: int,
    n_answers: int = 30,
    claims_per_answer: int = 10,
    *,
    database_url: str = "",
    rebuild: bool = False,
    depth=None,
    judge=None,
    ef_search: int | None = None,
    out=None,
    err=None,
) -> dict:
    from django.conf import settings

    from audit.constants import PGVECTOR_EF_SEARCH
    from audit.evaluation.cli import bench_answers
    from audit.kb.pgvector import PgVectorIndex

    out, err = out or sys.stdout, err or sys.stderr
    var_dir = Path(settings.VAR_DIR)
    pool, pool_vectors = sentence_pool(var_dir, err)
    url, server = bench_server(database_url, var_dir, err)
    try:
        connection = use_database(url)
        workspace_id = _workspace(connection)
        figures_path = var_dir / f"bench_pgvector_{n_chunks}.json"
        if not rebuild and figures_path.exists() and _count(connection, workspace_id) == n_chunks:
            ingest_figures = {**json.loads(figures_path.read_text()), "reused": True}
            print(
                f"bench: reusing the {n_chunks} chunks already in {BENCH_DB} (--rebuild to ingest again)",
                file=err,
            )
        else:
            ingest_figures = ingest(connection, workspace_id, n_chunks, pool, pool_vectors, err)
            figures_path.write_text(json.dumps(ingest_figures))
        ef = ef_search or PGVECTOR_EF_SEARCH
        index = PgVectorIndex(workspace_id, n_chunks, ef_search=ef, connection=connection)
        with connection.cursor() as cur:
            cur.execute(
                "SELECT min(c.id) FROM audit_chunk c JOIN audit_document d ON d.id = c.document_id "
                "WHERE d.workspace_id = %s",
                [workspace_id],
            )
            first_pk = cur.fetchone()[0]

        # queries: pool sentences (what claims look like), embedded with the same model
        rng = np.random.default_rng(SEED + 1)
        q_idx = rng.choice(len(pool), QUERIES, replace=False)
        queries, q_texts = pool_vectors[q_idx], [pool[i] for i in q_idx]
        best = np.full((QUERIES, 0), -np.inf, dtype=np.float32)
        best_ids = np.zeros((QUERIES, 0), dtype=np.int64)
        for start, _picks, _counts, vectors in synthetic_chunks(n_chunks, pool_vectors):
            sims = queries @ vectors.T
            ids = np.broadcast_to(np.arange(start, start + len(vectors)), sims.shape)
            all_s = np.concatenate([best, sims], axis=1)
            all_i = np.concatenate([best_ids, ids], axis=1)
            keep = np.argpartition(-all_s, 10, axis=1)[:, :10]
            best = np.take_along_axis(all_s, keep, 1)
            best_ids = np.take_along_axis(all_i, keep, 1)
        exact = [set((first_pk + best_ids[q]).tolist()) for q in range(QUERIES)]

        dense_ms, found = [], []
        for q in range(QUERIES):
            t = time.perf_counter()
            hits = index.dense_search(queries[q], 10)
            dense_ms.append(1000 * (time.perf_counter() - t))
            found.append({pk for pk, _ in hits})
        recall = float(np.mean([len(e & f) / 10 for e, f in zip(exact, found)]))
        hybrid_ms = []
        for q in range(QUERIES):
            t = time.perf_counter()
            index.search(q_texts[q], queries[q], 30)
            hybrid_ms.append(1000 * (time.perf_counter() - t))

        texts_for_answers = [
            chunk_text(pool, p, c)
            for _, picks, counts, _v in synthetic_chunks(min(n_chunks, 20_000), pool_vectors)
            for p, c in zip(picks, counts)
        ]
        answers = bench_answers(texts_for_answers, n_answers + 3, claims_per_answer)
        print(
            f"bench: recall@10 {recall:.3f}; auditing {n_answers} answers in a fresh worker process", file=err
        )
        ctx = multiprocessing.get_context("spawn")
        pool_proc = ctx.Pool(1)
        try:
            worker = pool_proc.apply(_worker, (workspace_id, n_chunks, answers, 3, depth, judge))
        finally:
            pool_proc.close()
            pool_proc.join()
        lat = worker["latencies"]
        summary = {
            "backend": "pgvector",
            "chunks": n_chunks,
            **ingest_figures,
            "ef_search": ef,
            "recall_at_10": round(recall, 4),
            "search_p50_ms": _pct(dense_ms, 50),
            "search_p95_ms": _pct(dense_ms, 95),
            "hybrid_search_p50_ms": _pct(hybrid_ms, 50),
            "hybrid_search_p95_ms": _pct(hybrid_ms, 95),
            "audit_p50_ms": _pct(lat, 50),
            "audit_p95_ms": _pct(lat, 95),
            "claims_per_s": round(worker["claims"] / (sum(lat) / 1000), 1),
            "worker_rss_mb": worker["rss_mb"],
            "worker_rss_after_warmup_mb": worker["rss_after_warmup_mb"],
            "worker_peak_rss_mb": worker["peak_rss_mb"],
        }
        print(
            f"pgvector, {n_chunks} chunks; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            file=out,
        )
        print(
            f"ingest: COPY {ingest_figures['copy_s']} s, GIN {ingest_figures['gin_s']} s, HNSW "
            f"{ingest_figures['hnsw_s']} s = {ingest_figures['ingest_chunks_per_s']} chunks/s"
            f"{' (from the run that ingested them)' if ingest_figures.get('reused') else ''}",
            file=out,
        )
        print(
            f"recall@10 vs exact {recall:.3f} (ef_search {ef}); dense search p50 {summary['search_p50_ms']} ms, "
            f"p95 {summary['search_p95_ms']} ms; hybrid p50 {summary['hybrid_search_p50_ms']} ms, "
            f"p95 {summary['hybrid_search_p95_ms']} ms",
            file=out,
        )
        print(
            f"Audit-Local per answer: p50 {summary['audit_p50_ms']} ms, p95 {summary['audit_p95_ms']} ms; "
            f"worker resident memory {summary['worker_rss_mb']} MB (peak {summary['worker_peak_rss_mb']} MB)",
            file=out,
        )
        print(json.dumps(summary), file=out)
        return summary
    finally:
        from django.db import connections

        connections["default"].close()
        if server is not None:
            server.stop()
