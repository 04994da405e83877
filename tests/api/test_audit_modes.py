"""Audit-Local through the API, on the real pipeline (embedding model loaded once per session).

Audit-Web through the API is tested with local PubMed/arXiv servers in tests/web/test_api.py.
"""

from __future__ import annotations

import pytest

from audit.models import Answer, AuditEvent
from tests.api.test_serializers import CARD_EXAMPLE

pytestmark = pytest.mark.slow

CONTEXTS = [
    {
        "id": "kb1",
        "title": "Synaptic Plasticity Overview",
        "uri": "kb://synaptic_plasticity_overview",
        "text": "Long-term potentiation (LTP) is dependent on NMDA receptor activation in CA1 synapses.",
    },
    {
        "id": "kb2",
        "title": "Hippocampus Anatomy",
        "text": "The hippocampus proper has three layers: the stratum oriens, the pyramidal layer and the stratum radiatum.",
    },
]
SUPPORTED = "Long-term potentiation requires NMDA receptor activation [1]."
UNSUPPORTED = "The cerebellum stores every childhood memory of taste in Purkinje cells."


@pytest.fixture
def front_end(client_for, submitter, embedder, workspace):
    pytest.importorskip("audit.services.audit", reason="needs the pipeline's audit_answer service (issue 3)")
    workspace.allow_external_calls = False  # nothing leaves the test machine
    workspace.save(update_fields=["allow_external_calls"])
    return client_for(submitter)


def audit(client, answer: str, **extra):
    body = {
        "query": "What does long-term potentiation require?",
        "answer": answer,
        "contexts": CONTEXTS,
        **extra,
    }
    response = client.post("/api/v1/audits", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_it_verifies_an_audit_local_answer_and_revises_or_flags_the_unsupported_claim(front_end):
    data = audit(front_end, f"{SUPPORTED} {UNSUPPORTED}", mode="audit-local")

    assert data["mode"] == "audit-local"
    assert all(list(card) == list(CARD_EXAMPLE) for card in data["claims"])
    cards = {card["text"]: card for card in data["claims"]}
    supported = cards["Long-term potentiation requires NMDA receptor activation."]
    assert (supported["label"], supported["mode"], supported["evidence"][0]["source_id"]) == (
        "SUPPORTED",
        "Audit-Local",
        "kb1",
    )
    assert supported["confidence"] >= 0.8 and supported["verification_methods"]
    kept = UNSUPPORTED.rstrip(".")
    if kept.lower() in data["answer"].lower():
        # kept (as written, hedged or qualified): then it is flagged, and Audit-Web was wanted for it
        # but this workspace forbids it
        [flagged] = [card for text, card in cards.items() if kept.lower() in text.lower()]
        assert flagged["label"] != "SUPPORTED"
        assert flagged["claim_id"] in data["web"]["reasons"]
        assert data["web"]["status"] == "skipped: the workspace forbids external calls"
    else:
        # removed by the revision loop: the original text and the ledger come back
        assert data["original_answer"] == f"{SUPPORTED} {UNSUPPORTED}"
        assert any(edit["claim_text"] == UNSUPPORTED for edit in data["revisions"][-1]["ledger"])
        assert cards[UNSUPPORTED]["label"] != "SUPPORTED"  # the card is the claim as received
        assert cards[UNSUPPORTED]["revision"]["strategy"] == "remove"
    assert 0.0 <= data["audit"]["audit_score"] <= 1.0 and data["audit"]["llm_calls"] == 0
    stored = Answer.objects.get(public_id=data["answer_id"])
    assert stored.runs.count() == 1 and stored.text == data["answer"]
    assert AuditEvent.objects.filter(action="answer.mode_resolved", object_id=str(stored.pk)).exists()


def test_it_raises_a_normal_request_in_a_regulated_domain_and_sends_its_claims_to_people(
    front_end, workspace
):
    workspace.regulated_domains = ["neuroscience"]
    workspace.save(update_fields=["regulated_domains"])

    data = audit(front_end, SUPPORTED, mode="normal", domain="neuroscience")

    assert data["mode"] == "audit-local"
    assert data["mode_decision"] == {
        "mode": "audit-local",
        "source": "request",
        "triggers": ["domain:neuroscience"],
    }
    [card] = data["claims"]
    [case] = card["escalations"]
    assert case["type"] == "review" and case["ticket"].startswith("COMP-ESC-") and case["tier"] == 1
    assert case["reasons"] == ["regulated_domain"] and case["due_at"]
    assert [e["ticket"] for e in data["escalations"]] == [case["ticket"]]
