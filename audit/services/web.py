"""Audit-Web: re-verify weak claims against allow-listed web sources (docs/SPEC_NOTES.md#modes, docs/SPEC_NOTES.md#escalation-to-audit-web).

``web_verify_answer`` is the flow the API calls for Audit-Web (its result's ``answer`` is the
refreshed answer). For each claim that meets an escalation condition of docs/SPEC_NOTES.md#escalation-to-audit-web
(``audit.services.web_rule.web_escalation_reasons``), weakest first:

1. the providers (PubMed, arXiv, the page fetcher) are asked through
   :class:`~audit.services.web_client.WebCallClient` (the HTTP client, its own module),
   which enforces the workspace's residency switch and allow-list, serves and fills the response
   cache, and records every call as an ``ExternalCall`` (provider, URL, status, duration, cache
   hit, failure reason). Only the query derived from the claim text and public URLs the claim's
   sources name leave the system;
2. the claim is verified again by the pipeline's own methods (``audit.pipeline.audit.run_methods``)
   over its local evidence plus the web documents, and the answer revised with the web documents
   in its pool: steps 1 and 2 are the pipeline's web step (``audit.pipeline.web.step.web_step``),
   with this module's client as its way out;
3. in one transaction (a savepoint): web evidence rows (source_type ``web``, provenance: provider,
   query, URL, retrieval time, hash), the new machine verdict (``claim_machine_relabel``), the
   claim card's ``web`` note, one ``claim.web_verified`` event per claim (the escalation log),
   the run and the answer (mode Audit-Web, revised text when the revision loop changes it).

Failures never break the audit: a refused or failed call is recorded with its reason and the
claim keeps its local result; an unexpected error is logged and reported in the result.

The outcome is told honestly (``WebVerificationResult.status``): ``done`` when at least one call
brought a usable response (failures of the others are listed), ``failed`` when every call was
refused or failed (DNS, timeouts, HTTP errors, malformed bodies, the allow-list) or storing
failed. A failed pass adds the run warning ``WEB_VERIFICATION_FAILED`` (with the failures) and
leaves the answer and the run in mode Audit-Local: the mode says what verified the answer, and
nothing was verified on the web (the request for Audit-Web is kept in the ``answer.mode_resolved``
and ``answer.web_verified`` events and in the API response's ``mode_decision`` and ``web``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.models import Answer, Claim, Evidence, VerificationRun, Workspace
from audit.models.choices import SourceType
from audit.pipeline.job import VerificationJob
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit
from audit.pipeline.web import WebDocument, WebError, WebProvider, urls_in
from audit.pipeline.web.step import (
    WEB_STEP_OFFLINE,
    ClaimView,
    EvidenceItem,
    WebStep,
    allowed_urls,
    lookup,
    relevance,
    verdicts_with_web_evidence,
    web_step,
)
from audit.services.events import Actor, Event, actor_user, events_write
from audit.services.job import audit_job_build, audit_job_for_answer
from audit.services.labels import claim_machine_relabel_noted
from audit.services.revision import revision_apply
from audit.services.web_client import WebCallClient, web_providers
from audit.services.web_rule import web_escalation_reasons

logger = logging.getLogger(__name__)

SOURCE = "audit_web"  # actor label of the machine changes this flow makes
METHOD_NAME = "web_verification"  # listed among a claim card's verification methods
WEB_DONE, WEB_FAILED, WEB_SKIPPED = "done", "failed", "skipped"
WARNING_WEB_FAILED = "WEB_VERIFICATION_FAILED"  # run warning code when every web call failed
OFFLINE = WEB_STEP_OFFLINE  # the web step's job sets up no LLM client


@dataclass
class WebVerificationResult:
    """What one Audit-Web pass did to an answer (returned to the caller, also in the run)."""

    answer: Answer
    reasons: dict[str, list[str]] = field(
        default_factory=dict
    )  # escalated claim_id -> reasons (docs/SPEC_NOTES.md#escalation-to-audit-web)
    verified: list[str] = field(default_factory=list)  # claims re-verified with web evidence
    changed: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # claim_id -> {"from", "to"} machine labels
    evidence_added: int = 0
    calls: int = 0
    cache_hits: int = 0
    failures: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"claim_id", "provider", "reason", "detail"}
    revised: bool = False
    skipped: str = ""  # why nothing was attempted: "residency", "no_weak_claims"
    answered: int = 0  # calls that brought a usable response (fetched or from the cache)
    store_failed: bool = False  # the web results could not be stored: the local result stands

    @property
    def status(self) -> str:
        """``skipped`` (nothing attempted), ``failed`` (no call answered usably, or storing failed)
        or ``done`` (the web was consulted; failed calls, if any, are listed in ``failures``)."""
        if self.skipped:
            return WEB_SKIPPED
        if self.store_failed or not self.answered:
            return WEB_FAILED
        return WEB_DONE

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("answer")
        data["answer_id"] = self.answer.public_id
        data["status"] = self.status
        return data


# --- the flow ---------------------------------------------------------------------------------


def evidence_item_of(ev: Evidence) -> EvidenceItem:
    """The pipeline's view of a stored evidence row."""
    return EvidenceItem(
        rank=ev.rank,
        source_type=ev.source_type,
        source_id=ev.source_id,
        title=ev.title,
        uri=ev.uri,
        snippet=ev.snippet,
        hash=ev.hash,
        relevance=ev.relevance,
        entailment=ev.entailment,
        published=ev.published_at,
        provenance=dict(ev.provenance or {}),
        order=ev.pk or 0,
    )


