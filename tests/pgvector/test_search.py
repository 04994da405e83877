"""Knowledge-base search on PostgreSQL with pgvector: HNSW + full-text search in SQL, nothing in memory."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.kb.pgvector import (
    DENSE_SQL,
    HNSW_INDEX,
    PgVectorIndex,
    backfill_vectors,
    kb_backend,
    pgvector_ready,
    vector_literal,
)
from audit.kb.search import PgKnowledgeBase, kb_index
from audit.models import Chunk, Document, Evidence, Workspace

pytestmark = [pytest.mark.pgvector, pytest.mark.slow]

LTP = "Long-term potentiation in CA1 synapses depends on NMDA receptor activation and calcium influx."
TAXES = "Quarterly VAT returns are due within thirty days after the end of each quarter."
CODE = "Form ZX-4471 must be countersigned by the facility's radiation safety officer before any shipment."


def titles(workspace, query: str, embedder, k: int = 3) -> list[str]:
    return [p.title for p, _ in kb_index(workspace).search(query, embedder.encode([query])[0], k)]


def test_it_searches_in_postgresql_when_pgvector_is_installed(workspace):
    assert pgvector_ready() and kb_backend() == "pgvector"
    assert isinstance(kb_index(workspace), PgKnowledgeBase)


def test_an_ingested_document_is_found_by_meaning_and_by_a_rare_keyword(ingest, workspace, embedder):
    ingest("Plasticity", LTP)
    ingest("Tax calendar", TAXES)
    ingest("Shipping rules", CODE)

    assert len(kb_index(workspace)) == 3
    assert titles(workspace, "What does LTP require at hippocampal synapses?", embedder)[0] == "Plasticity"
    assert titles(workspace, "ZX-4471", embedder)[0] == "Shipping rules"
    stored = Chunk.objects.get(document__title="Plasticity")
    assert np.allclose(stored.search_vector, stored.vector(), atol=1e-6)


def _candidate_titles(workspace, query: str, vec, *, n: int, cap: int) -> set[str]:
    from audit.kb.pgvector import SEARCH_SQL, tsquery_pairs, tsquery_terms

    params = {
        "ws": workspace.pk,
        "vec": vector_literal(vec),
        "n": n,
        "cap": cap,
        "terms": tsquery_terms(query),
        "pairs": tsquery_pairs(query),
    }
    with connection.cursor() as cur:
        cur.execute(SEARCH_SQL, params)
        ids = [row[0] for row in cur.fetchall()]
    return set(Chunk.objects.filter(pk__in=ids).values_list("document__title", flat=True))


def test_the_keyword_leg_ranks_only_the_newest_matches_up_to_its_cap(ingest, workspace, embedder):
    ingest("Strong match", f"{CODE} {CODE} {CODE}")  # the best keyword rank, ingested first
    ingest("Weak match", f"{TAXES} The radiation safety officer signs it. {LTP}")
    ingest("Tax calendar", TAXES)
    other = Workspace.objects.create(name="Other company", slug="other-company")
    ingest("Their shipping rules", CODE, into=other)  # newest of all, in another workspace
    query = "Form ZX-4471 is countersigned by the radiation safety officer"
    tax_vec = embedder.encode([TAXES])[0]  # the dense leg (n=1) proposes the tax calendar only

    assert _candidate_titles(workspace, query, tax_vec, n=1, cap=2000) == {"Tax calendar", "Strong match"}
    # capped at one, only the newest match of this workspace is ranked, every time
    for _ in range(3):
        assert _candidate_titles(workspace, query, tax_vec, n=1, cap=1) == {"Tax calendar", "Weak match"}


def test_a_deleted_document_leaves_search_at_once(ingest, workspace, embedder):
    from audit.services.ingestion import document_delete

    ingest("Plasticity", LTP)
    ingest("Tax calendar", TAXES)
    assert titles(workspace, "NMDA receptors and LTP", embedder)[0] == "Plasticity"

    document_delete(document=Document.objects.get(title="Plasticity"))

    assert titles(workspace, "NMDA receptors and LTP", embedder) == ["Tax calendar"]


def test_the_pipeline_reads_a_chunks_stored_vector_and_never_another_workspaces(ingest, workspace, embedder):
    other = Workspace.objects.create(name="Other company", slug="other-company")
    ingest("Their plasticity notes", LTP, into=other)
    ingest("Tax calendar", TAXES)
    mine = Chunk.objects.get(document__title="Tax calendar")
    theirs = Chunk.objects.get(document__workspace=other)

    found = kb_index(workspace).for_pipeline().vectors([f"kb_chunk_{mine.pk}", f"kb_chunk_{theirs.pk}"])

    assert list(found) == [f"kb_chunk_{mine.pk}"]
    assert np.allclose(found[f"kb_chunk_{mine.pk}"], mine.vector(), atol=1e-6)


def test_search_never_returns_another_workspaces_chunks(ingest, workspace, embedder):
    other = Workspace.objects.create(name="Other company", slug="other-company")
    ingest("Their plasticity notes", LTP, into=other)
    ingest("Tax calendar", TAXES)

    assert titles(workspace, "NMDA receptors and LTP", embedder) == ["Tax calendar"]
    assert titles(other, "NMDA receptors and LTP", embedder) == ["Their plasticity notes"]
    assert kb_index(workspace).passages([f"kb_chunk_{Chunk.objects.get(document__workspace=other).pk}"]) == {}


def seeded_vectors(n: int, seed: int = 19) -> np.ndarray:
    """Unit vectors shaped like sentence embeddings: topics, and variation within a topic along few directions."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, 384)).astype(np.float32)
    directions = rng.standard_normal((16, 384)).astype(np.float32)
    vectors = centres[rng.integers(0, 40, n)] + rng.standard_normal((n, 16)).astype(np.float32) @ directions
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_hnsw_finds_the_exact_nearest_chunks(workspace):
    vectors = seeded_vectors(3000)
    document = Document.objects.create(
        workspace=workspace, title="Seeded", uri="kb://seeded", content_hash="sha256:" + "0" * 64
    )
    chunks = Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                ordinal=i,
                text=f"chunk {i}",
                start_offset=0,
                end_offset=8,
                content_hash="x",
                embedding=v.tobytes(),
                search_vector=v,
            )
            for i, v in enumerate(vectors)
        ],
        batch_size=1000,
    )
    pks = np.array([c.pk for c in chunks])
    index = PgVectorIndex(workspace.pk, len(chunks))
    queries = seeded_vectors(50, seed=7)
    with connection.cursor() as cur:
        # without a sort PostgreSQL can only order by distance through the HNSW index (a table this
        # small would otherwise be sorted exactly); this also proves the query's shape can use it
        cur.execute("SET LOCAL enable_sort = off")

    exact = [set(pks[np.argsort(-(vectors @ q))[:10]]) for q in queries]
    found = [{pk for pk, _ in index.dense_search(q, 10)} for q in queries]

    recall = np.mean([len(e & f) / 10 for e, f in zip(exact, found)])
    assert recall >= 0.95, recall
    with connection.cursor() as cur:
        cur.execute("EXPLAIN " + DENSE_SQL, {"ws": workspace.pk, "vec": vector_literal(queries[0]), "n": 10})
        plan = "\n".join(row[0] for row in cur.fetchall())
    assert HNSW_INDEX in plan, plan


