"""The answer page: its review cases, where claim text went, held revisions and their decision, labels."""

from __future__ import annotations

import re

import pytest

from audit.models import AuditEvent, ExternalCall
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db

RECEIVED = "Schultz reported this in 1987 using recordings from rats [1]."
PROPOSED = "Schultz reported this in 1997 using recordings from rats [1]."


def held_answer(workspace):
    """An answer whose one revision waits for approval, stored as the revision service stores it."""
    answer, claims = build_answer(workspace, text=RECEIVED)
    claim = claims[0]
    claim.text, claim.label, claim.machine_label, claim.confidence = (
        RECEIVED.replace(" [1]", ""),
        "REFUTED",
        "REFUTED",
        0.05,
    )
    claim.revision = {
        "strategy": "correct",
        "text": PROPOSED.replace(" [1]", ""),
        "label": "REFUTED",
        "confidence": 0.05,
        "passage_id": "kb_chunk_1",
        "sentence": {
            "text": PROPOSED.replace(" [1]", ""),
            "label": "REFUTED",
            "confidence": 0.05,
            "findings": [
                {
                    "rule": "substitution",
                    "claim": "rats",
                    "evidence": "monkeys",
                    "sentence": "…",
                    "passage_id": "kb_chunk_1",
                }
            ],
        },
    }
    claim.save()
    ev = claim.evidence.get()
    ev.title = "Dopamine and reward"
    ev.snippet = (
        "Midbrain dopamine neurons signal a reward prediction error. "
        "Wolfram Schultz and colleagues reported this pattern in recordings from monkeys in 1997."
    )
    ev.save()
    answer.revision_status = "proposed"
    answer.proposed_text = PROPOSED
    answer.revisions = [
        {
            "source": "revision_loop",
            "text": PROPOSED,
            "status": "proposed",
            "ledger": [
                {
                    "claim_id": "c1",
                    "strategy": "correct",
                    "before": RECEIVED,
                    "after": PROPOSED,
                    "reason": "the evidence states this fact differently",
                    "passage_id": "kb_chunk_1",
                }
            ],
        }
    ]
    answer.save()
    return answer, claim


def test_a_held_revision_is_shown_as_a_proposal_with_its_diff_evidence_and_whole_sentence_label(
    client, analyst, workspace
):
    answer, _ = held_answer(workspace)
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    section = html.split('id="proposal"')[1].split("</section>")[0]
    assert "Revision awaiting approval" in section and "served as received until a person accepts" in section
    assert '<div class="answer-text proposal-original">' + RECEIVED in section
    assert '<div class="answer-text proposal-text">' + PROPOSED in section
    assert (
        '<del>1987</del><span class="diff-gap" aria-hidden="true"> </span><span class="sr-only">added:</span><ins>1997</ins>'
        in section
    )
    # the sentence of the passage that backs the edit, not the passage's first one
    assert (
        "Evidence: <em>Dopamine and reward</em> — “Wolfram Schultz and colleagues reported this pattern in recordings from monkeys in 1997.”"
        in section
    )
    judged = section.split('class="sentence-label"')[1].split("</td>")[0]
    assert "✗ Refuted" in judged and "“rats” where the source says “monkeys”" in judged
    assert f'action="/answers/{answer.public_id}/revision"' in section


def test_accepting_a_proposal_from_the_page_serves_it_and_records_who_and_why(client, analyst, workspace):
    answer, _ = held_answer(workspace)
    client.force_login(analyst)
    response = client.post(
        f"/answers/{answer.public_id}/revision",
        {"decision": "accept", "reason": "Checked the year."},
        follow=True,
    )
    html = response.content.decode()
    assert f"The revision of {answer.public_id} was accepted: the proposed text is served." in html
    answer.refresh_from_db()
    assert (answer.revision_status, answer.text) == ("accepted", PROPOSED)
    assert "Accepted by analyst1" in html and "“Checked the year.”" in html
    assert AuditEvent.objects.filter(action="answer.revision_accepted", actor=analyst).count() == 1
    again = client.post(
        f"/answers/{answer.public_id}/revision", {"decision": "accept", "reason": "x"}, follow=True
    )
    assert "You already accepted this revision" in again.content.decode()


