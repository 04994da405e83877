"""Throttles: password guesses at the token endpoint and audits per token answer 429 with Retry-After;
uploads holding NUL or control characters are refused naming the file."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audit import roles

pytestmark = pytest.mark.django_db


def test_wrong_passwords_at_the_token_endpoint_are_throttled_with_retry_after(
    client_for, make_user, settings
):
    settings.THEORIA = {**settings.THEORIA, "THROTTLE_TOKEN": "5/min"}
    make_user("frontend", roles.SUBMITTER)
    client = client_for()
    statuses = [
        client.post("/api/v1/auth/token", {"username": "frontend", "password": f"guess-{n}"}).status_code
        for n in range(8)
    ]
    assert statuses[:5] == [400] * 5 and statuses[5:] == [429] * 3
    response = client.post("/api/v1/auth/token", {"username": "frontend", "password": "pw-frontend"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "throttled" in response.json()["detail"].lower()


def test_audits_are_throttled_per_token(client_for, make_user, settings):
    settings.THEORIA = {**settings.THEORIA, "THROTTLE_AUDITS": "3/min"}
    first = client_for(make_user("frontend", roles.SUBMITTER))
    second = client_for(make_user("frontend2", roles.SUBMITTER))
    body = {"query": "q", "answer": "The office opens at nine.", "mode": "normal"}
    statuses = [first.post("/api/v1/audits", body, format="json").status_code for _ in range(4)]
    assert statuses == [201, 201, 201, 429]
    assert int(first.post("/api/v1/audits", body, format="json")["Retry-After"]) > 0
    assert (
        second.post("/api/v1/audits", body, format="json").status_code == 201
    )  # another token has its own count


@pytest.mark.parametrize("payload", [b"Policy text\x00with a NUL.", b"Policy text\x1bwith an escape."])
def test_an_upload_with_a_control_character_gets_400_and_stores_nothing(client_for, admin_user_obj, payload):
    from audit.models import Document

    upload = SimpleUploadedFile("policy.txt", payload, content_type="text/plain")
    response = client_for(admin_user_obj).post("/api/v1/documents", {"file": upload}, format="multipart")
    assert response.status_code == 400, response.content
    assert "file" in response.json()["errors"] and "control character" in response.json()["detail"]
    assert not Document.objects.exists()
