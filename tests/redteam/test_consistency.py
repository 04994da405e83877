"""Same input, same verdicts (issue 13 rule 5), and a reviewer's decision reaching the served text (rule 6)."""

from __future__ import annotations

import pytest

from audit.models import Answer, AuditEvent
from escalation.models import ReviewCase
from tests.redteam.conftest import post_audit
from tests.redteam.invariants import check_rules

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CONTEXTS = [
    {
        "id": "kb1",
        "title": "Synaptic Plasticity Overview",
        "text": "Long-term potentiation (LTP) is dependent on NMDA receptor activation in CA1 synapses.",
    },
    {
        "id": "kb2",
        "title": "Hippocampus Anatomy",
        "text": "The hippocampus proper has three layers: the stratum oriens, the pyramidal layer and the stratum radiatum.",
    },
]
ANSWER = (
    "Long-term potentiation requires NMDA receptor activation [1]. "
    "The hippocampus proper has seven layers [2]. The cerebellum stores every childhood memory of taste."
)


def verdicts(data: dict) -> list[tuple]:
    return [
        (
            c["claim_id"],
            c["text"],
            c["label"],
            round(c["confidence"], 6),
            sorted(r for e in c["escalations"] if e["type"] == "review" for r in e["reasons"]),
        )
        for c in data["claims"]
    ]


def test_the_same_answer_sent_twice_gets_the_same_verdicts_cases_and_returned_text(front_end):
    first = post_audit(front_end, ANSWER, CONTEXTS)
    second = post_audit(front_end, ANSWER, CONTEXTS)
    assert verdicts(first) == verdicts(second)
    assert first["answer"] == second["answer"]
    assert [c["revision"] for c in first["claims"]] == [c["revision"] for c in second["claims"]]


def test_audit_web_without_web_evidence_gives_the_verdicts_of_audit_local(front_end):
    local = post_audit(front_end, ANSWER, CONTEXTS, mode="audit-local")
    web = post_audit(front_end, ANSWER, CONTEXTS, mode="audit-web")
    assert web["web"]["status"].startswith("skipped")
    assert verdicts(local) == verdicts(web)
    assert local["answer"] == web["answer"]


def test_a_failed_web_step_leaves_the_audit_local_verdicts_exactly_as_they_were(
    front_end, workspace, settings
):
    local = post_audit(front_end, ANSWER, CONTEXTS, mode="audit-local")
    settings.THEORIA = {
        **settings.THEORIA,
        "WEB_ALLOW_PRIVATE_ADDRESSES": True,
        "WEB_TIMEOUT_S": 1.0,
        "PUBMED_BASE_URL": "http://127.0.0.1:9/pubmed",
        "ARXIV_BASE_URL": "http://127.0.0.1:9/arxiv",
    }
    workspace.allow_external_calls = True
    workspace.web_allowed_domains = ["127.0.0.1"]
    workspace.save(update_fields=["allow_external_calls", "web_allowed_domains"])

    web = post_audit(front_end, ANSWER, CONTEXTS, mode="audit-web")

    assert web["web"]["status"] == "failed" and web["mode"] == "audit-local"
    assert verdicts(local) == verdicts(web)
    assert local["answer"] == web["answer"]
    check_rules(web, ANSWER, CONTEXTS)


def test_a_reviewer_relabel_brings_back_the_received_wording_and_is_recorded(front_end, client_for, analyst):
    contexts = [{"id": "1", "title": "Records policy", "text": "Incident reports must be kept for 7 years."}]
    data = post_audit(front_end, "Incident reports must be kept for 2 years [1].", contexts)
    [card] = data["claims"]
    assert (
        card["label"] == "REFUTED"
        and card["revision"]["text"] == "Incident reports must be kept for 7 years."
    )
    assert data["answer"] == "Incident reports must be kept for 7 years [1]."
    [ref] = card["escalations"]
    assert ref["reasons"] == ["refuted", "auto_corrected"]
    reviewer = client_for(analyst)
    assert reviewer.post(f"/api/v1/cases/{ref['ticket']}/acknowledge", {}, format="json").status_code == 200
    response = reviewer.post(
        f"/api/v1/cases/{ref['ticket']}/resolve",
        {"decision": "relabel_supported", "rationale": "The 2026 policy shortened it to 2 years."},
        format="json",
    )
    assert response.status_code == 200, response.content

    answer = Answer.objects.get(public_id=data["answer_id"])
    assert answer.text == "Incident reports must be kept for 2 years [1]."
    assert (
        answer.revisions[-1]["source"] == "review"
        and answer.revisions[-1]["action"] == "restored_received_wording"
    )
    claim = answer.claims.get()
    assert claim.label == "SUPPORTED" and claim.machine_label == "REFUTED"
    assert claim.revision["review"]["label"] == "SUPPORTED"
    assert AuditEvent.objects.filter(action="answer.text_restored", object_id=str(answer.pk)).exists()
    served = front_end.get(f"/api/v1/answers/{answer.public_id}").json()
    assert served["answer"] == "Incident reports must be kept for 2 years [1]."
    assert ReviewCase.objects.get(ticket=ref["ticket"]).status == "resolved"


def test_a_reviewer_refuting_a_claim_the_answer_still_states_marks_the_served_text_superseded(
    front_end, lead
):
    from escalation.services import case_open, case_resolve

    data = post_audit(
        front_end,
        "The annual fee for the Gold card is $150 [1].",
        [{"id": "1", "title": "Fees", "text": "The annual fee for the Gold card is $150."}],
    )
    [card] = data["claims"]
    assert card["label"] == "SUPPORTED" and not card["escalations"]
    answer = Answer.objects.get(public_id=data["answer_id"])
    case = case_open(claim=answer.claims.get(), actor=lead, reason="The fee changed on 1 November.")
    case_resolve(
        case=case, actor=lead, decision="relabel_refuted", rationale="The fee is $180 since November."
    )

    answer.refresh_from_db()
    assert answer.text == data["answer"]  # nothing to restore: the served text is marked instead
    assert (
        answer.revisions[-1]["superseded"] is True and answer.revisions[-1]["action"] == "marked_superseded"
    )
    assert AuditEvent.objects.filter(action="answer.text_superseded", object_id=str(answer.pk)).exists()
    served = front_end.get(f"/api/v1/answers/{answer.public_id}").json()
    assert served["claims"][0]["label"] == "REFUTED" and served["revisions"][-1]["superseded"] is True