def test_the_migration_fills_the_vectors_of_chunks_stored_before_it(ingest, workspace, embedder):
    document = ingest("Plasticity", LTP)
    with connection.cursor() as cur:
        cur.execute("UPDATE audit_chunk SET search_vector = NULL")
    query = embedder.encode(["NMDA receptors and LTP"])[0]
    assert PgVectorIndex(workspace.pk).dense_search(query, 3) == []

    assert backfill_vectors(connection) == 1

    [(pk, cosine)] = PgVectorIndex(workspace.pk).dense_search(query, 3)
    chunk = document.chunks.get()
    assert (pk, cosine) == (chunk.pk, pytest.approx(float(chunk.vector() @ query), abs=1e-5))


def test_an_audit_local_answer_cites_knowledge_base_chunks_found_in_postgresql(ingest, workspace, make_user):
    from audit import roles

    workspace.allow_external_calls = False
    workspace.save(update_fields=["allow_external_calls"])
    ingest("Plasticity", LTP)
    ingest("Tax calendar", TAXES)
    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_user('fe', roles.SUBMITTER)).key}"
    )

    response = client.post(
        "/api/v1/audits",
        {
            "query": "What does LTP depend on?",
            "mode": "audit-local",
            "answer": "Long-term potentiation depends on NMDA receptor activation.",
            "contexts": [],
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    [claim] = response.json()["claims"]
    assert claim["label"] == "SUPPORTED"
    evidence = Evidence.objects.get(claim__claim_id=claim["claim_id"], rank=0)
    assert (evidence.source_type, evidence.chunk.document.title) == ("kb", "Plasticity")


def test_the_admin_names_the_search_back_end_in_use(client, admin_user_obj):
    client.force_login(admin_user_obj)

    page = client.get("/admin/audit/document/").content.decode()

    assert "pgvector (HNSW" in page