def claim_view_of(claim: Claim) -> ClaimView:
    """The pipeline's view of a stored claim (its evidence prefetched)."""
    return ClaimView(
        claim_id=claim.claim_id,
        text=claim.text,
        confidence=claim.confidence,
        span_start=claim.span_start,
        draft=claim.draft(),
        evidence=tuple(evidence_item_of(ev) for ev in claim.evidence.all()),
    )


def web_verify_answer(
    *,
    answer: Answer,
    run: VerificationRun | None = None,
    actor: Actor = None,
    reasons: dict[str, list[str]] | None = None,
    providers: Sequence[WebProvider] | None = None,
) -> WebVerificationResult:
    """Re-verify a stored answer's escalated claims with web evidence (see the module docstring).

    ``reasons`` ({claim_id: [...]}) is the caller's escalation decision; when omitted it is
    computed here. ``providers`` replaces the configured providers (tests, custom sources).
    Network calls happen before any row is written; the writes share one savepoint. An audit
    request does not store its answer first: its web step is computed in the pipeline's one call
    (``audit.pipeline.submission``) and written with :func:`web_store` in the transaction that
    stores the answer.
    """
    # the strictness the audit had (the answer's domain); the web step's methods and revision run offline
    stored_job = audit_job_for_answer(answer, offline=OFFLINE)
    job = stored_job.verification
    rows = {c.claim_id: c for c in answer.claims.prefetch_related("evidence")}
    if reasons is None:
        reasons = web_escalation_reasons(rows.values(), job.thresholds).reasons
    client = WebCallClient(workspace=answer.workspace, answer=answer, claims=rows)
    step = web_step(
        job,
        [claim_view_of(c) for c in rows.values()],
        given=len(answer.contexts or []),
        reasons=reasons,
        client=client,
        providers=web_providers() if providers is None else providers,
        allowed_domains=answer.workspace.web_allowed_domains or (),
        options=stored_job.revision,
    )
    result = _result_of(step, answer)
    if step.skipped == "no_weak_claims":
        return result
    events: list[Event] = []
    with transaction.atomic():
        run = run or answer.runs.order_by("-started_at", "-id").first()
        _web_write(step, result, rows, run=run, actor=actor, events=events)
        events_write(events, actor=actor_user(actor), workspace=answer.workspace)
    return result


