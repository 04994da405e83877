"""Fixtures of the escalation tests: audited answers with claims, built with the factories.

(The audit pipeline's ``audit_answer`` service is the production path; these tests need exact
labels and confidences, so they store the rows it would store.)
"""

from __future__ import annotations

import pytest

from tests.factories import AnswerFactory, ClaimFactory, EvidenceFactory


@pytest.fixture
def make_answer(workspace):
    """Return a factory: make_answer([("REFUTED", 0.1), ...], domain="") -> Answer with claims c1, c2, ..."""

    def factory(claims, *, domain: str = "", importance: str = "material", ws=None):
        answer = AnswerFactory(workspace=ws or workspace, domain=domain)
        for i, (label, confidence) in enumerate(claims, start=1):
            claim = ClaimFactory(
                answer=answer,
                claim_id=f"c{i}",
                text=f"Claim number {i} of the answer.",
                label=label,
                confidence=confidence,
                importance=importance,
                span_start=i * 10,
                span_end=i * 10 + 5,
            )
            EvidenceFactory(
                claim=claim, source_id=f"kb_chunk_{i}", snippet=f"Evidence passage for claim {i}."
            )
        return answer

    return factory


@pytest.fixture
def refuted_claim(make_answer):
    return make_answer([("REFUTED", 0.1)]).claims.get()


@pytest.fixture
def case(refuted_claim):
    """An open tier-1 case opened by intake."""
    from escalation import services

    (case,) = services.cases_open_for_answer(answer=refuted_claim.answer)
    return case
