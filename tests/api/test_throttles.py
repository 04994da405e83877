"""Throttles: password guesses at the token endpoint and audits per token answer 429 with Retry-After;
uploads holding NUL or control characters are refused naming the file; every other state-changing
HTML form counts per user against THEORIA["THROTTLE_FORMS"] and is refused with the API's message."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audit import roles

pytestmark = pytest.mark.django_db


def test_wrong_passwords_at_the_token_endpoint_are_throttled_with_retry_after(
    client_for, make_user, settings
):
    # the throttle alone: the sign-in lockout (5 per account and address) answers 429 on its own
    settings.THEORIA = {**settings.THEORIA, "THROTTLE_TOKEN": "5/min", "SIGNIN_LOCKOUT": ""}
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


def test_the_answer_form_shares_the_audit_limit_of_the_api(client, client_for, make_user, settings):
    settings.THEORIA = {**settings.THEORIA, "THROTTLE_AUDITS": "3/min"}
    user = make_user("frontend", roles.SUBMITTER)
    api = client_for(user)
    body = {"query": "q", "answer": "The office opens at nine.", "mode": "normal"}
    assert [api.post("/api/v1/audits", body, format="json").status_code for _ in range(2)] == [201, 201]
    client.force_login(user)
    form = {
        "query": "q",
        "answer": "The office opens at nine.",
        "mode": "normal",
        "passage-TOTAL_FORMS": "0",
        "passage-INITIAL_FORMS": "0",
        "passage-MIN_NUM_FORMS": "0",
        "passage-MAX_NUM_FORMS": "20",
    }
    assert client.post("/answers/new/", form).status_code == 302  # the third audit of the minute
    response = client.post("/answers/new/", form)
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "more answers than this workspace audits per user" in response.content.decode()
    assert api.post("/api/v1/audits", body, format="json").status_code == 429


def test_throttle_counts_live_in_the_shared_cache_not_in_a_process(settings):
    from django.core.cache import caches
    from django.core.cache.backends.db import DatabaseCache

    from audit.security import throttling
    from audit.security.rates import Rate

    assert isinstance(caches["default"], DatabaseCache)  # the suite runs as a deployment without Redis
    rate = Rate.parse("2/min")
    assert [throttling.take("probe", "ident", rate, now=1000.0) for _ in range(3)][:2] == [None, None]
    # another process reads the same table: a fresh cache handler sees the counts
    fresh = DatabaseCache(settings.CACHES["default"]["LOCATION"], {})
    assert any(key.startswith(":1:theoria:throttle:probe:") for key in _cache_keys(fresh))


def _cache_keys(cache) -> list[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT cache_key FROM {connection.ops.quote_name(cache._table)}")
        return [row[0] for row in cursor.fetchall()]


def test_the_sliding_window_refuses_a_burst_across_a_window_boundary():
    from audit.security import throttling
    from audit.security.rates import Rate

    rate = Rate.parse("4/min")
    assert [throttling.take("burst", "x", rate, now=119.0) is None for _ in range(4)] == [True] * 4
    # a new minute: the previous one's 4 still weigh 59/60 (3.93), so one more passes, not four more
    after = [throttling.take("burst", "x", rate, now=121.0) for _ in range(4)]
    assert after[0] is None and all(wait is not None and 1 <= wait <= 60 for wait in after[1:])
    assert (
        throttling.take("burst", "x", rate, now=170.0) is None
    )  # refusals were not counted: 1 + 4 x 10/60 < 4


@pytest.mark.slow
def test_the_token_limit_holds_across_two_gunicorn_workers():
    """Two worker processes answer; together they let through exactly the limit (before this,
    each counted in its own memory and twice the limit passed)."""
    import concurrent.futures
    import json
    import urllib.error
    import urllib.request

    from tools.served import served

    def attempt(base: str, n: int) -> int:
        request = urllib.request.Request(
            base + "/api/v1/auth/token",
            data=json.dumps({"username": f"nobody{n}", "password": "x"}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    env = {"THEORIA_THROTTLE_TOKEN": "6/day", "THEORIA_SIGNIN_ADDRESS_LOCKOUT": ""}
    served_server = served("throttle-workers", workers=2, threads=2, seed_kb=False, extra_env=env)
    with served_server as (base, _tokens, _folder), concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda n: attempt(base, n), range(20)))
    assert sorted(statuses) == [400] * 6 + [429] * 14


def _redis_up() -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _redis_up(), reason="no Redis on 127.0.0.1:6379")
def test_with_a_redis_url_the_counts_live_in_redis_for_every_process(settings):
    import os
    import subprocess
    import sys
    from pathlib import Path

    import redis
    from django.core.cache import caches

    from audit.security import throttling
    from audit.security.rates import Rate

    url = "redis://127.0.0.1:6379/15"
    probe = "from django.core.cache import caches; print(type(caches['default']).__name__)"
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v0", "-c", probe],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "DJANGO_DEBUG": "1", "THEORIA_REDIS_URL": url},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.stdout.strip() == "RedisCache", result.stderr
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "theoria-test",
        }
    }
    caches["default"].clear()
    rate = Rate.parse("2/min")
    assert [throttling.take("redis", "one", rate, now=3000.0) is None for _ in range(3)] == [
        True,
        True,
        False,
    ]
    other = redis.Redis.from_url(url)  # what another process reads
    assert any(b"theoria:throttle:redis:" in key for key in other.keys("theoria-test:*"))
    caches["default"].clear()


# --- every other state-changing HTML form: THEORIA["THROTTLE_FORMS"] per user -----------------

THROTTLED = re.compile(r"Request was throttled\. Expected available in \d+ seconds?\.")


def test_a_user_over_the_form_limit_gets_429_with_the_apis_message_and_nothing_changes(
    client, client_for, make_user, settings, workspace
):
    from audit.models import AuditEvent
    from tests.factories import AnswerFactory

    settings.THEORIA = {**settings.THEORIA, "THROTTLE_FORMS": "2/min", "THROTTLE_AUDITS": "1/min"}
    lead = make_user("lead9", roles.L3_LEAD)
    answer = AnswerFactory(workspace=workspace, revision_status="proposed", proposed_text="New text.")
    client.force_login(lead)
    url = f"/answers/{answer.public_id}/revision"
    assert [client.post(url, {"decision": "accept"}).status_code for _ in range(2)] == [400, 400]
    events = AuditEvent.objects.count()

    response = client.post(url, {"decision": "accept", "reason": "Checked against the source."})

    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert THROTTLED.search(response.content.decode())
    answer.refresh_from_db()
    assert answer.revision_status == "proposed" and AuditEvent.objects.count() == events
    assert client.get(f"/answers/{answer.public_id}/").status_code == 200  # reading is not limited
    # the API's refusal says the same words
    submitter = client_for(make_user("frontend9", roles.SUBMITTER))
    body = {"query": "q", "answer": "The office opens at nine.", "mode": "normal"}
    submitter.post("/api/v1/audits", body, format="json")
    assert THROTTLED.fullmatch(submitter.post("/api/v1/audits", body, format="json").json()["detail"])


def test_the_form_limit_counts_per_user(client, make_user, settings, workspace):
    from django.test import Client

    settings.THEORIA = {**settings.THEORIA, "THROTTLE_FORMS": "1/min"}
    first, second = make_user("lead9", roles.L3_LEAD), make_user("lead10", roles.L3_LEAD)
    client.force_login(first)
    other = Client()
    other.force_login(second)
    assert client.post("/escalations/bulk", {}).status_code != 429
    assert client.post("/escalations/bulk", {}).status_code == 429
    assert other.post("/escalations/bulk", {}).status_code != 429
    assert client.post("/accounts/logout/").status_code == 302  # signing out is never refused


def test_case_actions_of_the_api_are_throttled_per_user(client_for, make_user, workspace, settings):
    """Issue 46: 40 notes in a row on one case all answered 200."""
    from escalation import services
    from tests.factories import AnswerFactory, ClaimFactory

    settings.THEORIA = {**settings.THEORIA, "THROTTLE_CASE_ACTIONS": "5/min"}
    answer = AnswerFactory(workspace=workspace)
    ClaimFactory(answer=answer, claim_id="c1", label="REFUTED", confidence=0.1)
    (case,) = services.cases_open_for_answer(answer=answer)
    first = client_for(make_user("ann", roles.L1_ANALYST))
    second = client_for(make_user("bob", roles.L1_ANALYST))
    url = f"/api/v1/cases/{case.ticket}/note"

    statuses = [first.post(url, {"note": f"note {n}"}, format="json").status_code for n in range(7)]

    assert statuses == [200] * 5 + [429] * 2
    refused = first.post(url, {"note": "again"}, format="json")
    assert int(refused["Retry-After"]) > 0 and "throttled" in refused.json()["detail"].lower()
    assert second.post(url, {"note": "mine"}, format="json").status_code == 200  # a count per user
    assert case.events.filter(kind="note").count() == 6
