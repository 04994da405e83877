"""Audit-Web end to end: POST /api/v1/audits in mode audit-web, and the pages that show web provenance."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from audit.models import Claim, Evidence, ExternalCall
from audit.services.web import web_verify_answer

from .conftest import STRONG_CLAIM, SUPPORTING_ARTICLE, WEAK_CLAIM, make_answer, serve_arxiv, serve_pubmed

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def test_it_reverifies_weak_claims_of_an_audit_web_request_and_returns_cards_with_web_provenance(
        web_settings, web_workspace, web_server, submitter):
    pytest.importorskip("audit.services.audit", reason="needs the pipeline's audit_answer service (issue 3)")
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    body = {"query": "What does LTP require?", "mode": "audit-web", "domain": "neuroscience",
            "answer": f"{WEAK_CLAIM} {STRONG_CLAIM} [1]",
            "contexts": [{"id": "kb1", "title": "Anatomy", "text": STRONG_CLAIM}]}

    response = _client(submitter).post("/api/v1/audits", body, format="json")

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["mode"] == "audit-web" and data["web"]["status"] == "done"
    cards = {card["text"]: card for card in data["claims"]}
    weak = next(card for text, card in cards.items() if "potentiation" in text.lower())
    web = [ev for ev in weak["evidence"] if ev["source_type"] == "web"]
    assert web and web[0]["uri"] == "https://pubmed.ncbi.nlm.nih.gov/31415/" and web[0]["hash"].startswith("sha256:")
    assert weak["mode"] == "Audit-Web" and weak["label"] == "SUPPORTED"
    stored = Evidence.objects.get(claim__answer__public_id=data["answer_id"], source_type="web")
    assert stored.provenance["provider"] == "pubmed" and stored.provenance["query"]
    assert ExternalCall.objects.filter(answer__public_id=data["answer_id"], status="ok").count() == 3


def test_it_completes_an_audit_web_request_with_the_local_result_when_the_web_fails(
        web_settings, web_workspace, web_server, submitter):
    pytest.importorskip("audit.services.audit", reason="needs the pipeline's audit_answer service (issue 3)")
    web_workspace.web_allowed_domains = ["export.arxiv.org"]  # the local providers are not allowed
    web_workspace.save(update_fields=["web_allowed_domains"])
    body = {"query": "What does LTP require?", "mode": "audit-web", "answer": f"{WEAK_CLAIM} {STRONG_CLAIM}",
            "contexts": [{"id": "kb1", "title": "Anatomy", "text": STRONG_CLAIM}]}

    response = _client(submitter).post("/api/v1/audits", body, format="json")

    assert response.status_code == 201, response.content
    assert web_server.requests == []
    refused = ExternalCall.objects.filter(answer__public_id=response.json()["answer_id"])
    assert refused.exists() and {c.failure_reason for c in refused} == {"domain"}
    assert all(ev["source_type"] != "web" for card in response.json()["claims"] for ev in card["evidence"])


def test_it_shows_web_provenance_on_the_claim_page_and_the_mode_on_the_answer_page(
        web_settings, web_workspace, web_server, client, analyst):
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
