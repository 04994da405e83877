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
   over its local evidence plus the web documents;
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
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.models import Answer, Claim, Evidence, VerificationRun, Workspace
from audit.models.choices import SourceType
from audit.pipeline.job import VerificationJob, job_context
from audit.pipeline.revision import RevisionOptions, RevisionOutcome, revise_job
from audit.pipeline.text import content_stems
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, Passage
from audit.pipeline.web import (
    FailureReason,
    WebDocument,
    WebError,
    WebLookup,
    WebProvider,
    build_providers,
    claim_query,
    urls_in,
)
from audit.pipeline.web.fetch import host_allowed
from audit.services.events import Actor, Event, actor_user, events_write
from audit.services.job import WEB_STEP_OFFLINE, AuditJob, audit_job_build, audit_job_for_answer
from audit.services.labels import claim_machine_relabel_noted
from audit.services.revision import revision_apply
from audit.services.web_client import WebCallClient
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


@dataclass
class _ClaimView:
    """A claim as the web step reads it: a stored row, or the verdict of an audit about to be stored
    (its evidence rows then built as they will be stored, ``audit.services.evidence_rows.evidence_rows_of``)."""

    claim_id: str
    text: str
    confidence: float
    span_start: int
    draft: ClaimDraft
    evidence: list[Evidence]  # its evidence rows, stored or about to be
    row: Claim | None = None  # the stored row (set once the answer is stored)

    @classmethod
    def of_row(cls, claim: Claim) -> _ClaimView:
        return cls(
            claim_id=claim.claim_id,
            text=claim.text,
            confidence=claim.confidence,
            span_start=claim.span_start,
            draft=claim.draft(),
            evidence=list(claim.evidence.all()),
            row=claim,
        )

    @classmethod
    def of_verdict(cls, verdict: ClaimVerdict, evidence: list[Evidence]) -> _ClaimView:
        c = verdict.claim
        return cls(
            claim_id=c.claim_id,
            text=c.text,
            confidence=min(1.0, max(0.0, float(verdict.confidence or 0.0))),  # as stored
            span_start=c.span[0],
            draft=ClaimDraft(
                claim_id=c.claim_id,
                text=c.text,
                span=(c.span[0], max(c.span)),
                type=c.type,
                importance=c.importance,
                citations=tuple(str(a) for a in c.citations),
            ),
            evidence=evidence,
        )


def _local_hits(claim: _ClaimView) -> list[EvidenceHit]:
    return [
        EvidenceHit(
            passage=_passage_of(ev), relevance=ev.relevance, cited=bool((ev.provenance or {}).get("cited"))
        )
        for ev in claim.evidence
        if ev.source_type != SourceType.WEB and ev.snippet
    ]


def _passage_of(ev: Evidence) -> Passage:
    """The pipeline passage behind a stored evidence row (web rows keep their ``web:`` id)."""
    pid = f"web:{ev.source_id}" if ev.source_type == SourceType.WEB else ev.source_id
    return Passage(
        id=pid,
        text=ev.snippet,
        title=ev.title,
        uri=ev.uri,
        source_type=ev.source_type,
        published=ev.published_at,
        anchors=(ev.source_id,),
    )


def _relevance(claim_text: str, text: str) -> float:
    """Share of the claim's content stems found in a web document (its retrieval score)."""
    stems = set(content_stems(claim_text))
    return round(len(stems & set(content_stems(text))) / len(stems), 4) if stems else 0.0


def _allowed_urls(urls: Iterable[str], domains: Iterable[str]) -> tuple[str, ...]:
    """Keep the distinct http(s) URLs whose host is on the allow-list (others never leave)."""
    out: list[str] = []
    for url in urls:
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        if (
            parts.scheme in ("http", "https")
            and parts.hostname
            and host_allowed(parts.hostname, domains)
            and url not in out
        ):
            out.append(url)
    return tuple(out)


def _cited_urls(claim: _ClaimView, domains: Iterable[str]) -> tuple[str, ...]:
    """Public URLs the claim names or its local sources carry, on the allow-list only."""
    local = [ev.uri for ev in claim.evidence if ev.source_type != SourceType.WEB]
    return _allowed_urls(urls_in(claim.text) + local, domains)


