"""Fixtures of the escalation tests: audited answers with claims, built through the ORM.

(The audit pipeline's ``audit_answer`` service is the production path; these tests need exact
labels and confidences, so they store the rows it would store.)
"""

from __future__ import annotations

import hashlib

import pytest


@pytest.fixture
def make_answer(workspace):
    """Return a factory: make_answer([("REFUTED", 0.1), ...], domain="") -> Answer with claims c1, c2, ..."""
    from audit.models import Answer, Claim, Evidence

    def factory(claims, *, domain: str = "", importance: str = "material", ws=None):
        answer = Answer.objects.create(
            workspace=ws or workspace, query="What does the policy say?", text="An answer.", original_text="An answer.",
            mode=Answer.Mode.AUDIT_LOCAL, domain=domain,
        )
        for i, (label, confidence) in enumerate(claims, start=1):
            claim = Claim.objects.create(
                answer=answer, claim_id=f"c{i}", text=f"Claim number {i} of the answer.", label=label,
                machine_label=label, confidence=confidence, importance=importance, span_start=i * 10, span_end=i * 10 + 5,
            )
            snippet = f"Evidence passage for claim {i}."
            Evidence.objects.create(
                claim=claim, rank=0, source_type="kb", source_id=f"kb_chunk_{i}", title="Policy handbook",
                uri="kb://policy", snippet=snippet, hash="sha256:" + hashlib.sha256(snippet.encode()).hexdigest(),
                relevance=0.7, entailment=0.2,
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
