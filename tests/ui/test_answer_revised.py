"""A revised answer: the badges sit on the text the stored claims were extracted from."""

import pytest

from audit.models import Answer, Claim, VerificationRun

pytestmark = pytest.mark.django_db

ORIGINAL = "LTP was first described in 1985. It needs NMDA receptors."
RETURNED = "LTP was first described in 1973 [1]. It needs NMDA receptors."


def test_it_badges_the_returned_text_when_the_claims_are_those_of_the_returned_answer(client, analyst, workspace):
    answer = Answer.objects.create(workspace=workspace, query="q", original_text=ORIGINAL, text=RETURNED,
                                   mode="audit-local")
    first = "LTP was first described in 1973."
    Claim.objects.create(answer=answer, claim_id="c1", text=first, span_start=0, span_end=RETURNED.index("[1]") + 4,
                         label="SUPPORTED", machine_label="SUPPORTED", confidence=0.9)
    start = RETURNED.index("It needs")
    Claim.objects.create(answer=answer, claim_id="c2", text="It needs NMDA receptors.", span_start=start,
                         span_end=len(RETURNED), label="SUPPORTED", machine_label="SUPPORTED", confidence=0.9)
    VerificationRun.objects.create(answer=answer, mode="audit-local", revision_history=[
        {"attempt": 0, "author": "original", "text": ORIGINAL, "kept": False, "edits": []},
        {"attempt": 1, "author": "offline", "text": RETURNED, "kept": True,
         "edits": [{"claim_id": "c1", "strategy": "correct", "before": "1985", "after": "1973", "reason": "numeric"}]},
    ])
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    assert "Answer as returned" in html and "Answer as received" in html
    badged = html.split('id="answer-text"')[1].split("</div>")[0]
    assert "1973" in badged and "1985" not in badged
    assert "Attempt 1" in html.replace("<strong>", "").replace("</strong>", "")
