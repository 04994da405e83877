"""Audit-Web end to end: POST /api/v1/audits in mode audit-web, and the pages that show web provenance."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import Claim, Evidence, ExternalCall
from audit.services.web import web_verify_answer

from .conftest import (
    ARXIV_PATH,
    PUBMED_PATH,
    STRONG_CLAIM,
    SUPPORTING_ARTICLE,
    WEAK_CLAIM,
    Reply,
    make_answer,
    serve_arxiv,
    serve_pubmed,
)

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def _post_audit_web(user, answer_text: str, **extra):
    """POST an Audit-Web request whose context supports only STRONG_CLAIM; assert it was stored."""
    body = {
        "query": "What does LTP require?",
        "mode": "audit-web",
        "answer": answer_text,
        "contexts": [{"id": "kb1", "title": "Anatomy", "text": STRONG_CLAIM}],
        **extra,
    }
    response = _client(user).post("/api/v1/audits", body, format="json")
    assert response.status_code == 201, response.content
    return response


def test_it_reverifies_weak_claims_of_an_audit_web_request_and_returns_cards_with_web_provenance(
    web_settings, web_workspace, web_server, submitter
):
    pytest.importorskip("audit.services.audit", reason="needs the pipeline's audit_answer service (issue 3)")
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    response = _post_audit_web(submitter, f"{WEAK_CLAIM} {STRONG_CLAIM} [1]", domain="neuroscience")

    data = response.json()
    assert data["mode"] == "audit-web" and data["web"]["status"] == "done"
    cards = {card["text"]: card for card in data["claims"]}
    weak = next(card for text, card in cards.items() if "potentiation" in text.lower())
    web = [ev for ev in weak["evidence"] if ev["source_type"] == "web"]
    assert (
        web
        and web[0]["uri"] == "https://pubmed.ncbi.nlm.nih.gov/31415/"
        and web[0]["hash"].startswith("sha256:")
    )
    assert weak["mode"] == "Audit-Web" and weak["label"] == "SUPPORTED"
    stored = Evidence.objects.get(claim__answer__public_id=data["answer_id"], source_type="web")
    assert stored.provenance["provider"] == "pubmed" and stored.provenance["query"]
    assert ExternalCall.objects.filter(answer__public_id=data["answer_id"], status="ok").count() == 3


def test_it_completes_an_audit_web_request_with_the_local_result_when_the_web_fails(
    web_settings, web_workspace, web_server, submitter
):
    pytest.importorskip("audit.services.audit", reason="needs the pipeline's audit_answer service (issue 3)")
    web_workspace.web_allowed_domains = ["export.arxiv.org"]  # the local providers are not allowed
    web_workspace.save(update_fields=["web_allowed_domains"])
    response = _post_audit_web(submitter, f"{WEAK_CLAIM} {STRONG_CLAIM}")

    assert web_server.requests == []
    refused = ExternalCall.objects.filter(answer__public_id=response.json()["answer_id"])
    assert refused.exists() and {c.failure_reason for c in refused} == {"domain"}
    assert all(ev["source_type"] != "web" for card in response.json()["claims"] for ev in card["evidence"])
    assert response.json()["web"]["status"] == "failed" and response.json()["mode"] == "audit-local"


def test_it_shows_web_provenance_on_the_claim_page_and_the_mode_on_the_answer_page(
    web_settings, web_workspace, web_server, client, analyst
):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)
    web_verify_answer(answer=answer)
    claim = Claim.objects.get(answer=answer, claim_id="c1")
    client.force_login(analyst)

    page = client.get(f"/claims/{claim.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "https://pubmed.ncbi.nlm.nih.gov/31415/" in html and "pubmed" in html
    assert claim.evidence.get(source_type="web").hash in html
    answer_page = client.get(f"/answers/{answer.public_id}/")
    assert answer_page.status_code == 200 and "Audit-Web" in answer_page.content.decode()


def test_it_says_the_web_step_failed_when_every_web_call_fails_and_keeps_the_local_result(
    web_settings, web_workspace, web_server, submitter
):
    pytest.importorskip("audit.services.audit", reason="needs the pipeline's audit_answer service (issue 3)")
    from audit.models import Answer, AuditEvent, VerificationRun

    web_settings.THEORIA = {**web_settings.THEORIA, "WEB_TIMEOUT_S": 0.3}
    failing = Reply(500, {"Content-Type": "text/plain"}, b"upstream down")
    web_server.route(PUBMED_PATH + "esearch.fcgi", failing)
    web_server.route(ARXIV_PATH, Reply(200, {"Content-Type": "application/atom+xml"}, b"<feed/>", delay_s=3))
    data = _post_audit_web(submitter, f"{WEAK_CLAIM} {STRONG_CLAIM}", domain="neuroscience").json()

    assert web_server.paths(), "the local server was asked"
    assert data["web"]["status"] == "failed" and data["web"]["requested"] is True
    assert {f["reason"] for f in data["web"]["failures"]} == {"http_status", "timeout"}
    assert {f["provider"] for f in data["web"]["failures"]} == {"pubmed", "arxiv"}
    assert data["web"]["verified"] == [] and data["web"]["evidence_added"] == 0
    # the answer keeps the mode that verified it; the request is in mode_decision
    assert data["mode"] == "audit-local" and data["mode_decision"]["mode"] == "audit-web"
    assert all(card["mode"] == "Audit-Local" for card in data["claims"])
    assert all(ev["source_type"] != "web" for card in data["claims"] for ev in card["evidence"])
    warning = next(w for w in data["audit"]["warnings"] if w.get("code") == "WEB_VERIFICATION_FAILED")
    assert "http_status" in warning["message"] and "timeout" in warning["message"]
    answer = Answer.objects.get(public_id=data["answer_id"])
    run = VerificationRun.objects.get(answer=answer)
    assert answer.mode == run.mode == "audit-local" and "web_verification" not in run.methods
    assert any(w.get("code") == "WEB_VERIFICATION_FAILED" for w in run.warnings)
    # every warning is keyed the same way: code and message (a failed call each, then the summary)
    assert all({"code", "message"} <= set(w) and "type" not in w for w in run.warnings)
    assert [w["code"] for w in run.warnings].count("web_call_failed") == 2
    assert set(ExternalCall.objects.filter(answer=answer).values_list("status", flat=True)) == {"failed"}
    escalation = AuditEvent.objects.get(action="answer.web_escalation", object_id=str(answer.pk))
    assert escalation.details["status"] == "failed" and len(escalation.details["failures"]) == 2