@dataclass(frozen=True)
class WebPass:
    """One Audit-Web pass computed before anything is written (the pipeline's web step), with the
    client that keeps its calls until the answer is stored."""

    step: WebStep
    client: WebCallClient


def _result_of(step: WebStep, answer: Answer) -> WebVerificationResult:
    """What the pass tells of ``answer`` before its rows are written."""
    result = WebVerificationResult(
        answer=answer,
        reasons=dict(step.reasons),
        failures=list(step.failures),
        calls=step.calls,
        cache_hits=step.cache_hits,
        answered=step.answered,
        skipped=step.skipped,
    )
    if step.error is not None:
        _store_failed(result, step.error)
    return result


def web_store(
    web: WebPass, *, answer: Answer, actor: Actor = None, events: list[Event]
) -> WebVerificationResult:
    """Write a web pass the pipeline computed for ``answer`` (call inside the transaction that
    stored it): its calls, then its evidence, verdicts, revision and run; its events are noted in
    ``events``."""
    result = _result_of(web.step, answer)
    rows = {c.claim_id: c for c in answer.claims.all()}
    if web.step.skipped != "no_weak_claims":
        run = answer.runs.order_by("-started_at", "-id").first()
        _web_write(web.step, result, rows, run=run, actor=actor, events=events)
    web.client.flush(answer=answer, claims=rows)  # its calls, whether or not its results could be stored
    return result


def _web_write(
    step: WebStep,
    result: WebVerificationResult,
    rows: dict[str, Claim],
    *,
    run: VerificationRun | None,
    actor: Actor,
    events: list[Event],
) -> WebVerificationResult:
    """Write the pass in a savepoint; its events join ``events`` only when it stored."""
    try:
        if step.error is not None:
            raise RuntimeError("the web pass could not be computed")
        noted: list[Event] = []
        with transaction.atomic():
            _store(result, step, rows, run=run, actor=actor, events=noted)
        events.extend(noted)
    except Exception as exc:  # storing must never break the audit: the local result stands
        if not result.store_failed:
            _store_failed(result, exc)
        result.answer.refresh_from_db()
        _record_failure_on_run(result, run)
    return result


def _store_failed(result: WebVerificationResult, exc: Exception) -> None:
    logger.error("storing web verification failed", exc_info=exc)
    result.failures.append(
        {
            "claim_id": "",
            "provider": "",
            "reason": "error",
            "detail": f"storing failed: {type(exc).__name__}: {exc}"[:300],
        }
    )
    result.verified, result.changed, result.evidence_added, result.revised = [], {}, 0, False
    result.store_failed = True


def _store(
    result: WebVerificationResult,
    step: WebStep,
    rows: dict[str, Claim],
    *,
    run: VerificationRun | None,
    actor: Actor,
    events: list[Event],
) -> None:
    answer = result.answer
    system = "" if actor else SOURCE  # the user's events when one asked, else the web step's own
    by_claim = {
        claim.claim_id: (docs, verdict) for (claim, docs), verdict in zip(step.with_docs, step.verdicts)
    }
    for view, docs in step.found:
        claim = rows.get(view.claim_id)
        if claim is None:
            raise RuntimeError(f"claim {view.claim_id} is not stored")
        if claim.claim_id not in by_claim:
            details = {
                "reasons": result.reasons.get(claim.claim_id, []),
                "documents": 0,
                "outcome": "no web evidence: local result kept",
                "failures": [f for f in result.failures if f["claim_id"] == claim.claim_id],
            }
            events.append(Event("claim.web_verified", claim, details, system=system))
            continue
        docs, verdict = by_claim[claim.claim_id]
        _store_claim(result, claim, docs, verdict, step.relevance[claim.claim_id], system, events)
    run = run or answer.runs.order_by("-started_at", "-id").first()
    outcome = step.revision  # without web evidence the Audit-Local result (and its revision) stands
    if outcome is not None:
        # the revision loop ran (the pipeline's web step) over the answer as received with the web documents in
        # its pool (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop); the revision service
        # stores it, and the run's earlier (Audit-Local) revision history is kept in front of it
        if run is None:
            raise RuntimeError("the answer has no run to store its revision on")
        prior = list(run.revision_history or [])
        revision_apply(answer=answer, run=run, outcome=outcome, events=events)
        run.revision_history = [*prior, *run.revision_history]
        result.revised = outcome.revised
    if result.skipped != "residency":
        _update_run_and_answer(result, run)
    events.append(Event("answer.web_verified", answer, result.as_dict(), system=system))


