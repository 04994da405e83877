"""The README walkthrough over real HTTP: a live server, urllib, a token from create_token."""

from __future__ import annotations

import csv
import io
import json
import re
import urllib.error
import urllib.request
from io import StringIO

import pytest
from django.core.management import call_command

from audit import roles
from tests.api.conftest import build_answer

# serialized_rollback: the role groups come from a data migration; keep them for the next test.
# serial: restoring the serialized rows clashes with the content types a flush by another
# transactional test re-made in the same process, which pytest-xdist's order allows; `make test`
# runs the `serial` tests in a process of their own after the parallel part.
pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.serial]


def call(
    live_server, method: str, path: str, token: str = "", body=None, raw: bytes | None = None, headers=None
):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(live_server.url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Token {token}")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def token_for(username: str) -> str:
    out = StringIO()
    call_command("create_token", username, stdout=out)
    return out.getvalue().strip()


def test_it_serves_the_walkthrough_over_real_http(live_server, make_user, workspace):
    make_user("frontend", roles.SUBMITTER)
    make_user("reviewer", roles.AUDITOR)
    build_answer(workspace)
    token = token_for("frontend")

    status, headers, body = call(
        live_server,
        "POST",
        "/api/v1/audits",
        token,
        {
            "query": "What does LTP require?",
            "answer": "LTP requires NMDA receptors [1].",
            "mode": "normal",
            "contexts": [{"id": "kb1", "text": "LTP depends on NMDA receptors."}],
        },
        headers={"Idempotency-Key": "walk-1"},
    )
    assert status == 201, body
    created = json.loads(body)
    assert created["mode"] == "normal" and created["citations"][0]["id"] == "kb1"

    status, headers, body = call(
        live_server,
        "POST",
        "/api/v1/audits",
        token,
        {
            "query": "What does LTP require?",
            "answer": "LTP requires NMDA receptors [1].",
            "mode": "normal",
            "contexts": [{"id": "kb1", "text": "LTP depends on NMDA receptors."}],
        },
        headers={"Idempotency-Key": "walk-1"},
    )
    assert status == 201 and json.loads(body)["answer_id"] == created["answer_id"]
    assert headers.get("Idempotent-Replayed") == "true"

    reviewer = token_for("reviewer")
    status, _, body = call(live_server, "GET", "/api/v1/claims?label=REFUTED,NEI", reviewer)
    assert status == 200 and [c["label"] for c in json.loads(body)["results"]] == ["REFUTED", "NEI"]

    status, headers, body = call(live_server, "GET", "/api/v1/claim-cards/export?format=csv", reviewer)
    assert status == 200 and headers["Content-Type"].startswith("text/csv")
    assert len(list(csv.DictReader(io.StringIO(body.decode())))) == 3


def test_it_answers_bad_input_and_missing_credentials_over_real_http(live_server, make_user):
    make_user("frontend", roles.SUBMITTER)
    token = token_for("frontend")

    malformed = call(live_server, "POST", "/api/v1/audits", token, raw=b'{"query": ')
    latin1 = call(live_server, "POST", "/api/v1/audits", token, raw=b'{"query": "caf\xe9", "answer": "a"}')
    anonymous = call(live_server, "GET", "/api/v1/claims")

    assert malformed[0] == 400 and "body" in json.loads(malformed[2])["errors"]
    assert latin1[0] == 400 and "query" in json.loads(latin1[2])["errors"]
    assert anonymous[0] == 401 and anonymous[1].get("WWW-Authenticate") == "Token"


def test_it_serves_the_docs_page_and_its_assets_from_this_server(live_server):
    status, _, body = call(live_server, "GET", "/api/v1/docs/")
    assert status == 200
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', body.decode())

    assert assets
    for asset in assets:
        assert call(live_server, "GET", asset)[0] == 200, asset


def test_it_issues_one_token_per_user_and_refuses_unknown_users(make_user):
    make_user("frontend", roles.SUBMITTER)

    first, again = token_for("frontend"), token_for("frontend")
    rotated = StringIO()
    call_command("create_token", "frontend", "--rotate", stdout=rotated)

    assert first == again and len(first) == 40
    assert rotated.getvalue().strip() != first
    with pytest.raises(Exception, match="There is no user"):
        call_command("create_token", "ghost")


def test_it_creates_a_token_only_user_with_a_role(db):
    from django.contrib.auth import get_user_model

    out = StringIO()
    call_command("create_token", "rag-frontend", "--role", roles.SUBMITTER, stdout=out)

    user = get_user_model().objects.get(username="rag-frontend")
    assert roles.can_submit(user) and not user.has_usable_password()
    assert user.auth_token.key == out.getvalue().strip()
    assert user.theoria_profile.workspace.slug == "default"


def test_it_stores_one_answer_when_two_retries_with_one_key_arrive_together(live_server, make_user):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from audit.models import Answer

    if connection.vendor == "sqlite":
        # The test database is SQLite's shared-cache memory database, whose table locks fail at once
        # instead of waiting; the file database of a deployment waits (IMMEDIATE transactions).
        pytest.skip("concurrent writers need PostgreSQL or a file SQLite database")
    make_user("frontend", roles.SUBMITTER)
    token = token_for("frontend")
    body = {"query": "q", "answer": "LTP requires NMDA receptors.", "mode": "normal"}

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(
                lambda _: call(
                    live_server,
                    "POST",
                    "/api/v1/audits",
                    token,
                    body,
                    headers={"Idempotency-Key": "same-key"},
                ),
                range(4),
            )
        )

    assert [status for status, _, _ in results] == [201] * 4, results
    assert len({json.loads(payload)["answer_id"] for _, _, payload in results}) == 1
    assert Answer.objects.count() == 1
