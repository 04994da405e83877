"""Large uploads are ingested in the background: 202 with a job URL whose progress counts the
documents, through HTTP; a small upload is still ingested in the request (201)."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audit import constants

pytestmark = pytest.mark.slow


@pytest.fixture
def admin(client_for, admin_user_obj, embedder):
    return client_for(admin_user_obj)


def _jsonl(count: int, start: int = 0) -> bytes:
    rows = [
        {"id": str(n), "title": f"Note {n}", "text": f"Synapse {n} strengthens after stimulation number {n}."}
        for n in range(start, start + count)
    ]
    return "\n".join(json.dumps(r) for r in rows).encode()


def test_a_jsonl_of_many_documents_is_ingested_in_the_background_with_progress(
    admin, django_capture_on_commit_callbacks
):
    from audit.models import Document

    count = constants.INGEST_INLINE_MAX_DOCUMENTS + 10
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = admin.post(
            "/api/v1/documents", {"file": SimpleUploadedFile("kb.jsonl", _jsonl(count))}, format="multipart"
        )
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["kind"] == "ingestion" and body["status"] == "queued"
    assert response["Location"] == body["url"] and body["progress"] == {"done": 0, "total": count}
    assert not Document.objects.exists()  # nothing was embedded in the request

    for callback in queued:
        callback()
    done = admin.get(body["url"]).json()
    assert done["status"] == "done", done
    assert done["progress"] == {"done": count, "total": count}
    assert done["result"]["created"] == count and done["error"] is None
    assert admin.get("/api/v1/documents?page_size=500").json()["count"] == count

    # the same upload again: a new job, and every document unchanged
    with django_capture_on_commit_callbacks(execute=True):
        again = admin.post(
            "/api/v1/documents", {"file": SimpleUploadedFile("kb.jsonl", _jsonl(count))}, format="multipart"
        )
    repeated = admin.get(again.json()["url"]).json()
    assert repeated["status"] == "done" and repeated["result"]["unchanged"] == count
    assert Document.objects.count() == count


def test_a_large_text_file_is_ingested_in_the_background(admin, django_capture_on_commit_callbacks):
    text = ("Place cells fire when the animal is in one place of its environment. " * 4_000).encode()
    assert len(text) > constants.INGEST_INLINE_MAX_BYTES
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(
            "/api/v1/documents", {"file": SimpleUploadedFile("big.txt", text)}, format="multipart"
        )
    assert response.status_code == 202
    done = admin.get(response.json()["url"]).json()
    assert done["status"] == "done" and done["result"]["created"] == 1, done


def test_a_small_upload_is_still_ingested_in_the_request(admin):
    response = admin.post(
        "/api/v1/documents", {"file": SimpleUploadedFile("kb.jsonl", _jsonl(3))}, format="multipart"
    )
    assert response.status_code == 201 and len(response.json()) == 3


def test_an_upload_job_is_read_only_in_its_workspace(admin, client_for, django_capture_on_commit_callbacks):
    from audit import roles
    from tests.factories import UserFactory, WorkspaceFactory

    with django_capture_on_commit_callbacks(execute=False):
        url = admin.post(
            "/api/v1/documents",
            {"file": SimpleUploadedFile("kb.jsonl", _jsonl(constants.INGEST_INLINE_MAX_DOCUMENTS + 1))},
            format="multipart",
        ).json()["url"]
    stranger = UserFactory(username="stranger", role=roles.ADMIN, workspace=WorkspaceFactory(slug="other"))
    assert client_for(stranger).get(url).status_code == 404
