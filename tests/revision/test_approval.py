"""Revisions a person approves: the revised sentence judged whole, held revisions, accept and reject.

The real pipeline and judge run on the demo knowledge base's dopamine passage (Schultz recorded
from monkeys in 1997), as the analyst saw it: the wrong year and the wrong animal are corrected
together, and a sentence that still says "rats" is never shown as supported.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from audit.models import AuditEvent
from audit.pipeline.revision import revise_audit
from audit.pipeline.types import Passage

ROOT = Path(__file__).resolve().parents[2]
QUERY = "What do dopamine neurons signal?"
RATS = "Dopamine neurons signal a reward prediction error [1]. Schultz reported this in 1987 using recordings from rats [1]."
MONKEYS = "Dopamine neurons signal a reward prediction error [1]. Schultz reported this in 1987 using recordings from monkeys [1]."


@pytest.fixture(scope="module")
def dopamine():
    text = (ROOT / "demo/kb/dopamine_reward.md").read_text()
    return [Passage(id="1", text=text, title="Dopamine and reward")]


@pytest.mark.slow
def test_a_sentence_that_states_two_facts_differently_is_corrected_in_both_and_supported(dopamine):
    outcome = revise_audit(query=QUERY, answer=RATS, contexts=dopamine)
    assert "1997 using recordings from monkeys [1]" in outcome.final_text
    revision = outcome.claim_revisions()["c2"]
    assert revision["strategy"] == "correct" and revision["replaced"] == ["1987", "rats"]
    assert (revision["label"], revision["sentence"]["label"]) == ("SUPPORTED", "SUPPORTED")


@pytest.mark.slow
def test_a_corrected_sentence_that_still_says_rats_is_judged_whole_and_refuted(dopamine):
    from audit.pipeline.audit import verify_claims
    from audit.pipeline.embedding import similarity_fn
    from audit.pipeline.revision.whole import judge_whole

    verdict = judge_whole(
        "Schultz reported this in 1997 using recordings from rats [1].",
        dopamine,
        judge=lambda text, passages: verify_claims([(text, passages)])[0],
        similarity=similarity_fn(),
        threshold=0.8,
    )
    assert verdict["label"] == "REFUTED"
    assert {"rule": "substitution", "claim": "rats", "evidence": "monkeys"}.items() <= verdict["findings"][
        0
    ].items()


@pytest.mark.slow
def test_a_corrected_sentence_the_evidence_states_whole_is_supported(dopamine):
    outcome = revise_audit(query=QUERY, answer=MONKEYS, contexts=dopamine)
    revision = outcome.claim_revisions()["c2"]
    assert "1997 using recordings from monkeys" in revision["text"]
    assert (revision["label"], revision["sentence"]["label"]) == ("SUPPORTED", "SUPPORTED")
    assert revision["sentence"]["findings"] == []


def _audit(workspace, user, text=RATS, domain="neuroscience"):
    from audit.services.submissions import AuditRequest, audit_submit

    request = AuditRequest(
        query=QUERY,
        answer=text,
        contexts=[
            {
                "id": "1",
                "title": "Dopamine and reward",
                "text": (ROOT / "demo/kb/dopamine_reward.md").read_text(),
            }
        ],
        mode="audit-local",
        domain=domain,
    )
    return audit_submit(workspace=workspace, user=user, request=request).answer


@pytest.fixture
def held(workspace, analyst):
    """An answer audited in a workspace that holds revisions in its regulated domain."""
    workspace.regulated_domains = ["neuroscience"]
    workspace.revision_approval = "regulated"
    workspace.save()
    return _audit(workspace, analyst)


@pytest.mark.slow
@pytest.mark.django_db
def test_a_revision_in_a_held_domain_is_proposed_and_the_answer_is_served_as_received(held):
    held.refresh_from_db()
    assert held.revision_status == "proposed"
    assert held.text == RATS and held.original_text == RATS
    assert "1997" in held.proposed_text
    # the stored, counted and escalated verdict is still the one on the text as received
    c2 = held.claims.get(claim_id="c2")
    assert c2.label == "REFUTED" and c2.text.endswith("1987 using recordings from rats.")
    assert c2.review_cases.filter(status="open").exists()
    event = AuditEvent.objects.get(action="answer.revised", object_id=str(held.pk))
    assert event.details["status"] == "proposed"


@pytest.mark.slow
@pytest.mark.django_db
def test_a_workspace_that_serves_at_once_serves_the_revision_and_says_so(workspace, analyst):
    answer = _audit(workspace, analyst, domain="")
    answer.refresh_from_db()
    assert answer.revision_status == "served" and "1997" in answer.text and answer.proposed_text == ""


@pytest.mark.slow
@pytest.mark.django_db
def test_only_the_chosen_regulated_domains_hold_their_revisions(workspace, analyst):
    workspace.regulated_domains = ["neuroscience", "compliance"]
    workspace.revision_approval = "regulated"
    workspace.revision_approval_domains = ["compliance"]
    workspace.save()
    assert workspace.holds_revisions("compliance") and not workspace.holds_revisions("neuroscience")
    answer = _audit(workspace, analyst)
    answer.refresh_from_db()
    assert answer.revision_status == "served"


@pytest.mark.slow
@pytest.mark.django_db
def test_accepting_serves_the_proposal_records_the_event_and_notifies_the_targets(held, analyst, workspace):
    from escalation.models import Notification, NotificationTarget

    NotificationTarget.objects.create(
        workspace=workspace, channel="webhook", address="https://hooks.example.org/t"
    )
    from audit.services.revision import answer_revision_decide

    answer = answer_revision_decide(
        answer=held, actor=analyst, decision="accept", reason="The year is right now."
    )
    answer.refresh_from_db()
    assert answer.revision_status == "accepted" and answer.text == answer.proposed_text
    assert (
        answer.revision_decision["by"] == "analyst1"
        and answer.revision_decision["reason"] == "The year is right now."
    )
    event = AuditEvent.objects.get(action="answer.revision_accepted")
    assert event.details["reason"] == "The year is right now."
    (note,) = Notification.objects.filter(audit_event=event, address="https://hooks.example.org/t")
    assert note.workspace == workspace and note.event_id is None
    # the claims and their cases are untouched
    assert answer.claims.get(claim_id="c2").label == "REFUTED"
    # each revised wording the reviewer accepted is a labelled example for the workspace's calibration
    from audit.models import ReviewedExample

    examples = ReviewedExample.objects.filter(workspace=workspace, source=ReviewedExample.Source.REVISION)
    revised = answer.claims.exclude(revision__isnull=True)
    assert examples.count() == sum(1 for c in revised if (c.revision or {}).get("text"))
    assert examples.exists() and {e.reviewer_label for e in examples} == {"SUPPORTED"}
    assert all(e.rationale == "The year is right now." for e in examples)


@pytest.mark.slow
@pytest.mark.django_db
def test_rejecting_keeps_the_answer_as_received_and_a_second_decision_is_refused(held, analyst, expert):
    from audit.errors import AlreadyDone, Conflict
    from audit.services.revision import answer_revision_decide

    answer_revision_decide(answer=held, actor=expert, decision="reject", reason="Rats is still wrong.")
    held.refresh_from_db()
    assert (held.revision_status, held.text) == ("rejected", RATS)
    with pytest.raises(AlreadyDone, match="You already rejected this revision"):
        answer_revision_decide(answer=held, actor=expert, decision="reject", reason="again")
    with pytest.raises(Conflict, match="already rejected by expert1"):
        answer_revision_decide(answer=held, actor=analyst, decision="accept", reason="I disagree.")
    assert AuditEvent.objects.filter(action__startswith="answer.revision_").count() == 1


@pytest.mark.slow
@pytest.mark.django_db
def test_a_decision_needs_a_reviewer_a_known_decision_and_a_reason(held, auditor, analyst):
    from django.core.exceptions import ValidationError

    from audit.errors import NotAllowed
    from audit.services.revision import answer_revision_decide

    with pytest.raises(NotAllowed):
        answer_revision_decide(answer=held, actor=auditor, decision="accept", reason="ok")
    with pytest.raises(ValidationError) as caught:
        answer_revision_decide(answer=held, actor=analyst, decision="maybe", reason=" ")
    assert set(caught.value.message_dict) == {"decision", "reason"}
    held.refresh_from_db()
    assert held.revision_status == "proposed"


@pytest.mark.slow
@pytest.mark.django_db
def test_the_api_returns_the_revision_status_and_takes_a_decision(held, analyst, client):
    client.force_login(analyst)
    body = client.get(f"/api/v1/answers/{held.public_id}").json()
    assert body["revision"]["status"] == "proposed" and body["answer"] == RATS
    assert "1997" in body["revision"]["proposed_text"]
    card = next(c for c in body["claims"] if c["claim_id"] == "c2")
    assert card["revision"]["status"] == "proposed" and card["revision"]["sentence"]["label"] == "SUPPORTED"
    bad = client.post(
        f"/api/v1/answers/{held.public_id}/revision", {"decision": "accept"}, content_type="application/json"
    )
    assert bad.status_code == 400 and "reason" in bad.json()["errors"]
    done = client.post(
        f"/api/v1/answers/{held.public_id}/revision",
        {"decision": "reject", "reason": "The study design needs a citation of its own."},
        content_type="application/json",
    )
    assert done.status_code == 200
    held.refresh_from_db()
    assert done.json()["revision"] | {"decided_at": None} == {
        "status": "rejected",
        "proposed_text": held.proposed_text,
        "decided_by": "analyst1",
        "decided_at": None,
        "reason": "The study design needs a citation of its own.",
    }
    assert done.json()["answer"] == RATS
    again = client.post(
        f"/api/v1/answers/{held.public_id}/revision",
        {"decision": "reject", "reason": "The study design needs a citation of its own."},
        content_type="application/json",
    )
    assert again.status_code == 409 and again.json()["code"] == "already_done"
