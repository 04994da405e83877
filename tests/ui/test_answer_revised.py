"""A revised answer: the received text is badged with its claims' verdicts, the returned text with
each claim's revision (issue 13: the cards describe the answer as received)."""

import pytest

from audit.models import Answer, Claim, VerificationRun

pytestmark = pytest.mark.django_db

ORIGINAL = "LTP was first described in 1985. It needs NMDA receptors."
RETURNED = "LTP was first described in 1973 [1]. It needs NMDA receptors."


def test_it_badges_the_received_text_with_the_claims_and_the_returned_text_with_their_revisions(
    client, analyst, workspace
):
    answer = Answer.objects.create(
        workspace=workspace, query="q", original_text=ORIGINAL, text=RETURNED, mode="audit-local"
    )
    Claim.objects.create(
        answer=answer,
        claim_id="c1",
        text="LTP was first described in 1985.",
        span_start=0,
        span_end=ORIGINAL.index(" It"),
        label="REFUTED",
        machine_label="REFUTED",
        confidence=0.05,
        revision={
            "strategy": "correct",
            "text": "LTP was first described in 1973.",
            "label": "SUPPORTED",
            "confidence": 0.93,
            "passage_id": "1",
        },
    )
    start = ORIGINAL.index("It needs")
    Claim.objects.create(
        answer=answer,
        claim_id="c2",
        text="It needs NMDA receptors.",
        span_start=start,
        span_end=len(ORIGINAL),
        label="SUPPORTED",
        machine_label="SUPPORTED",
        confidence=0.9,
    )
    VerificationRun.objects.create(
        answer=answer,
        mode="audit-local",
        revision_history=[
            {"attempt": 0, "author": "original", "text": ORIGINAL, "kept": False, "edits": []},
            {
                "attempt": 1,
                "author": "offline",
                "text": RETURNED,
                "kept": True,
                "edits": [
                    {
                        "claim_id": "c1",
                        "strategy": "correct",
                        "before": "1985",
                        "after": "1973",
                        "reason": "numeric",
                    }
                ],
            },
        ],
    )
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert "Answer as returned" in html and "Answer as received" in html
    received = html.split('id="answer-text"')[1].split("</div>")[0]
    assert "1985" in received and "1973" not in received and "badge--refuted" in received
    returned = html.split('id="returned-text"')[1].split("</div>")[0]
    assert "1973" in returned and "1985" not in returned and "badge--refuted" not in returned
    assert returned.count("badge--supported") == 2
    assert "Attempt 1" in html.replace("<strong>", "").replace("</strong>", "")
