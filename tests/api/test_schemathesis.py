"""schemathesis against the live test server: every operation of /api/v1/schema/, every check
(status codes, response schemas, content types, headers, valid data accepted, invalid data
refused, no 5xx), on the phases below, bounded by ``SCHEMATHESIS_MAX_EXAMPLES`` per operation.

``make fuzz`` runs the same command against gunicorn with more examples (``tools/fuzz.py``).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from audit import roles
from tools.fuzz import schemathesis_command

PHASES = os.environ.get("SCHEMATHESIS_PHASES", "examples,coverage,fuzzing,stateful")
MAX_EXAMPLES = os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "5")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_schemathesis_finds_no_failure_on_any_operation(live_server, make_user, settings):
    from rest_framework.authtoken.models import Token

    settings.THEORIA = {**settings.THEORIA, "THROTTLE_AUDITS": "", "THROTTLE_TOKEN": ""}
    admin = make_user("fuzz-admin", roles.ADMIN, is_staff=True)
    token = Token.objects.create(user=admin).key
    # the suite shares its cores (the first search loads the embedding model): a generous bound on
    # time here; `make fuzz` keeps schemathesis' 10 s
    command = schemathesis_command(
        live_server.url, token, phases=PHASES, max_examples=int(MAX_EXAMPLES), max_response_time=120
    )
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "SCHEMATHESIS_HOOKS": "", "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-4000:]
