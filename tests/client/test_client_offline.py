"""What the client decides without a server: Retry-After read, and resending to a port nobody listens on."""

from __future__ import annotations

import socket

import pytest

from tests.client.conftest import ANSWER, CONTEXTS, QUERY


def test_it_resends_a_read_to_a_server_that_is_not_there_then_gives_up():
    from theoria_client import Theoria, TransportError

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    attempts = []
    with Theoria(f"http://127.0.0.1:{port}", "t", max_retries=2, backoff=0.01) as client:
        original = client._http.request
        client._http.request = lambda *a, **k: attempts.append(a) or original(*a, **k)
        with pytest.raises(TransportError, match="runs/1"):
            client.run(1)
        with pytest.raises(TransportError):  # an audit carries its Idempotency-Key: resent too
            client.audit(QUERY, ANSWER, CONTEXTS)
    assert len(attempts) == 6


def test_it_reads_retry_after_as_seconds_or_an_http_date():
    from datetime import datetime, timezone

    from theoria_client.client import retry_after_seconds

    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("7", now) == 7.0
    assert retry_after_seconds("Tue, 01 Dec 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None, now) is None