def _providers() -> list[WebProvider]:
    return build_providers(
        pubmed_base_url=settings.THEORIA["PUBMED_BASE_URL"], arxiv_base_url=settings.THEORIA["ARXIV_BASE_URL"]
    )


def _lookup(
    claim_text: str,
    urls: tuple[str, ...],
    client: WebCallClient,
    providers: Sequence[WebProvider],
    failures: list[dict[str, Any]],
    claim_id: str = "",
) -> list[WebDocument]:
    """Ask every provider; a failure is noted and the other providers still run.

    A residency refusal stops the lookups at once (it would refuse every call).
    """
    lookup = WebLookup(query=claim_query(claim_text), urls=urls)
    documents: dict[str, WebDocument] = {}
    for provider in providers:
        try:
            found = provider.find(lookup, client=client)
        except WebError as error:
            failures.append(
                {
                    "claim_id": claim_id,
                    "provider": provider.name,
                    "reason": error.reason.value,
                    "detail": error.message[:300],
                }
            )
            if error.reason is FailureReason.RESIDENCY:
                raise
            if error.reason is FailureReason.MALFORMED:
                client.reject(error, provider.name)
            continue
        except Exception as exc:  # a provider bug must not break the audit
            logger.exception("web provider %s failed", provider.name)
            failures.append(
                {
                    "claim_id": claim_id,
                    "provider": provider.name,
                    "reason": "error",
                    "detail": f"{type(exc).__name__}: {exc}"[:300],
                }
            )
            continue
        for document in found:
            documents.setdefault(document.source_id, document)
    return list(documents.values())


