"""Without pgvector (SQLite, Debian's PostgreSQL) search stays in process; tests/pgvector cover pgvector."""

from __future__ import annotations

from django.db import connection

from audit.kb.pgvector import extension_installed, kb_backend, pgvector_ready
from audit.kb.search import InProcessKnowledgeBase, PgKnowledgeBase, kb_index
from audit.models import Chunk, Document


def test_the_search_back_end_follows_the_database(workspace):
    expected = PgKnowledgeBase if extension_installed(connection) else InProcessKnowledgeBase

    assert isinstance(kb_index(workspace), expected)
    assert kb_backend() == ("pgvector" if expected is PgKnowledgeBase else "in-process")


def _chunk(workspace, *, embedding: bytes, search_vector) -> Chunk:
    document = Document.objects.create(
        workspace=workspace, title="T", uri="kb://t", content_hash="sha256:" + "0" * 64
    )
    return Chunk.objects.create(
        document=document,
        ordinal=0,
        text="Stored text.",
        start_offset=0,
        end_offset=12,
        content_hash="x",
        embedding=embedding,
        search_vector=search_vector,
    )


def test_without_pgvector_a_chunk_keeps_no_second_copy_of_its_vector(workspace):
    chunk = _chunk(workspace, embedding=bytes(4 * 384), search_vector=[0.5] * 384)

    stored = Chunk.objects.get(pk=chunk.pk).search_vector

    assert (stored is None) != pgvector_ready()


def test_the_admin_names_the_search_back_end_in_use(client, admin_user_obj):
    client.force_login(admin_user_obj)

    page = client.get("/admin/audit/document/").content.decode()

    assert ("pgvector (HNSW" if pgvector_ready() else "in-process (torch") in page


def test_keyword_candidates_need_two_consecutive_words_of_the_query_and_ranking_uses_them_all():
    from audit.kb.pgvector import tsquery_pairs, tsquery_terms

    assert tsquery_terms("NMDA receptors drive LTP") == "nmda | receptors | drive | ltp"
    assert (
        tsquery_pairs("NMDA receptors drive LTP")
        == "(nmda & receptors) | (receptors & drive) | (drive & ltp)"
    )
    assert tsquery_pairs("ZX-4471") == "(zx & 4471)" and tsquery_pairs("the LTP") == "ltp"


def test_either_back_end_hands_the_pipeline_the_stored_vectors_of_its_chunks(workspace):
    import numpy as np

    vector = np.zeros(384, dtype="<f4")
    vector[7] = 1.0
    chunk = _chunk(
        workspace, embedding=vector.tobytes(), search_vector=vector.tolist() if pgvector_ready() else None
    )
    workspace.kb_version += 1
    workspace.save(update_fields=["kb_version"])

    found = kb_index(workspace).for_pipeline().vectors([f"kb_chunk_{chunk.pk}", "kb_chunk_0"])

    assert list(found) == [f"kb_chunk_{chunk.pk}"]
    assert np.allclose(found[f"kb_chunk_{chunk.pk}"], vector, atol=1e-2)
