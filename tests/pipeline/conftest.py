"""Fixtures of the pipeline tests: the embedding model, loaded once per test session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedder():
    from audit.pipeline.embedding import get_embedder

    emb = get_embedder()
    emb.encode(["warm up"])  # loads the model once for the whole session
    return emb


@pytest.fixture
def ltp_passages():
    return [
        {
            "id": "1",
            "text": "Long-term potentiation (LTP) in the hippocampus requires the activation of NMDA "
            "receptors. Blocking NMDA receptors prevents LTP induction.",
        },
        {
            "id": "2",
            "text": "The annual membership fee is $150 and must be paid within 30 days of the invoice.",
        },
    ]
