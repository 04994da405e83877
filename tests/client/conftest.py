"""The Python client (clients/python, ``theoria_client``) against the Django live server: real
HTTP, the real pipeline, the database of the run (SQLite, or PostgreSQL by DATABASE_URL)."""

from __future__ import annotations

import pytest

from audit import roles

LTP = (
    "Long-term potentiation (LTP) at the Schaffer collateral synapses of the hippocampal CA1 region is "
    "dependent on NMDA receptor activation. LTP was first described by Bliss and Lømo in 1973."
)
QUERY = "What does long-term potentiation require?"
# the first claim is supported by the passage, the second contradicts it (1985, not 1973)
ANSWER = "Long-term potentiation requires NMDA receptor activation [1]. LTP was first described by Bliss and Lømo in 1985 [1]."
CONTEXTS = [{"id": "kb1", "title": "Synaptic Plasticity Overview", "text": LTP}]


@pytest.fixture
def tokens(make_user):
    """A token per role the tests use: ``submitter`` (a front end), ``analyst`` (reads the queue)."""
    from rest_framework.authtoken.models import Token

    made = {}
    for name, role in (("submitter", roles.SUBMITTER), ("analyst", roles.L1_ANALYST)):
        made[name] = Token.objects.create(user=make_user(f"client-{name}", role)).key
    return made


@pytest.fixture
def theoria(live_server, tokens):
    from theoria_client import Theoria

    with Theoria(live_server.url, tokens["submitter"], backoff=0.05) as client:
        yield client