# long: a claim's web rows, new verdict, card note and event are written together under its row lock
def _store_claim(
    result: WebVerificationResult,
    claim: Claim,
    docs: list[WebDocument],
    verdict: ClaimVerdict,
    scores: dict[str, float],  # each document's retrieval score for the claim (the web step's)
    system: str,  # the event's system: "" when a user asked
    events: list[Event],
) -> None:
    """Write a claim's web evidence and new verdict, its card note and its escalation-log event.

    The claim row is locked and read again (``select_for_update``), so two passes over the same
    answer write one after the other and each builds on what the other stored, not on the copy
    read before the network calls; a web source already linked to the claim is not linked again.
    """
    claim = Claim.objects.select_for_update().select_related("answer__workspace").get(pk=claim.pk)
    linked = Evidence.objects.filter(claim=claim)
    known = set(linked.filter(source_type=SourceType.WEB).values_list("source_id", flat=True))
    next_rank = max(linked.values_list("rank", flat=True), default=-1) + 1
    by_passage = {hit.passage.id: hit for hit in verdict.evidence}
    reasons = result.reasons.get(claim.claim_id, [])
    for offset, doc in enumerate(d for d in docs if d.source_id[:200] not in known):
        passage = doc.as_passage()
        hit = by_passage.get(passage.id)
        evidence = Evidence(
            claim=claim,
            rank=next_rank + offset,
            source_type=SourceType.WEB,
            source_id=doc.source_id[:200],
            title=doc.title[:500],
            uri=doc.url[:2000],
            snippet=passage.text,
            hash=doc.hash,
            relevance=min(max(hit.relevance if hit else scores[doc.source_id], 0.0), 1.0),
            entailment=min(max(hit.entailment if hit else 0.0, 0.0), 1.0),
            published_at=doc.published,
            retrieved_at=doc.retrieved_at,
            provenance={**doc.provenance(), "method": METHOD_NAME, "escalation_reasons": reasons},
        )
        evidence.full_clean()
        evidence.save()
        result.evidence_added += 1
    before = claim.machine_label
    changed = claim_machine_relabel_noted(
        claim=claim,
        label=verdict.label,
        confidence=verdict.confidence,
        verdict=verdict.verdict,
        source=SOURCE,
        reason="re-verified with web evidence: " + ", ".join(reasons),
        events=events,
    )
    if changed:
        result.changed[claim.claim_id] = {"from": before, "to": verdict.label}
    web_note = {
        "reasons": reasons,
        "providers": sorted({d.provider for d in docs}),
        "sources": [
            {"provider": d.provider, "source_id": d.source_id, "url": d.url, "hash": d.hash} for d in docs
        ],
        "query": docs[0].query if docs else "",
        "label_before": before,
        "label_after": verdict.label,
        "verified_at": timezone.now().isoformat(),
    }
    claim.metrics = {**(claim.metrics or {}), **verdict.metrics, "external_provenance": True}
    claim.methods = list(dict.fromkeys([*(claim.methods or []), *verdict.method_names, METHOD_NAME]))
    claim.method_results = {
        **(claim.method_results or {}),
        **{m.method: asdict(m) for m in verdict.methods},
        "web": web_note,
    }
    claim.risk_flags = sorted(set(verdict.risk_flags))
    claim.full_clean(validate_unique=False)
    claim.save(update_fields=["metrics", "methods", "method_results", "risk_flags"])
    result.verified.append(claim.claim_id)
    details = {
        **web_note,
        "documents": len(docs),
        "outcome": "re-verified with web evidence",
        "failures": [f for f in result.failures if f["claim_id"] == claim.claim_id],
    }
    events.append(Event("claim.web_verified", claim, details, system=system))


