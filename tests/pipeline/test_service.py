"""audit.services.audit.audit_and_store: the pipeline's result stored in one transaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.models import Answer, AuditEvent, Claim, Evidence, VerificationRun
from audit.services.audit import audit_and_store
from audit.services.ingestion import ingest_paths

pytestmark = pytest.mark.django_db

KB_NOTE = """---
title: Synaptic Plasticity
domain: neuroscience
published: 2026-06-02
---
Long-term potentiation at CA1 synapses depends on NMDA receptor activation. Blocking NMDA receptors
with AP5 prevents LTP induction.
"""


def test_it_stores_the_answer_claims_evidence_run_and_events(workspace, embedder, tmp_path: Path):
    (tmp_path / "ltp.md").write_text(KB_NOTE)
    ingest_paths(workspace=workspace, paths=[tmp_path])
    contexts = [
        {
            "id": "1",
            "title": "Fees",
            "uri": "kb://fees",
            "text": "The annual membership fee is $150.",
            "published_at": "2026-01-10",
        }
    ]
    answer = audit_and_store(
        workspace=workspace,
        query="What does LTP depend on?",
        answer_text="LTP at CA1 synapses depends on NMDA receptor activation. The annual fee is $200 [1].",
        contexts=contexts,
        mode="audit-local",
        domain="neuroscience",
    )
    assert Answer.objects.count() == 1 and answer.text.startswith("LTP at CA1")
    c1, c2 = Claim.objects.filter(answer=answer).order_by("claim_id")
    assert (c1.label, c2.label) == ("SUPPORTED", "REFUTED")
    assert c1.machine_label == "SUPPORTED" and "entailment" in c1.methods
    kb_link = Evidence.objects.filter(claim=c1).order_by("rank").first()
    assert kb_link.source_type == "kb" and kb_link.chunk_id is not None and kb_link.hash.startswith("sha256:")
    ctx_link = Evidence.objects.filter(claim=c2).order_by("rank").first()
    assert ctx_link.source_type == "context" and ctx_link.source_id == "1" and ctx_link.provenance["cited"]
    run = VerificationRun.objects.get(answer=answer)
    assert run.claim_count == 2 and run.faithfulness == 0.5 and run.quality_gates["contradictions"] is False
    assert any(w["method"] == "selfcheck" for w in run.warnings if w["code"] == "method_not_run")
    actions = set(AuditEvent.objects.values_list("action", flat=True))
    assert {"answer.audited", "claim.flagged"} <= actions


def test_it_stores_nothing_when_the_store_fails(workspace, embedder, monkeypatch):
    from audit.services import audit as service

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(service, "events_write", boom)  # the last write of the one transaction
    with pytest.raises(RuntimeError):
        audit_and_store(
            workspace=workspace,
            query="q",
            answer_text="The annual fee is $150.",
            contexts=["The annual membership fee is $150."],
            mode="audit-local",
        )
    assert not Answer.objects.exists() and not Claim.objects.exists() and not VerificationRun.objects.exists()