def test_a_decision_without_a_choice_or_reason_is_refused_with_a_linked_error_summary(
    client, analyst, workspace
):
    answer, _ = held_answer(workspace)
    client.force_login(analyst)
    response = client.post(f"/answers/{answer.public_id}/revision", {"reason": ""})
    html = response.content.decode()
    assert response.status_code == 400
    summary = html.split('id="error-summary"')[1].split("</div>")[0]
    assert f'href="#decide-{answer.public_id}-accept">Choose Accept or Reject.' in summary
    assert f'href="#decide-{answer.public_id}-reason">Say why' in summary
    assert f'id="decide-{answer.public_id}-reason" name="reason" rows="2" aria-invalid="true"' in html
    answer.refresh_from_db()
    assert answer.revision_status == "proposed"


def test_an_auditor_sees_the_proposal_but_no_decision_form_and_may_not_post_one(client, auditor, workspace):
    answer, _ = held_answer(workspace)
    client.force_login(auditor)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert 'id="proposal"' in html and "revision-decision" not in html
    assert (
        client.post(
            f"/answers/{answer.public_id}/revision", {"decision": "accept", "reason": "x"}
        ).status_code
        == 403
    )


def test_the_queue_shows_held_revisions_as_proposals(client, analyst, workspace):
    answer, _ = held_answer(workspace)
    client.force_login(analyst)
    html = client.get("/escalations/").content.decode()
    section = html.split('id="proposals"')[1].split("</section>")[0]
    assert "Revisions awaiting approval (1)" in section and f'data-answer="{answer.public_id}"' in section
    assert (
        '<div class="answer-text proposal-text">' + PROPOSED in section
        and "“rats” where the source says" in section
    )


def test_the_answer_page_lists_its_cases_with_ticket_tier_state_and_deadline(client, analyst, workspace):
    answer, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    row = html.split('id="answer-cases"')[1].split(f'data-ticket="{case.ticket}"')[1].split("</tr>")[0]
    assert (
        f'href="/escalations/{case.ticket}/"' in row
        and '<td data-label="Tier">L1 on-call analyst</td>' in row
    )
    assert "Open · On track" in row
    assert case.due_at.strftime("%Y-%m-%d %H:%M") in row


def test_the_answer_page_says_when_and_why_claim_text_went_to_external_sources(client, analyst, workspace):
    from audit.services.events import event_record

    answer, claims = build_answer(workspace)
    event_record(
        action="answer.web_escalation",
        obj=answer,
        workspace=workspace,
        details={
            "requested": False,
            "reasons": {"c3": ["audit_score_below_threshold", "no_local_support"]},
            "status": "done",
        },
    )
    for provider in ("pubmed", "arxiv"):
        ExternalCall.objects.create(
            workspace=workspace,
            answer=answer,
            claim=claims[2],
            provider=provider,
            url="https://x",
            query="dopamine striatum",
            status="ok",
        )
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    section = html.split('id="external"')[1].split("</section>")[0]
    assert "the text of 1 claim went to PubMed and arXiv (Audit-Web)" in section
    assert "the automatic trigger" in section
    assert (
        "<strong>c3</strong>: confidence below 0.80; no supporting passage in the request or the knowledge base"
        in section
    )
    assert "Allow external calls" in section and "now <strong>on</strong>" in section
    assert "dopamine striatum" in section


def test_an_answer_whose_claims_stayed_inside_says_nothing_left_and_names_the_toggle(
    client, analyst, workspace
):
    answer, _ = build_answer(workspace)
    workspace.allow_external_calls = False
    workspace.save()
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert "No claim text of this answer left Theoria." in html
    assert "now <strong>off: nothing leaves Theoria</strong>" in html


def test_a_relabelled_claim_shows_the_persons_label_with_the_machines_beside_it(client, analyst, workspace):
    from audit.services.claims import claim_relabel

    answer, claims = build_answer(workspace)
    claim_relabel(claim=claims[1], label="SUPPORTED", actor=analyst, reason="The anatomy text agrees.")
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    row = html.split('data-claim="c2"')[-1].split("</tr>")[0]
    assert "✓ Supported" in row and "set by analyst1" in row and "machine: ✗ Refuted" in row
    assert "(the machine's)" in row
    listed = client.get("/claims/").content.decode()
    assert 'set by analyst1; <span class="machine-label">machine: ✗ Refuted</span>' in listed
    assert "· reviewer" in html  # the inline badge says it too