def _failure_warning(result: WebVerificationResult) -> dict[str, Any]:
    reasons = sorted({f["reason"] for f in result.failures})
    return {
        "code": WARNING_WEB_FAILED,
        "message": (
            f"web verification failed: none of {result.calls} web calls brought a usable response"
            if not result.store_failed
            else "web verification failed: its results could not be stored"
        )
        + (f" ({', '.join(reasons)})" if reasons else "")
        + "; the local result stands",
        "details": result.failures,
    }


def _call_warnings(result: WebVerificationResult) -> list[dict[str, Any]]:
    """One run warning per failed web call, keyed ``code`` like every other run warning."""
    return [
        {
            "code": "web_call_failed",
            "message": f"web call to {f['provider']} failed ({f['reason']})",
            **f,
        }
        for f in result.failures
    ]


def _record_failure_on_run(result: WebVerificationResult, run: VerificationRun | None) -> None:
    """Add the WEB_VERIFICATION_FAILED warning to the run (outside the failed savepoint)."""
    run = run or result.answer.runs.order_by("-started_at", "-id").first()
    if run is None:
        return
    stored = VerificationRun.objects.filter(pk=run.pk).values_list("warnings", flat=True).first() or []
    VerificationRun.objects.filter(pk=run.pk).update(warnings=[*stored, _failure_warning(result)])
    run.refresh_from_db()


def _update_run_and_answer(result: WebVerificationResult, run: VerificationRun | None) -> None:
    """Record the pass on the run; on success the answer and run become Audit-Web.

    A failed pass (no usable response) keeps mode Audit-Local and adds the WEB_VERIFICATION_FAILED
    warning instead: the mode names what verified the answer (see the module docstring).
    """
    answer = result.answer
    failed = result.status == WEB_FAILED
    if failed:
        if run is not None:
            run.warnings = [
                *(run.warnings or []),
                *_call_warnings(result),
                _failure_warning(result),
            ]
            run.revision_history = [*(run.revision_history or []), {"web_verification": result.as_dict()}]
            run.full_clean()
            run.save(update_fields=["warnings", "revision_history"])
        return
    answer.mode = constants.MODE_AUDIT_WEB
    answer.full_clean()
    answer.save(update_fields=["mode"])
    if run is None:
        return
    run.mode = constants.MODE_AUDIT_WEB
    run.methods = list(dict.fromkeys([*(run.methods or []), METHOD_NAME]))
    run.warnings = [*(run.warnings or []), *_call_warnings(result)]
    run.revision_history = [*(run.revision_history or []), {"web_verification": result.as_dict()}]
    run.full_clean()
    run.save(update_fields=["mode", "methods", "warnings", "revision_history"])


def web_verify_claim(
    *, workspace: Workspace, claim: ClaimDraft, job: VerificationJob | None = None
) -> ClaimVerdict | None:
    """Verify one claim against web evidence only (the nightly batch's web check).

    ``job`` is the verification job of the claim's answer (the nightly run's, at its domain's
    strictness); without one the workspace's plain job is built. Returns None when nothing was
    found or the workspace forbids external calls; calls are recorded without an answer. Nothing
    else is stored: the caller stores the verdict.
    """
    client = WebCallClient(workspace=workspace)
    urls = allowed_urls(urls_in(claim.text), workspace.web_allowed_domains or ())
    try:
        docs = lookup(claim.text, urls, client, web_providers(), [], claim.claim_id)
    except WebError:
        return None
    if not docs:
        return None
    hits = [EvidenceHit(passage=d.as_passage(), relevance=relevance(claim.text, d.text)) for d in docs]
    if job is None:
        job = audit_job_build(workspace, query="", answer_text="", offline=OFFLINE).verification
    return verdicts_with_web_evidence([(claim, hits)], job)[0]
