"""Fixtures of the API tests: token-authenticated clients per role and stored audited answers.

Audited answers are built with the factories in the shape ``audit_answer`` stores them, so read,
filter and export tests do not load the embedding model; the few Audit-Local tests run the
real pipeline through the API.
"""

from __future__ import annotations

import datetime as dt

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import AnswerFactory, ClaimFactory, EvidenceFactory, VerificationRunFactory


@pytest.fixture(scope="session")
def embedder():
    """Load the embedding model once for the session (about 7 s)."""
    from audit.pipeline.embedding import get_embedder

    return get_embedder()


@pytest.fixture
def client_for():
    """Return a factory: client_for(user) -> APIClient authenticated with the user's token."""

    def factory(user=None) -> APIClient:
        client = APIClient()
        if user is not None:
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return factory


CLAIM_SPECS = (
    # label, verdict, confidence, title, snippet
    (
        "SUPPORTED",
        "supported",
        0.91,
        "Synaptic Plasticity Overview",
        "LTP is dependent on NMDA receptors in CA1.",
    ),
    ("REFUTED", "contradicted", 0.08, "Hippocampus Anatomy", "The hippocampus proper has three layers."),
    ("NEI", "not_found", 0.35, "Basal Ganglia", "The striatum receives input from the cortex."),
)


def build_answer(
    workspace,
    *,
    created_at=None,
    mode="audit-local",
    domain="neuroscience",
    specs=CLAIM_SPECS,
    conversation_id="",
):
    """Store an audited answer with one claim per spec (evidence and a run included)."""
    from django.utils import timezone

    created_at = created_at or timezone.now()
    texts = [f"Claim number {n} about {spec[3]}." for n, spec in enumerate(specs, start=1)]
    answer = AnswerFactory(
        workspace=workspace,
        query="What does LTP require?",
        text=" ".join(texts),
        mode=mode,
        domain=domain,
        created_at=created_at,
        conversation_id=conversation_id,
    )
    offset = 0
    claims = []
    for n, (text, (label, verdict, confidence, title, snippet)) in enumerate(zip(texts, specs), start=1):
        claim = ClaimFactory(
            answer=answer,
            claim_id=f"c{n}",
            text=text,
            span_start=offset,
            span_end=offset + len(text),
            label=label,
            verdict=verdict,
            confidence=confidence,
            methods=["nli", "numeric"],
            metrics={
                "faithfulness": confidence,
                "answer_relevance": 0.9,
                "context_precision": 0.7,
                "selfcheck_disagreement": 0.1,
                "entailment": confidence,
            },
            drafted_at=created_at,
            verified_at=created_at + dt.timedelta(seconds=2),
        )
        offset += len(text) + 1
        EvidenceFactory(
            claim=claim,
            source_id=f"kb_chunk_{n}",
            title=title,
            uri=f"kb://{title.lower().replace(' ', '_')}",
            snippet=snippet,
            relevance=0.8,
            entailment=confidence,
            provenance={"method": "hybrid"},
        )
        claims.append(claim)
    VerificationRunFactory(
        answer=answer,
        started_at=created_at,
        audit_score=0.62,
        faithfulness=0.33,
        answer_relevance=0.9,
        context_precision=0.7,
        coverage=0.66,
        unsupported_rate=0.66,
        claim_count=len(claims),
        llm_calls=0,
        duration_ms=12.5,
    )
    return answer, claims


@pytest.fixture
def audited_answer(workspace):
    return build_answer(workspace)