def test_a_supported_claim_card_shows_no_chance_of_contradiction(client, analyst, workspace):
    _, claims = build_answer(workspace)
    for claim, p in ((claims[0], 1.0), (claims[1], 0.9)):
        claim.metrics = {**claim.metrics, "p_refuted": p}
        claim.save()
    client.force_login(analyst)
    supported = client.get(f"/claims/{claims[0].pk}/").content.decode()
    refuted = client.get(f"/claims/{claims[1].pk}/").content.decode()
    assert "p_refuted" not in supported.split('id="claim-metrics"')[1].split("</table>")[0]
    assert "chance it is contradicted, if it is not supported" in refuted


def test_revision_attempts_say_what_the_unsupported_figure_counts(client, analyst, workspace):
    answer, _ = build_answer(
        workspace,
        revised_text="Long-term potentiation requires NMDA receptor activation. Dopamine neurons project to the striatum.",
    )
    run = answer.runs.get()
    run.revision_history[0]["summary"] = {
        "coverage": 0.33,
        "unsupported_rate": 0.0,
        "material": 2,
        "unsupported_material": 0,
        "contradicted": 1,
    }
    run.save()
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert "evidence coverage 33 % · no evidence found for 0 of 2 material claims · 1 contradicted" in html
    assert "A refuted claim is counted as contradicted" in html and "unsupported rate 0.00" not in html


def test_the_word_diff_keeps_a_replaced_number_apart_from_its_replacement():
    from audit.web.presentation import DiffPart, word_diff

    parts = word_diff("Level 8 applies.", "Level 4 applies.")
    assert parts == [
        DiffPart("equal", "Level "),
        DiffPart("delete", "8"),
        DiffPart("insert", "4"),
        DiffPart("equal", " applies."),
    ]
    assert parts[1].replaced and not parts[2].replaced
    assert (
        re.sub(
            r"<[^>]+>",
            "",
            "".join(
                f"<del>{p.text}</del>" + (" " if p.replaced else "") if p.op == "delete" else p.text
                for p in parts
            ),
        )
        == "Level 8 4 applies."
    )


def test_the_mode_of_an_audit_local_answer_announces_the_web_where_the_workspace_allows_external_calls(
    client, analyst, workspace
):
    client.force_login(analyst)
    answer = build_answer(workspace)[0]
    assert answer.mode == "audit-local"
    workspace.allow_external_calls = True
    workspace.save(update_fields=["allow_external_calls"])
    mode = re.search(
        r'<dd id="answer-mode">(.*?)</dd>', client.get(f"/answers/{answer.public_id}/").content.decode()
    )
    assert mode and mode.group(1).startswith("Audit-Local → Audit-Web")

    workspace.allow_external_calls = False
    workspace.save(update_fields=["allow_external_calls"])
    mode = re.search(
        r'<dd id="answer-mode">(.*?)</dd>', client.get(f"/answers/{answer.public_id}/").content.decode()
    )
    assert mode and mode.group(1) == "Audit-Local"


def test_the_answer_form_names_the_sites_that_may_receive_claim_text_where_external_calls_are_allowed(
    client, submitter, workspace
):
    client.force_login(submitter)
    workspace.allow_external_calls = True
    workspace.web_allowed_domains = ["pubmed.ncbi.nlm.nih.gov", "export.arxiv.org"]
    workspace.save(update_fields=["allow_external_calls", "web_allowed_domains"])
    html = client.get("/answers/new/").content.decode()
    notice = re.search(r'<p class="help" id="web-escalation-notice">(.*?)</p>', html, re.S)
    assert notice and "pubmed.ncbi.nlm.nih.gov, export.arxiv.org" in notice.group(1)

    workspace.allow_external_calls = False
    workspace.save(update_fields=["allow_external_calls"])
    assert "web-escalation-notice" not in client.get("/answers/new/").content.decode()
