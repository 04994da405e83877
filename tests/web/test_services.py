"""Audit-Web flow (audit.services.web) against local PubMed/arXiv servers, with the real database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEvent, Claim, Evidence, ExternalCall, WebCacheEntry
from audit.pipeline.types import ClaimDraft
from audit.pipeline.web import WebProvider, build_providers
from audit.services.web import web_verify_answer, web_verify_claim
from audit.services.web_client import web_cache_purge
from tests.factories import in_regulated_domain

from .conftest import (
    ARXIV_PATH,
    KB_SECRET,
    PUBMED_PATH,
    STRONG_CLAIM,
    SUPPORTING_ABSTRACT,
    SUPPORTING_ARTICLE,
    WEAK_CLAIM,
    Reply,
    make_answer,
    serve_arxiv,
    serve_pubmed,
    stream_reply,
    xml_reply,
)

pytestmark = pytest.mark.django_db


def _calls(answer):
    return list(
        ExternalCall.objects.filter(answer=answer)
        .order_by("id")
        .values_list("provider", "status", "failure_reason")
    )


def _snapshot(answer):
    return [
        (c.claim_id, c.label, c.machine_label, c.confidence, c.evidence.count()) for c in answer.claims.all()
    ]


def test_it_reverifies_the_weak_claim_with_web_evidence_and_full_provenance(
    web_settings, web_workspace, web_server
):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)

    result = web_verify_answer(answer=answer)

    assert result.verified == ["c1"] and result.failures == [] and list(result.reasons) == ["c1"]
    weak = Claim.objects.get(answer=answer, claim_id="c1")
    [web] = weak.evidence.filter(source_type="web")
    assert (web.source_id, web.uri) == ("pmid:31415", "https://pubmed.ncbi.nlm.nih.gov/31415/")
    assert web.hash.startswith("sha256:") and web.snippet.startswith("NMDA receptors gate")
    provenance = web.provenance
    assert (
        provenance["provider"] == "pubmed" and provenance["url"] == web.uri and provenance["hash"] == web.hash
    )
    assert provenance["query"] == "long-term potentiation requires nmda receptor activation"
    assert provenance["retrieved_at"] and provenance["request_url"].startswith(web_server.url(PUBMED_PATH))
    assert weak.label == "SUPPORTED" and weak.confidence > 0.8, weak.method_results.get("entailment")
    assert weak.method_results["web"]["providers"] == ["pubmed"] and "web_verification" in weak.methods
    assert weak.metrics["external_provenance"] is True
    assert result.changed == {"c1": {"from": "NEI", "to": "SUPPORTED"}}
    strong = Claim.objects.get(answer=answer, claim_id="c2")
    assert strong.evidence.filter(source_type="web").count() == 0 and strong.confidence == 0.95
    assert _calls(answer) == [("pubmed", "ok", ""), ("pubmed", "ok", ""), ("arxiv", "ok", "")]
    answer.refresh_from_db()
    assert answer.mode == "audit-web" and "web_verification" in answer.runs.get().methods
    actions = set(AuditEvent.objects.filter(workspace=web_workspace).values_list("action", flat=True))
    assert {"claim.web_verified", "answer.web_verified", "claim.label_drifted"} <= actions


def test_it_stores_the_web_verdict_over_what_another_pass_wrote_meanwhile(
    web_settings, web_workspace, web_server, settings
):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)

    class AnotherPass(WebProvider):
        """Not a source: while the web is asked, another pass stores its result on the claim."""

        name = "another-pass"

        def find(self, lookup, *, client):
            claim = Claim.objects.get(answer=answer, claim_id="c1")
            Claim.objects.filter(pk=claim.pk).update(
                method_results={**claim.method_results, "nightly": {"ok": True}},
                metrics={**claim.metrics, "nightly_checked": 1.0},
            )
            return []

    providers = [
        AnotherPass(),
        *build_providers(
            pubmed_base_url=settings.THEORIA["PUBMED_BASE_URL"],
            arxiv_base_url=settings.THEORIA["ARXIV_BASE_URL"],
        ),
    ]
    result = web_verify_answer(answer=answer, providers=providers)

    assert result.verified == ["c1"]
    weak = Claim.objects.get(answer=answer, claim_id="c1")
    assert weak.method_results["nightly"] == {"ok": True} and weak.metrics["nightly_checked"] == 1.0
    assert (
        weak.method_results["web"]["providers"] == ["pubmed"] and weak.metrics["external_provenance"] is True
    )


def test_it_sends_only_the_query_derived_from_the_claim(web_settings, web_workspace, web_server):
    serve_pubmed(web_server, [])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)
    web_verify_answer(answer=answer)
    sent = " ".join(f"{seen.path} {seen.query} {seen.headers}" for seen in web_server.requests).lower()
    assert "nmda" in sent
    for private in ("confidential", "memo", "7731", "john", "doe", "patient", "hippocampus", "kb_chunk"):
        assert private not in sent, private


def test_it_serves_a_repeated_lookup_from_the_cache_until_it_expires(web_settings, web_workspace, web_server):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    web_verify_answer(answer=make_answer(web_workspace))
    assert len(web_server.requests) == 3 and WebCacheEntry.objects.count() == 3

    second = make_answer(web_workspace)
    result = web_verify_answer(answer=second)
    assert len(web_server.requests) == 3, "a cached response must not reach the server"
    assert (result.calls, result.cache_hits) == (3, 3)
    assert {c.status for c in ExternalCall.objects.filter(answer=second)} == {"cached"}
    assert all(c.cache_hit for c in ExternalCall.objects.filter(answer=second))
    assert Claim.objects.get(answer=second, claim_id="c1").label == "SUPPORTED"

    WebCacheEntry.objects.update(
        expires_at=timezone.now() - timedelta(seconds=1), fetched_at=timezone.now() - timedelta(days=2)
    )
    web_verify_answer(answer=make_answer(web_workspace))
    assert len(web_server.requests) == 6
    assert web_cache_purge() == 0  # the expired rows were refreshed by the calls


def test_it_purges_only_expired_cache_entries(web_settings, web_workspace, web_server):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    web_verify_answer(answer=make_answer(web_workspace))
    WebCacheEntry.objects.filter(provider="arxiv").update(
        fetched_at=timezone.now() - timedelta(days=3), expires_at=timezone.now() - timedelta(days=2)
    )
    assert web_cache_purge() == 1 and WebCacheEntry.objects.count() == 2


def test_it_makes_no_call_under_the_residency_switch_and_records_the_refusal(
    web_settings, web_workspace, web_server
):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    web_workspace.allow_external_calls = False
    web_workspace.save(update_fields=["allow_external_calls"])
    answer = make_answer(web_workspace)
    before = _snapshot(answer)

    result = web_verify_answer(answer=answer)

    assert web_server.requests == []
    assert result.skipped == "residency" and result.verified == []
    assert _calls(answer) == [("pubmed", "refused", "residency")]
    assert _snapshot(answer) == before
    answer.refresh_from_db()
    assert answer.mode == "audit-local"
    assert AuditEvent.objects.filter(action="answer.web_verified", object_id=str(answer.pk)).exists()


def test_it_records_allow_list_refusals_and_keeps_the_local_result(web_settings, web_workspace, web_server):
    web_workspace.web_allowed_domains = ["eutils.ncbi.nlm.nih.gov", "export.arxiv.org"]
    web_workspace.save(update_fields=["web_allowed_domains"])
    answer = make_answer(web_workspace)
    before = _snapshot(answer)

    result = web_verify_answer(answer=answer)

    assert web_server.requests == []
    assert _calls(answer) == [("pubmed", "refused", "domain"), ("arxiv", "refused", "domain")]
    assert [f["reason"] for f in result.failures] == ["domain", "domain"]
    assert _snapshot(answer) == before
    event = AuditEvent.objects.get(action="claim.web_verified")
    assert (
        event.details["outcome"] == "no web evidence: local result kept"
        and len(event.details["failures"]) == 2
    )


def test_it_refuses_a_redirect_to_a_disallowed_host(web_settings, web_workspace, web_server):
    web_server.route(
        PUBMED_PATH + "esearch.fcgi", Reply(302, {"Location": web_server.url("/steal", host="localhost")})
    )
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)
    web_verify_answer(answer=answer)
    assert "/steal" not in web_server.paths()
    call = ExternalCall.objects.get(answer=answer, provider="pubmed")
    assert (call.status, call.failure_reason) == ("refused", "domain") and "localhost" in call.failure_detail


def test_it_refuses_a_host_resolving_to_a_private_address(web_settings, web_workspace, web_server):
    web_settings.THEORIA = {
        **web_settings.THEORIA,
        "WEB_ALLOW_PRIVATE_ADDRESSES": False,
        "PUBMED_BASE_URL": web_server.url(PUBMED_PATH, host="localhost"),
    }
    web_workspace.web_allowed_domains = ["localhost", "127.0.0.1"]
    web_workspace.save(update_fields=["web_allowed_domains"])
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    answer = make_answer(web_workspace)
    result = web_verify_answer(answer=answer)
    assert web_server.requests == []
    assert _calls(answer) == [
        ("pubmed", "refused", "private_address"),
        ("arxiv", "refused", "private_address"),
    ]
    assert Claim.objects.get(answer=answer, claim_id="c1").label == "NEI" and result.verified == []


def test_it_records_a_too_large_body_malformed_xml_and_a_timeout_and_still_completes(
    web_settings, web_workspace, web_server
):
    web_server.route(PUBMED_PATH + "esearch.fcgi", stream_reply(50 * 1024 * 1024))
    web_server.route(ARXIV_PATH, xml_reply("<feed xmlns='http://www.w3.org/2005/Atom'><entry><title>cut"))
    answer = make_answer(web_workspace)
    before = _snapshot(answer)

    result = web_verify_answer(answer=answer)

    assert _calls(answer) == [("pubmed", "failed", "too_large"), ("arxiv", "failed", "malformed")]
    assert _snapshot(answer) == before and result.verified == []
    assert ExternalCall.objects.get(provider="pubmed").duration_ms < 2000

    web_server.route(ARXIV_PATH, Reply(200, {"Content-Type": "application/atom+xml"}, b"<feed/>", delay_s=5))
    web_settings.THEORIA = {**web_settings.THEORIA, "WEB_TIMEOUT_S": 0.4}
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    later = make_answer(web_workspace)
    result = web_verify_answer(answer=later)
    assert _calls(later) == [("pubmed", "ok", ""), ("pubmed", "ok", ""), ("arxiv", "failed", "timeout")]
    assert result.verified == ["c1"], "the other provider's evidence is still used"
    assert Claim.objects.get(answer=later, claim_id="c1").label == "SUPPORTED"


def test_it_fetches_an_allow_listed_page_the_claim_sources_name_and_no_other(
    web_settings, web_workspace, web_server
):
    serve_pubmed(web_server, [])
    serve_arxiv(web_server, [])
    web_server.route(
        "/paper",
        Reply(
            200,
            {"Content-Type": "text/html"},
            f"<html><title>LTP</title><p>{SUPPORTING_ABSTRACT}</p></html>".encode(),
        ),
    )
    answer = make_answer(web_workspace, local_uri=web_server.url("/paper"))
    web_verify_answer(answer=answer)
    assert "/paper" in web_server.paths()
    [page] = Evidence.objects.filter(claim__answer=answer, source_type="web")
    assert page.provenance["provider"] == "page" and page.uri == web_server.url("/paper")

    intranet = make_answer(web_workspace, local_uri="https://wiki.internal.example/memo")
    web_verify_answer(answer=intranet)
    assert not ExternalCall.objects.filter(answer=intranet, provider="page").exists()


def test_it_leaves_an_answer_without_weak_claims_alone(web_settings, web_workspace, web_server):
    answer = make_answer(web_workspace)
    Claim.objects.filter(answer=answer, claim_id="c1").update(
        label="SUPPORTED", machine_label="SUPPORTED", verdict="supported", confidence=0.9
    )
    Evidence.objects.filter(claim__answer=answer, claim__claim_id="c1").update(entailment=0.9)
    result = web_verify_answer(answer=answer)
    assert (
        result.skipped == "no_weak_claims" and web_server.requests == [] and ExternalCall.objects.count() == 0
    )


def test_its_result_carries_the_refreshed_answer(web_settings, web_workspace, web_server):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)
    returned = web_verify_answer(answer=answer, reasons={"c1": ["audit_score_below_threshold"]}).answer
    assert returned.pk == answer.pk and returned.mode == "audit-web"


def test_it_checks_one_claim_on_the_web_for_the_nightly_batch(web_settings, web_workspace, web_server):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    verdict = web_verify_claim(
        workspace=web_workspace, claim=ClaimDraft("c1", WEAK_CLAIM, (0, len(WEAK_CLAIM)))
    )
    assert verdict.label == "SUPPORTED"
    assert ExternalCall.objects.filter(answer=None, status="ok").count() == 3
    web_workspace.allow_external_calls = False
    assert web_verify_claim(workspace=web_workspace, claim=ClaimDraft("c1", STRONG_CLAIM, (0, 5))) is None


def test_it_never_sends_kb_text_even_when_the_snippet_is_the_only_local_evidence(
    web_settings, web_workspace, web_server
):
    serve_pubmed(web_server, [])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace, weak_text="Cohort B showed improved recall after treatment.")
    web_verify_answer(answer=answer)
    sent = " ".join(str(seen.query) for seen in web_server.requests).lower()
    assert "cohort" in sent and KB_SECRET.split()[2].lower() not in sent


def test_it_declares_a_daily_cache_purge_that_runs_the_service(web_workspace):
    from django.core.management import call_command
    from django_q.models import Schedule

    from audit import tasks

    call_command("setup_schedules")
    assert Schedule.objects.get(name="audit.web_cache_purge").func == "audit.tasks.web_cache_purge"
    now = timezone.now()
    for key, expires in (("a" * 64, now - timedelta(hours=1)), ("b" * 64, now + timedelta(hours=1))):
        WebCacheEntry.objects.create(
            key=key,
            provider="pubmed",
            url="u",
            final_url="u",
            http_status=200,
            content_type="text/xml",
            body=b"<x/>",
            fetched_at=now - timedelta(days=1),
            expires_at=expires,
        )
    assert tasks.web_cache_purge() == 1
    assert list(WebCacheEntry.objects.values_list("key", flat=True)) == ["b" * 64]


def test_it_shows_the_call_log_read_only_in_the_admin(
    web_settings, web_workspace, web_server, client, admin_user_obj
):
    web_workspace.allow_external_calls = False
    web_workspace.save(update_fields=["allow_external_calls"])
    web_verify_answer(answer=make_answer(web_workspace))
    client.force_login(admin_user_obj)
    page = client.get("/admin/audit/externalcall/")
    assert page.status_code == 200 and b"residency" in page.content.lower()
    call = ExternalCall.objects.get()
    assert client.post(f"/admin/audit/externalcall/{call.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ExternalCall.objects.filter(pk=call.pk).exists()


def test_it_marks_a_claim_web_evidence_refutes_and_does_not_rewrite_it_into_another_fact(
    web_settings, web_workspace, web_server
):
    wrong = "Long-term potentiation was first described in 1995 by Smith."
    serve_pubmed(
        web_server,
        [
            {
                "pmid": "27182",
                "title": "History of synaptic plasticity",
                "abstract": "Long-term potentiation was first described in 1973 by Bliss and Lomo.",
                "year": "2024",
            }
        ],
    )
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace, weak_text=wrong)

    result = web_verify_answer(answer=answer)

    claim = Claim.objects.get(answer=answer, claim_id="c1")
    assert claim.machine_label == "REFUTED" and claim.confidence < 0.5
    answer.refresh_from_db()
    assert result.revised and answer.original_text.startswith(wrong)
    # "in 1973 by Smith" is not what the source says either: the name is corrected too, and the
    # corrected sentence stands only because the judge finds it SUPPORTED; no internal id reaches the text
    assert "first described in 1973 by Bliss [" in answer.text and STRONG_CLAIM.rstrip(".") in answer.text
    assert "Smith" not in answer.text and "[cite:" not in answer.text
    assert claim.revision["strategy"] == "correct" and claim.text == wrong
    assert answer.revisions and answer.runs.get().revision_history[-1]["web_verification"]["revised"] is True
    assert AuditEvent.objects.filter(action="answer.revised", object_id=str(answer.pk)).exists()


def test_it_links_a_web_source_once_when_a_claim_is_verified_again(web_settings, web_workspace, web_server):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    answer = make_answer(web_workspace)
    web_verify_answer(answer=answer)
    again = web_verify_answer(answer=answer, reasons={"c1": ["manual re-check"]})
    assert again.verified == ["c1"] and again.evidence_added == 0 and again.cache_hits == 3
    assert Evidence.objects.filter(claim__answer=answer, source_type="web").count() == 1


def test_it_reports_a_failed_pass_when_no_host_resolves_and_keeps_the_answer_audit_local(
    web_settings, web_workspace
):
    from audit.models import VerificationRun

    web_settings.THEORIA = {
        **web_settings.THEORIA,
        "PUBMED_BASE_URL": "http://pubmed.theoria-test.invalid/eutils/",
        "ARXIV_BASE_URL": "http://arxiv.theoria-test.invalid/api/query",
    }
    web_workspace.web_allowed_domains = ["theoria-test.invalid"]
    web_workspace.save(update_fields=["web_allowed_domains"])
    answer = make_answer(web_workspace)
    before = _snapshot(answer)

    result = web_verify_answer(answer=answer)

    assert result.status == "failed" and result.answered == 0 and result.verified == []
    assert {c[2] for c in _calls(answer)} == {"dns"} and {f["reason"] for f in result.failures} == {"dns"}
    assert _snapshot(answer) == before
    answer.refresh_from_db()
    run = VerificationRun.objects.get(answer=answer)
    assert answer.mode == run.mode == "audit-local" and "web_verification" not in run.methods
    [warning] = [w for w in run.warnings if w.get("code") == "WEB_VERIFICATION_FAILED"]
    assert "dns" in warning["message"] and len(warning["details"]) == 2
    assert run.revision_history[-1]["web_verification"]["status"] == "failed"
    event = AuditEvent.objects.get(action="answer.web_verified", object_id=str(answer.pk))
    assert event.details["status"] == "failed"


def test_it_reports_a_done_pass_when_one_provider_answers_and_lists_the_other_failure(
    web_settings, web_workspace, web_server
):
    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    web_server.route(ARXIV_PATH, Reply(503, {"Content-Type": "text/plain"}, b"busy"))
    answer = make_answer(web_workspace)

    result = web_verify_answer(answer=answer)

    assert result.status == "done" and result.verified == ["c1"]
    assert [(f["provider"], f["reason"]) for f in result.failures] == [("arxiv", "http_status")]
    answer.refresh_from_db()
    assert answer.mode == "audit-web"
    assert not any(w.get("code") == "WEB_VERIFICATION_FAILED" for w in answer.runs.get().warnings)


def test_it_counts_a_response_rejected_as_malformed_as_failed(web_settings, web_workspace, web_server):
    web_server.route(PUBMED_PATH + "esearch.fcgi", xml_reply("<eSearchResult><IdList><Id>1"))
    web_server.route(ARXIV_PATH, xml_reply("<feed xmlns='http://www.w3.org/2005/Atom'><entry><title>cut"))
    answer = make_answer(web_workspace)

    result = web_verify_answer(answer=answer)

    assert {s for _, s, _ in _calls(answer)} == {"failed"}
    assert result.status == "failed" and result.answered == 0
    answer.refresh_from_db()
    assert answer.mode == "audit-local"


def test_its_web_step_judges_a_regulated_answer_at_the_strictness_its_audit_had(
    web_settings, web_workspace, web_server, monkeypatch
):
    """An answer of a regulated domain is audited at the regulated operating point; its web step
    re-verifies at that point too, not at the workspace's plain one (the same claim, the same cut)."""
    from audit.services import web as web_service

    answer = in_regulated_domain(make_answer(web_workspace))
    seen = []
    real = web_service.web_escalation_reasons
    monkeypatch.setattr(
        web_service,
        "web_escalation_reasons",
        lambda claims, thresholds: seen.append(thresholds.strictness) or real(claims, thresholds),
    )
    serve_pubmed(web_server, [])
    serve_arxiv(web_server, [])
    web_verify_answer(answer=answer)
    assert seen == ["regulated"]