def _verdicts_with_web_evidence(
    items: list[tuple[ClaimDraft, list[EvidenceHit]]], job: VerificationJob
) -> list[ClaimVerdict]:
    """Run the pipeline's methods, the same ones Audit-Local ran, on claims with web evidence."""
    from audit.pipeline.audit import run_methods
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.methods import OFFLINE_METHODS

    return run_methods(items, job_context(job, embed=get_embedder().encode), OFFLINE_METHODS)


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
    request does not store its answer first: it computes the web pass with :func:`web_compute`
    and writes it with :func:`web_store` in the transaction that stores the answer.
    """
    # the strictness the audit had (the answer's domain); the web step's methods and revision run offline
    stored_job = audit_job_for_answer(answer, offline=OFFLINE)
    job = stored_job.verification
    rows = list(answer.claims.prefetch_related("evidence"))
    claims = [_ClaimView.of_row(c) for c in rows]
    if reasons is None:
        reasons = web_escalation_reasons(rows, job.thresholds).reasons
    client = WebCallClient(workspace=answer.workspace, answer=answer)
    web = _web_pass(job, claims, list(answer.contexts or []), reasons, client, providers, stored_job.revision)
    web.result.answer = answer
    if web.result.skipped == "no_weak_claims":
        return web.result
    events: list[Event] = []
    with transaction.atomic():
        run = run or answer.runs.order_by("-started_at", "-id").first()
        written = _web_write(web, run=run, actor=actor, events=events)
        events_write(events, actor=actor_user(actor), workspace=answer.workspace)
    return written


@dataclass
class WebPass:
    """One Audit-Web pass computed before anything is written: the lookups' documents (their
    calls kept by ``client`` until the answer is stored), the verdicts and the revision."""

    result: WebVerificationResult
    claims: list[_ClaimView]
    computed: _WebComputation | None
    client: WebCallClient


def web_compute(
    *,
    job: AuditJob,
    result: AuditResult,
    evidence: dict[str, list[Evidence]],
    reasons: dict[str, list[str]],
    providers: Sequence[WebProvider] | None = None,
) -> WebPass:
    """The web pass of an audit not stored yet (``result``: its Audit-Local result; ``evidence``:
    its claims' evidence rows as they will be stored, ``audit.services.evidence_rows.evidence_rows_of``):
    the network calls, the methods and the revision run here, outside any transaction;
    :func:`web_store` writes it with the answer. The job is the request's offline one for the web
    step (``AuditJob.web``: read at the strictness of the answer's domain, as
    :func:`web_verify_answer` reads a stored one)."""
    claims = [_ClaimView.of_verdict(v, evidence[v.claim.claim_id]) for v in result.claims]
    client = WebCallClient(workspace=job.workspace, deferred=True)
    return _web_pass(job.web, claims, list(job.contexts), reasons, client, providers, job.revision)


def web_store(
    web: WebPass, *, answer: Answer, actor: Actor = None, events: list[Event]
) -> WebVerificationResult:
    """Write a web pass computed by :func:`web_compute` for ``answer`` (call inside the transaction
    that stored it): its calls, then its evidence, verdicts, revision and run; its events are
    noted in ``events``."""
    web.result.answer = answer
    rows = {c.claim_id: c for c in answer.claims.all()}
    for claim in web.claims:
        claim.row = rows.get(claim.claim_id)
    if web.result.skipped != "no_weak_claims":
        run = answer.runs.order_by("-started_at", "-id").first()
        _web_write(web, run=run, actor=actor, events=events)
    web.client.flush(answer=answer, claims=rows)  # its calls, whether or not its results could be stored
    return web.result


def _web_pass(
    job: VerificationJob,
    claims: list[_ClaimView],
    contexts: list[dict[str, Any]],
    reasons: dict[str, list[str]],
    client: WebCallClient,
    providers: Sequence[WebProvider] | None,
    options: RevisionOptions,
) -> WebPass:
    """Look the escalated claims up on the web, weakest first, then verify and revise (reads only)."""
    result = WebVerificationResult(answer=None, reasons=dict(reasons))  # type: ignore[arg-type]
    weak = sorted((c for c in claims if c.claim_id in reasons), key=lambda c: (c.confidence, c.span_start))
    weak = weak[: constants.WEB_MAX_CLAIMS_PER_ANSWER]
    if not weak:
        result.skipped = "no_weak_claims"
        return WebPass(result=result, claims=claims, computed=None, client=client)
    workspace = client.workspace
    asked = providers if providers is not None else _providers()
    found: list[tuple[_ClaimView, list[WebDocument]]] = []
    try:
        for claim in weak:
            client.claim, client.claim_id = claim.row, claim.claim_id
            urls = _cited_urls(claim, workspace.web_allowed_domains or ())
            found.append((claim, _lookup(claim.text, urls, client, asked, result.failures, claim.claim_id)))
    except WebError:  # residency: nothing may leave; the local result stands
        result.skipped = "residency"
    result.calls, result.cache_hits, result.answered = client.calls, client.cache_hits, client.answered
    try:
        # the methods and the revision loop run before the transaction; it only writes their results
        computed = _compute(result, found, claims, contexts, job=job, options=options)
    except Exception as exc:
        _store_failed(result, exc)
        computed = None
    return WebPass(result=result, claims=claims, computed=computed, client=client)


def _web_write(
    web: WebPass, *, run: VerificationRun | None, actor: Actor, events: list[Event]
) -> WebVerificationResult:
    """Write the pass in a savepoint; its events join ``events`` only when it stored."""
    result = web.result
    try:
        if web.computed is None:
            raise RuntimeError("the web pass could not be computed")
        noted: list[Event] = []
        with transaction.atomic():
            _store(result, web.computed, run=run, actor=actor, events=noted)
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


@dataclass
class _WebComputation:
    """What a web pass computed from the documents found, before anything is written."""

    found: list[tuple[_ClaimView, list[WebDocument]]]
    with_docs: list[tuple[_ClaimView, list[WebDocument]]]  # the part of ``found`` with documents
    verdicts: list[ClaimVerdict]  # one per ``with_docs`` item
    revision: RevisionOutcome | None = (
        None  # the revision outcome with the web documents in the pool, or None
    )


def _compute(
    result: WebVerificationResult,
    found: list[tuple[_ClaimView, list[WebDocument]]],
    claims: list[_ClaimView],
    contexts: list[dict[str, Any]],
    *,
    job: VerificationJob,
    options: RevisionOptions,
) -> _WebComputation:
    """Verify the claims with their web evidence and revise the answer (embedding, judges): reads only."""
    with_docs = [(claim, docs) for claim, docs in found if docs]
    verdicts: list[ClaimVerdict] = []
    pool: list[Passage] = []
    if with_docs:
        # the passages the revision reads: the answer's contexts, its claims' evidence, the web's
        pool = _evidence_pool(job.passages, claims, adding=with_docs)
        items: list[tuple[ClaimDraft, list[EvidenceHit]]] = []
        for claim, docs in with_docs:
            hits = _local_hits(claim) + [
                EvidenceHit(passage=d.as_passage(), relevance=_relevance(claim.text, d.text)) for d in docs
            ]
            items.append((claim.draft, hits))
        verdicts = _verdicts_with_web_evidence(items, job)
    computed = _WebComputation(found=found, with_docs=with_docs, verdicts=verdicts)
    if with_docs:  # without web evidence the Audit-Local revision stands
        computed.revision = revise_job(job.with_passages(pool), options=options, given=len(contexts))
    return computed


def _store(
    result: WebVerificationResult,
    computed: _WebComputation,
    *,
    run: VerificationRun | None,
    actor: Actor,
    events: list[Event],
) -> None:
    answer = result.answer
    system = "" if actor else SOURCE  # the user's events when one asked, else the web step's own
    found, with_docs, verdicts = computed.found, computed.with_docs, computed.verdicts
    by_claim = {claim.claim_id: (docs, verdict) for (claim, docs), verdict in zip(with_docs, verdicts)}
    for view, docs in found:
        claim = view.row
        if claim is None:  # ``web_store`` gives each view its stored row first
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
        _store_claim(result, claim, docs, verdict, system, events)
    run = run or answer.runs.order_by("-started_at", "-id").first()
    outcome = computed.revision  # without web evidence the Audit-Local result (and its revision) stands
    if outcome is not None:
        # the revision loop ran (``_compute``) over the answer as received with the web documents in
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
            relevance=min(max(hit.relevance if hit else _relevance(claim.text, doc.text), 0.0), 1.0),
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


def _evidence_pool(
    passages: Iterable[Passage],
    claims: list[_ClaimView],
    adding: Iterable[tuple[_ClaimView, list[WebDocument]]] = (),
) -> list[Passage]:
    """The passages the answer was verified against: its contexts (the job's ``passages``), its
    claims' evidence, the web's.

    ``adding`` ([(claim view, [WebDocument])]) are web documents about to be linked to their claims:
    each takes the place its evidence row will have (after the claim's stored evidence).
    """
    pool = {p.id: p for p in passages}
    new = {claim.claim_id: docs for claim, docs in adding}
    for claim in claims:
        stored = sorted(claim.evidence, key=lambda ev: (ev.rank, ev.pk or 0))
        for ev in stored:
            if ev.snippet:
                passage = _passage_of(ev)
                pool.setdefault(passage.id, passage)
        known = {ev.source_id for ev in stored if ev.source_type == SourceType.WEB}
        for doc in new.get(claim.claim_id, ()):
            if doc.source_id[:200] in known:
                continue
            passage = _web_passage(doc)
            if passage.text:
                pool.setdefault(passage.id, passage)
    return list(pool.values())


def _web_passage(doc: WebDocument) -> Passage:
    """The passage a web document's evidence row will give back (``_passage_of`` of that row)."""
    source_id = doc.source_id[:200]
    return Passage(
        id=f"web:{source_id}",
        text=doc.as_passage().text,
        title=doc.title[:500],
        uri=doc.url[:2000],
        source_type=SourceType.WEB,
        published=doc.published,
        anchors=(source_id,),
    )


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
    urls = _allowed_urls(urls_in(claim.text), workspace.web_allowed_domains or ())
    try:
        docs = _lookup(claim.text, urls, client, _providers(), [], claim.claim_id)
    except WebError:
        return None
    if not docs:
        return None
    hits = [EvidenceHit(passage=d.as_passage(), relevance=_relevance(claim.text, d.text)) for d in docs]
    if job is None:
        job = audit_job_build(workspace, query="", answer_text="", offline=OFFLINE).verification
    return _verdicts_with_web_evidence([(claim, hits)], job)[0]
