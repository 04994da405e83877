"""Issue 44 through HTTP on real audits (the embedding model, the judge, the parser): every claim the
verifier cannot back reaches a person, once; a plain negation read both ways; one meaning for each
number on the card, the list and the CSV; a reviewer's relabel flows through; "Open a case" on the pages.
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.test import Client

from audit.models import AuditEvent, Claim, VerificationRun
from escalation.models import ReviewCase
from tests.redteam.conftest import post_audit

pytestmark = pytest.mark.django_db

KANDEL = "Place cells were discovered by Eric Kandel and Jonathan Dostrovsky in 1971 [1]."
PLACE_CELLS = {
    "id": "1",
    "title": "Place cells",
    "text": "Place cells were discovered by John O'Keefe and Jonathan Dostrovsky in 1971 in the "
    "hippocampus of rats.",
}
ASPIRIN = {"id": "1", "title": "Aspirin", "text": "Aspirin does not cure cancer."}
NAIVE = {
    "id": "1",
    "title": "T cells",
    "text": "Naïve T cells are T cells that have matured in the thymus but have not yet encountered "
    "their specific antigen in the periphery.",
}


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _card_problems(client: Client, claim) -> list[str]:
    """The numbers of one claim card that contradict their label or stance."""
    problems = []
    page = client.get(f"/claims/{claim.pk}/").content.decode()
    p = f"{claim.confidence:.2f}"
    if f"P(supported) {p}" not in page:
        problems.append(f"{claim.claim_id}: the label's sentence does not name P(supported) {p}")
    if re.search(r"confidence [0-9.]+ that|confidence it is supported", page):
        problems.append(f"{claim.claim_id}: a confidence not named P(supported)")
    for polarity, body in re.findall(r'data-polarity="(\w+)">(.*?)</article>', page, re.S):
        for stance in re.findall(r"· (support|contradiction) [0-9.]+", body):
            if {"support": "supports", "contradiction": "contradicts"}[stance] != polarity:
                problems.append(f"{claim.claim_id}: a {stance} score on a '{polarity}' evidence row")
    return problems


def _csv_problems(client: Client) -> list[str]:
    """The rows of the claims CSV whose numbers or labels contradict each other."""
    export = client.get("/api/v1/claim-cards/export?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode())))
    problems = [] if rows else ["the claims CSV is empty"]
    for row in rows:
        if row["p_supported"] != row["confidence"]:
            problems.append(f"CSV {row['claim_id']}: p_supported {row['p_supported']} != {row['confidence']}")
        if not row["reviewer_label"] and row["label"] != row["machine_label"]:
            problems.append(f"CSV {row['claim_id']}: a label that is neither the machine's nor a reviewer's")
    return problems


def numbers_agree_with_labels(client: Client, claims) -> list[str]:
    """Every contradiction between a number and its label or stance on the claim cards, the claims
    list and the claims CSV ([] when there is none)."""
    listing = client.get("/claims/").content.decode()
    problems = ["the claims list names a number 'Confidence'"] if ">Confidence<" in listing else []
    for claim in claims:
        problems += _card_problems(client, claim)
    return problems + _csv_problems(client)


def test_a_confident_nei_opens_one_case_its_card_says_what_the_revision_changed_and_a_relabel_flows_through(
    front_end, analyst, workspace
):
    first = post_audit(front_end, KANDEL, [PLACE_CELLS], query="Who discovered place cells?")
    (card,) = first["claims"]
    assert card["label"] == "NEI" and card["p_supported"] == card["confidence"]
    assert card["machine_label"] == "NEI" and card["reviewer_label"] is None
    (ref,) = card["escalations"]
    assert "unsupported" in ref["reasons"]  # at any confidence: the seed's 0.60 is only a second reason
    assert first["answer"].endswith("1971.")  # the revision removed the [1] (served)
    # ... and the text to show says so, the finding and its case first (never the fix instead)
    (change,) = first["served_changes"]
    assert first["answer_marked"].startswith(first["answer"][:-1] + " [R1].")
    assert change["mark"] == "R1" and change["cases"] == [ref["ticket"]]
    assert change["finding"] == f"Not enough evidence (P(supported) {card['p_supported']:.2f})"
    assert change["what"] == "removed its citation" and change["note"] in first["answer_marked"]
    assert ref["ticket"] in first["answer_marked"]

    # a re-audit of the same answer joins the case: never a duplicate
    again = post_audit(front_end, KANDEL, [PLACE_CELLS], query="Who discovered place cells?")
    assert [e["ticket"] for e in again["claims"][0]["escalations"]] == [ref["ticket"]]
    assert ReviewCase.objects.count() == 1

    analyst_web = web(analyst)
    claim = Claim.objects.get(answer__public_id=first["answer_id"])
    page = analyst_web.get(f"/claims/{claim.pk}/").content.decode()
    assert "removed its citation because no source backs it well enough" in page
    assert ref["ticket"] in page and 'id="open-case"' in page
    answer_page = analyst_web.get(f"/answers/{first['answer_id']}/").content.decode()
    assert 'href="#change-R1"' in answer_page and 'id="change-R1"' in answer_page
    note = answer_page.split('id="change-R1"', 1)[1].split("</li>", 1)[0]
    assert "Not enough evidence" in note and "removed its citation" in note
    assert f"/escalations/{ref['ticket']}" in note
    assert numbers_agree_with_labels(analyst_web, Claim.objects.all()) == []

    # the reviewer relabels SUPPORTED: the citation comes back, the metrics are recomputed, both recorded
    before = VerificationRun.objects.get(answer=claim.answer)
    response = analyst_web.post(
        f"/escalations/{ref['ticket']}/resolve",
        {
            "decision": "relabel_supported",
            "rationale": "O'Keefe's co-author is right; checked",
            "confirm": "on",
        },
    )
    assert response.status_code == 302
    served = front_end.get(f"/api/v1/answers/{first['answer_id']}").json()
    assert served["answer"].endswith("1971 [1].")
    assert "answer_marked" not in served  # the reviewer undid the change: nothing is marked any more
    run = VerificationRun.objects.get(answer=claim.answer)
    assert (run.faithfulness, run.coverage, run.unsupported_rate) == (1.0, 1.0, 0.0)
    assert run.audit_score > before.audit_score
    assert AuditEvent.objects.filter(
        action="answer.metrics_recomputed", object_id=str(claim.answer.pk)
    ).exists()
    assert AuditEvent.objects.filter(action="answer.text_restored", object_id=str(claim.answer.pk)).exists()
    (relabelled,) = served["claims"]
    assert (relabelled["label"], relabelled["machine_label"], relabelled["reviewer_label"]) == (
        "SUPPORTED",
        "NEI",
        "SUPPORTED",
    )
    assert numbers_agree_with_labels(analyst_web, Claim.objects.all()) == []


def test_a_plain_negation_is_read_both_ways_and_a_person_can_be_asked_on_any_claim(
    front_end, analyst, submitter, workspace
):
    aspirin = post_audit(front_end, "Aspirin cures cancer [1].", [ASPIRIN], query="Does aspirin cure cancer?")
    (card,) = aspirin["claims"]
    assert card["label"] == "REFUTED" and card["escalations"]
    naive = post_audit(
        front_end,
        "Naïve T cells have not yet encountered their specific antigen [1].",
        [NAIVE],
        query="What are naïve T cells?",
    )
    (card,) = naive["claims"]
    assert card["label"] == "SUPPORTED" and not card["escalations"]

    claim = Claim.objects.get(answer__public_id=naive["answer_id"])
    analyst_web = web(analyst)
    listing = analyst_web.get("/claims/").content.decode()
    assert f'action="/claims/{claim.pk}/open-case"' in listing  # "Open a case" in the claims list
    assert analyst_web.post(f"/claims/{claim.pk}/open-case", {"reason": " "}).status_code == 400
    assert web(submitter).post(f"/claims/{claim.pk}/open-case", {"reason": "check"}).status_code == 403
    response = analyst_web.post(f"/claims/{claim.pk}/open-case", {"reason": "The periphery matters here"})
    case = ReviewCase.objects.get(claim=claim)
    assert response.status_code == 302 and response["Location"].endswith(f"/escalations/{case.ticket}/")
    assert (case.trigger, case.tier) == ("manual", 1)
    assert case.events.get(kind="opened").reason == "The periphery matters here"
    assert AuditEvent.objects.filter(action="case.opened", object_id=str(case.pk)).exists()
    assert case.ticket in analyst_web.get(f"/claims/{claim.pk}/").content.decode()
    # a second request names the open case and opens nothing
    analyst_web.post(f"/claims/{claim.pk}/open-case", {"reason": "again"})
    assert ReviewCase.objects.filter(claim=claim).count() == 1
    # another workspace's analyst does not see the claim
    from audit import roles
    from tests.factories import UserFactory, WorkspaceFactory

    stranger = UserFactory(username="stranger", role=roles.L1_ANALYST, workspace=WorkspaceFactory())
    assert web(stranger).post(f"/claims/{claim.pk}/open-case", {"reason": "mine?"}).status_code == 404
    assert numbers_agree_with_labels(analyst_web, Claim.objects.all()) == []
