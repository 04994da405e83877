"""theoria_client.Theoria and AsyncTheoria over real HTTP: audits, reads, errors, retries."""

from __future__ import annotations

import asyncio
import csv
import io
import time

import pytest

from tests.client.conftest import ANSWER, CONTEXTS, QUERY

# transaction: the live server reads what the test writes (role groups: UserFactory makes them again)
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_audits_an_answer_and_returns_typed_claim_cards(theoria):
    from theoria_client import AuditResult, ClaimCard

    result = theoria.audit(QUERY, ANSWER, CONTEXTS, mode="audit-local", domain="neuroscience")

    assert isinstance(result, AuditResult) and result.verified and result.mode == "audit-local"
    assert [type(c) for c in result.claims] == [ClaimCard, ClaimCard]
    supported, refuted = result.claims
    assert supported.label == "SUPPORTED" and supported.evidence[0].source_id == "kb1"
    assert refuted.label == "REFUTED" and "1985" in refuted.text
    assert 0.0 <= result.faithfulness < 1.0 and result.unsupported == [refuted]
    assert result.escalations and result.escalations[0].ticket.startswith("COMP-ESC-")
    assert result.raw["mode_decision"]["source"] == "request"  # fields not typed stay in raw


def test_it_replays_an_audit_sent_again_with_its_idempotency_key(theoria):
    from theoria_client import Conflict

    first = theoria.audit(QUERY, ANSWER, CONTEXTS, mode="normal", idempotency_key="retry-1")
    again = theoria.audit(QUERY, ANSWER, CONTEXTS, mode="normal", idempotency_key="retry-1")

    assert again.replayed and not first.replayed and again.answer_id == first.answer_id
    assert not first.verified and first.audit is None and first.unsupported == []  # Normal: stored only
    with pytest.raises(Conflict) as refused:
        theoria.audit(QUERY, "Another answer.", CONTEXTS, mode="normal", idempotency_key="retry-1")
    assert refused.value.status_code == 409 and refused.value.code


def test_it_fetches_the_cards_the_case_the_run_and_the_exports(theoria, live_server, tokens):
    from theoria_client import Theoria

    result = theoria.audit(QUERY, ANSWER, CONTEXTS, mode="audit-local")
    refuted = result.unsupported[0]

    with Theoria(live_server.url, tokens["analyst"]) as analyst:
        assert analyst.answer(result.answer_id).claims == result.claims
        assert analyst.claim(result.answer_id, refuted.claim_id) == refuted
        page = analyst.claims(label=["REFUTED", "NEI"], answer=result.answer_id)
        assert page.count == 1 and list(page) == [refuted]
        assert list(analyst.iter_claims(answer=result.answer_id, page_size=1)) == result.claims
        ticket = result.escalations[0].ticket
        case = analyst.case(ticket)
        assert case.ticket == ticket and case.status and case.tier == 1
        assert ticket in [c.ticket for c in analyst.cases(open="true")]
        run = analyst.run(result.audit.run_id)
        assert run.answer_id == result.answer_id and run.faithfulness == result.faithfulness
        assert analyst.wait_for_deep_checks(result, timeout=5) == run  # no deep check: at once
        exported = analyst.export_claim_cards(answer=result.answer_id)
        assert [c["claim_id"] for c in exported] == [c.claim_id for c in result.claims]
        csv_text = analyst.export_claim_cards("csv", answer=result.answer_id)
        assert [r["claim_id"] for r in csv.DictReader(io.StringIO(csv_text))] == ["c1", "c2"]


def test_it_raises_the_apis_field_errors_as_exceptions(theoria, live_server):
    from theoria_client import AuthenticationFailed, BadRequest, NotFound, Theoria

    with pytest.raises(BadRequest) as bad:
        theoria.audit(QUERY, "", [{"id": "kb1"}], mode="fast")
    with pytest.raises(NotFound) as missing:
        theoria.answer("a-2026-01-01-00000000")
    with pytest.raises(AuthenticationFailed), Theoria(live_server.url, "not-a-token") as stranger:
        stranger.claims()

    assert bad.value.status_code == 400
    assert set(bad.value.errors) == {"answer", "mode", "contexts[0].text"}
    assert "contexts[0].text" in bad.value.detail and "400 POST" in str(bad.value)
    assert missing.value.status_code == 404 and missing.value.errors == {}


def test_it_waits_out_a_429_as_its_retry_after_says(theoria, live_server, tokens, settings):
    from theoria_client import RateLimited, Theoria

    settings.THEORIA = {**settings.THEORIA, "THROTTLE_AUDITS": "1/10sec"}  # wide enough for a loaded machine
    theoria.audit(QUERY, ANSWER, CONTEXTS, mode="normal")
    impatient = Theoria(live_server.url, tokens["submitter"], max_retries=0)
    with impatient, pytest.raises(RateLimited) as limited:
        impatient.audit(QUERY, ANSWER, CONTEXTS, mode="normal")
    assert 0 < limited.value.retry_after <= 10

    started = time.monotonic()
    waited = theoria.audit(QUERY, ANSWER, CONTEXTS, mode="normal")
    assert waited.answer_id and not waited.replayed
    assert time.monotonic() - started >= 0.5  # it slept on the server's word, then got through


def test_the_async_client_answers_as_the_sync_one(live_server, tokens):
    from theoria_client import AsyncTheoria, BadRequest

    async def scenario():
        async with AsyncTheoria(live_server.url, tokens["submitter"]) as theoria:
            result = await theoria.audit(QUERY, ANSWER, CONTEXTS, mode="audit-local", idempotency_key="a-1")
            again = await theoria.audit(QUERY, ANSWER, CONTEXTS, mode="audit-local", idempotency_key="a-1")
            card = await theoria.claim(result.answer_id, result.claims[1].claim_id)
            cards = [c async for c in theoria.iter_claims(answer=result.answer_id)]
            run = await theoria.wait_for_deep_checks(result)
            try:
                await theoria.audit(QUERY, "", CONTEXTS)
            except BadRequest as error:
                return result, again, card, cards, run, error
        raise AssertionError("a blank answer was accepted")

    result, again, card, cards, run, error = asyncio.run(scenario())
    assert [c.label for c in result.claims] == ["SUPPORTED", "REFUTED"]
    assert again.replayed and again.answer_id == result.answer_id
    assert card == result.claims[1] and cards == result.claims and run.id == result.audit.run_id
    assert list(error.errors) == ["answer"]