def test_an_audit_requests_web_step_is_computed_before_its_answer_is_stored(
    web_settings, web_workspace, web_server
):
    """Compute first, write once: the web calls, methods and revision of a request run in the
    pipeline's one call, before its answer exists (no answer, no call row yet); the one
    transaction then writes both."""
    from django.db import transaction

    from audit import constants
    from audit.models import Answer
    from audit.services.audit import audit_store
    from audit.services.events import Event, events_write
    from audit.services.job import audit_job_build
    from audit.services.modes import ModeDecision
    from audit.services.submission_compute import submission_compute
    from audit.services.web import web_store

    serve_pubmed(web_server, [SUPPORTING_ARTICLE])
    serve_arxiv(web_server, [])
    text = f"{WEAK_CLAIM} {STRONG_CLAIM} [1]"
    job = audit_job_build(
        web_workspace,
        query="What does LTP require?",
        answer_text=text,
        contexts=[{"id": "kb1", "title": "Anatomy", "text": STRONG_CLAIM}],
        offline="a test of the web step",
    )
    decision = ModeDecision(mode=constants.MODE_AUDIT_WEB, source="request")
    computed = submission_compute(job, decision, answer=text, verify=True)
    verified = computed.verified
    assert verified is not None and verified.web_pass is not None
    web, rows = verified.web_pass, verified.evidence
    reasons = web.step.reasons
    weak = [
        v.claim.claim_id for v in verified.computed.result.claims if "potentiation" in v.claim.text.lower()
    ]
    assert weak and set(weak) <= set(reasons) and web.step.calls > 0 and web_server.requests
    assert not Answer.objects.exists() and not ExternalCall.objects.exists()

    events: list[Event] = []
    with transaction.atomic():
        answer = audit_store(verified.computed, computed.job, evidence=rows, events=events)
        result = web_store(web, answer=answer, events=events)
        events_write(events, actor=None, workspace=web_workspace)

    assert result.status == "done" and result.verified == list(reasons)
    assert ExternalCall.objects.filter(answer=answer).count() == result.calls
    assert set(ExternalCall.objects.filter(answer=answer).values_list("claim__claim_id", flat=True)) == set(
        reasons
    )
    assert Evidence.objects.filter(claim__answer=answer, source_type="web").exists()
