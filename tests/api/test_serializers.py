"""The Claim Card serializer against the spec §6 example, key for key and type for type."""

from __future__ import annotations

import json

from audit.cards import ClaimCardSerializer
from audit.selectors.api import claim_card_list

# Spec (seed 004) §6, verbatim.
SPEC_EXAMPLE = json.loads("""
{
  "claim_id": "c1",
  "answer_id": "a-2025-10-18-001",
  "text": "Long-term potentiation requires NMDA receptor activation.",
  "mode": "Audit-Local",
  "label": "SUPPORTED",
  "confidence": 0.87,
  "evidence": [
    {
      "source_type": "kb",
      "source_id": "kb_chunk_1345",
      "title": "Synaptic Plasticity Overview",
      "uri": "kb://synaptic_plasticity_overview",
      "snippet": "Long-term potentiation (LTP) is dependent on NMDA receptors...",
      "hash": "sha256:..."
    }
  ],
  "verification_methods": [
    "CoVe",
    "SelfCheckGPT",
    "RAGAS"
  ],
  "metrics": {
    "faithfulness": 0.86,
    "answer_relevance": 0.92,
    "context_precision": 0.78,
    "selfcheck_disagreement": 0.1
  },
  "timestamps": {
    "drafted_at": "2025-10-18T08:15:00Z",
    "verified_at": "2025-10-18T08:15:12Z"
  },
  "escalations": []
}
""")
# The spec's card plus the remediation of issue 13: ``revision`` (null when the claim was not revised).
# Issue 44: P(supported) named as such, and the machine's and a reviewer's labels side by side,
# after the spec's evidence (the spec's keys keep their order).
CARD_EXAMPLE = {
    **{k: SPEC_EXAMPLE[k] for k in list(SPEC_EXAMPLE)[: list(SPEC_EXAMPLE).index("evidence") + 1]},
    "p_supported": 0.87,
    "machine_label": "SUPPORTED",
    "reviewer_label": None,
    **{k: SPEC_EXAMPLE[k] for k in list(SPEC_EXAMPLE)[list(SPEC_EXAMPLE).index("evidence") + 1 :]},
    "revision": None,
}


def shape(value):
    """The JSON shape of a value: keys (recursively) and scalar types, lists by their first item."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def test_it_serializes_a_claim_with_the_keys_and_types_of_the_spec_example_and_its_revision(audited_answer):
    answer, _ = audited_answer
    claim = claim_card_list(workspace=answer.workspace).get(answer=answer, claim_id="c1")

    card = json.loads(json.dumps(ClaimCardSerializer(claim).data))

    assert list(card) == list(CARD_EXAMPLE)
    assert shape(card) == shape(CARD_EXAMPLE)


def test_it_writes_the_mode_label_timestamps_in_utc_and_spec_metrics_only(audited_answer):
    answer, _ = audited_answer
    claim = claim_card_list(workspace=answer.workspace).get(answer=answer, claim_id="c2")

    card = ClaimCardSerializer(claim).data

    assert card["answer_id"] == answer.public_id
    assert card["mode"] == "Audit-Local"
    assert card["label"] == "REFUTED"
    assert card["confidence"] == 0.08
    assert set(card["metrics"]) == set(SPEC_EXAMPLE["metrics"])  # "entailment" stays out of the card
    assert card["timestamps"]["drafted_at"].endswith("Z")
    assert card["evidence"][0]["hash"].startswith("sha256:")
