"""Knowledge base through the API: upload (JSON or a file), list, delete with re-indexing.

These go through the real ingestion service, so they load the embedding model once per session.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audit.kb.search import kb_index
from audit.models import AuditEvent, Chunk, Document, Workspace
from audit.pipeline.embedding import get_embedder

pytestmark = pytest.mark.slow

TEXT = "Long-term potentiation depends on NMDA receptor activation in hippocampal CA1 synapses."


@pytest.fixture
def admin(client_for, admin_user_obj, embedder):
    return client_for(admin_user_obj)


def search_titles(workspace, query: str):
    index = kb_index(workspace)
    return [p.title for p, _ in index.search(query, get_embedder().encode([query])[0], 3)]


def test_it_ingests_a_json_document_and_search_finds_it(admin, workspace):
    response = admin.post(
        "/api/v1/documents",
        {"title": "LTP notes", "text": TEXT, "domain": "Neuroscience", "published_at": "2025-06-01"},
        format="json",
    )

    assert response.status_code == 201, response.content
    [doc] = response.json()
    assert (doc["uri"], doc["domain"], doc["outcome"], doc["published_at"]) == (
        "kb://ltp-notes",
        "neuroscience",
        "created",
        "2025-06-01",
    )
    assert doc["chunks"] >= 1
    assert search_titles(workspace, "NMDA receptors and LTP")[0] == "LTP notes"
    assert AuditEvent.objects.filter(action="kb.document_created").count() == 1


def test_it_answers_200_unchanged_when_the_same_document_is_uploaded_again(admin):
    body = {"title": "LTP notes", "text": TEXT}
    admin.post("/api/v1/documents", body, format="json")

    again = admin.post("/api/v1/documents", body, format="json")

    assert again.status_code == 200 and again.json()[0]["outcome"] == "unchanged"
    assert Document.objects.count() == 1


def test_it_ingests_an_uploaded_markdown_file_with_its_front_matter(admin):
    upload = SimpleUploadedFile(
        "dopamine.md",
        b"---\ntitle: Dopamine pathways\npublished: 2024-01-02\n---\n"
        b"# Dopamine\n\nDopamine neurons project to the striatum.\n",
    )

    response = admin.post("/api/v1/documents", {"file": upload, "domain": "neuroscience"}, format="multipart")

    assert response.status_code == 201, response.content
    [doc] = response.json()
    assert (doc["title"], doc["published_at"], doc["uri"]) == (
        "Dopamine pathways",
        "2024-01-02",
        "kb://dopamine",
    )


def test_it_lists_and_deletes_a_document_and_search_drops_it(admin, workspace):
    doc = admin.post("/api/v1/documents", {"title": "LTP notes", "text": TEXT}, format="json").json()[0]
    version = Workspace.objects.get(pk=workspace.pk).kb_version
    assert search_titles(workspace, "NMDA receptors") == ["LTP notes"]

    listed = admin.get("/api/v1/documents").json()
    deleted = admin.delete(f"/api/v1/documents/{doc['id']}")

    assert [d["title"] for d in listed["results"]] == ["LTP notes"]
    assert deleted.status_code == 204
    assert not Document.objects.exists() and not Chunk.objects.exists()
    assert Workspace.objects.get(pk=workspace.pk).kb_version > version
    assert search_titles(workspace, "NMDA receptors") == []
    assert admin.delete(f"/api/v1/documents/{doc['id']}").status_code == 404


@pytest.mark.parametrize(
    "body, field",
    [
        ({"text": TEXT}, "title"),
        ({"title": "No text"}, "text"),
        ({"title": "Blank", "text": "   "}, "text"),
        ({"title": "T", "text": TEXT, "published_at": "soon"}, "published_at"),
        ({"title": "T", "text": TEXT, "pages": 3}, "pages"),
    ],
)
def test_it_refuses_a_bad_json_document_naming_the_field(admin, body, field):
    response = admin.post("/api/v1/documents", body, format="json")

    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    "name, content",
    [
        ("paper.pdf", b"%PDF-1.4"),
        ("latin1.txt", "caf\xe9 au lait".encode("latin-1")),
        ("empty.md", b"   \n"),
    ],
)
def test_it_refuses_an_unusable_file_naming_the_file_field(admin, name, content):
    response = admin.post(
        "/api/v1/documents", {"file": SimpleUploadedFile(name, content)}, format="multipart"
    )

    assert response.status_code == 400
    assert "file" in response.json()["errors"]
    assert not Document.objects.exists()


def test_it_ingests_all_records_of_a_jsonl_file_or_none(admin):
    good = b'{"id": "1", "title": "One", "text": "First passage about synapses."}\n'
    bad = good + b'{"id": "2", "title": "Two"}\n'

    refused = admin.post(
        "/api/v1/documents", {"file": SimpleUploadedFile("kb.jsonl", bad)}, format="multipart"
    )

    assert refused.status_code == 400 and "line 2" in refused.json()["detail"]
    assert not Document.objects.exists()
