"""``audit_and_store(..., revise=True)``: the real pipeline, the revision loop and the database together.

With no passage and an empty knowledge base no claim can have evidence, whatever the entailment
model's calibration, so the loop's outcome is known: seed 000 §8.1's "no evidence" answer.
"""

from __future__ import annotations

import pytest

from audit.constants import NO_ANSWER_NOTICE, UNSUPPORTED_QUALIFIER
from audit.models import AuditEvent
from audit.services.audit import audit_and_store

QUERY = "What does the Gold card cost?"
ORIGINAL = (
    "The annual fee for the Gold card is $150 [1]. "
    "Gold card holders get free airport lounge access in every airport of the world [2]."
)


@pytest.mark.slow
@pytest.mark.django_db
def test_by_default_unsupported_claims_are_qualified_not_removed(workspace):
    answer = audit_and_store(workspace=workspace, query=QUERY, answer_text=ORIGINAL, contexts=[], revise=True)
    answer.refresh_from_db()
    assert answer.original_text == ORIGINAL
    assert answer.text.count(UNSUPPORTED_QUALIFIER) == 2
    assert "$150" in answer.text and "lounge access" in answer.text
    (entry,) = answer.revisions
    assert "qualify" in {e["strategy"] for e in entry["ledger"]} and "remove" not in {
        e["strategy"] for e in entry["ledger"]
    }
    assert set(answer.claims.values_list("label", flat=True)) == {"NEI"}
    for (
        claim
    ) in answer.claims.all():  # the stored claim is the one received; the qualifier is on its revision
        assert UNSUPPORTED_QUALIFIER not in claim.text
        assert claim.revision["strategy"] == "qualify" and UNSUPPORTED_QUALIFIER in claim.revision["text"]


@pytest.mark.slow
@pytest.mark.django_db
def test_a_revised_audit_stores_the_returned_answer_its_claims_the_original_and_the_ledger(
    workspace, analyst, settings
):
    settings.THEORIA = {**settings.THEORIA, "REVISION_UNSUPPORTED": "remove"}
    answer = audit_and_store(
        workspace=workspace, query=QUERY, answer_text=ORIGINAL, contexts=[], user=analyst, revise=True
    )
    answer.refresh_from_db()
    run = answer.runs.get()
    assert answer.original_text == ORIGINAL
    assert answer.text == NO_ANSWER_NOTICE
    # the claims stored are those of the answer as received, each with the revision that removed it
    cards = list(answer.claims.order_by("claim_id"))
    assert [c.text for c in cards] == [
        "The annual fee for the Gold card is $150.",
        "Gold card holders get free airport lounge access in every airport of the world.",
    ]
    assert [c.label for c in cards] == ["NEI", "NEI"]
    assert [(c.revision["strategy"], c.revision["text"], c.revision["label"]) for c in cards] == [
        ("remove", "", None),
        ("remove", "", None),
    ]
    (entry,) = answer.revisions
    assert [(e["claim_id"], e["strategy"], e["action"]) for e in entry["ledger"]] == [
        ("c1", "remove", "remove_sentence"),
        ("c2", "remove", "remove_sentence"),
        ("c2", "remove", "no_answer_notice"),
    ]
    assert [a["attempt"] for a in run.revision_history] == [0, 1]
    assert run.revision_history[0]["text"] == ORIGINAL and run.revision_history[1]["kept"]
    assert {c["verdict"] for c in run.revision_history[0]["ledger"]} == {"not_found"}
    event = AuditEvent.objects.get(action="answer.revised", object_id=str(answer.pk))
    assert event.actor == analyst and event.details["edits"] == {"remove": 3}


@pytest.mark.slow
@pytest.mark.django_db
def test_without_revise_the_answer_is_stored_as_received(workspace):
    answer = audit_and_store(workspace=workspace, query=QUERY, answer_text=ORIGINAL, contexts=[])
    answer.refresh_from_db()
    assert answer.text == answer.original_text == ORIGINAL and answer.revisions == []
    assert answer.runs.get().revision_history == []
    assert answer.claims.count() == 2
