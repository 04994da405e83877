"""The web step of an audit, on plain values (docs/SPEC_NOTES.md#escalation-to-audit-web): the
escalated claims are looked up on the web, weakest first, through the caller's client (the only way
out: ``WebStepClient``, whose fetches, cache and call log are the service's), then verified again
by the pipeline's own methods over their local evidence plus the web documents, and the answer is
revised with the web documents in its pool. Reads only: ``audit.services.web`` writes the step.

A claim is read as a :class:`ClaimView`: its draft, confidence and its evidence as
:class:`EvidenceItem`\\ s (the rows it is stored with, or will be: :func:`evidence_items_of`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Protocol
from urllib.parse import urlsplit

from audit import constants
from audit.pipeline.job import VerificationJob, job_context
from audit.pipeline.redaction import stored_snippet
from audit.pipeline.revision import RevisionOptions, RevisionOutcome, revise_job
from audit.pipeline.text import content_stems
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, Passage
from audit.pipeline.web.base import WebClient, WebDocument, WebLookup, WebProvider, claim_query, urls_in
from audit.pipeline.web.fetch import FailureReason, WebError, host_allowed

logger = logging.getLogger(__name__)

WEB = "web"  # the source type of web evidence
SOURCE_TYPES = ("kb", "context", WEB)  # what an evidence row's source type may be (else "context")
SNIPPET_CHARS = 1200  # the characters of a passage an evidence row keeps
WEB_STEP_OFFLINE = "the web step verifies with the offline methods"  # its job calls no LLM


@dataclass(frozen=True)
class EvidenceItem:
    """One evidence row of a claim, as stored or about to be (no database row: the service maps it)."""

    rank: int
    source_type: str
    source_id: str
    title: str
    uri: str
    snippet: str
    hash: str
    relevance: float
    entailment: float
    published: date | None
    provenance: dict[str, Any]
    order: int = 0  # the stored row's key, for rows of equal rank (0: not stored yet)

    @property
    def cited(self) -> bool:
        return bool((self.provenance or {}).get("cited"))


def _unit(x: float | None) -> float:
    return min(1.0, max(0.0, float(x or 0.0)))


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def evidence_item(rank: int, hit: EvidenceHit, *, sensitive: bool) -> EvidenceItem:
    """The evidence row a verified claim keeps of ``hit`` (its snippet masked, or only previewed
    when the passage's document is sensitive)."""
    p = hit.passage
    return EvidenceItem(
        rank=rank,
        source_type=p.source_type if p.source_type in SOURCE_TYPES else "context",
        source_id=str(p.id)[:200],
        title=(p.title or "")[:500],
        uri=(p.uri or "")[:2000],
        snippet=stored_snippet(p.text[:SNIPPET_CHARS], sensitive=sensitive),
        hash=_sha256(p.text),
        relevance=_unit(hit.relevance),
        entailment=_unit(hit.entailment),
        published=p.published,
        provenance={
            "method": "cited" if hit.cited else "hybrid_search",
            "cited": hit.cited,
            "similarity": round(float(hit.similarity), 4),
            "best_sentence": stored_snippet(hit.best_sentence[:300], sensitive=sensitive),
        },
    )


def evidence_items_of(
    result: AuditResult, sensitive: Iterable[str] = ()
) -> dict[str, tuple[EvidenceItem, ...]]:
    """The evidence rows each claim of ``result`` is stored with, by claim id, in rank order;
    ``sensitive``: the ids of passages from sensitive documents."""
    hidden = set(sensitive)
    return {
        v.claim.claim_id: tuple(
            evidence_item(rank, hit, sensitive=hit.passage.id in hidden)
            for rank, hit in enumerate(v.evidence)
        )
        for v in result.claims
    }


@dataclass(frozen=True)
class ClaimView:
    """A claim as the web step reads it: a stored row's, or a verdict's about to be stored."""

    claim_id: str
    text: str
    confidence: float
    span_start: int
    draft: ClaimDraft
    evidence: tuple[EvidenceItem, ...]

    @classmethod
    def of_verdict(cls, verdict: ClaimVerdict, evidence: Sequence[EvidenceItem]) -> ClaimView:
        c = verdict.claim
        return cls(
            claim_id=c.claim_id,
            text=c.text,
            confidence=_unit(verdict.confidence),  # as stored
            span_start=c.span[0],
            draft=ClaimDraft(
                claim_id=c.claim_id,
                text=c.text,
                span=(c.span[0], max(c.span)),
                type=c.type,
                importance=c.importance,
                citations=tuple(str(a) for a in c.citations),
            ),
            evidence=tuple(evidence),
        )


class WebStepClient(WebClient, Protocol):
    """The client the web step's lookups go through (the service's: residency, allow-list, cache,
    call log); it counts the calls it made, from the cache and usably answered."""

    calls: int
    cache_hits: int
    answered: int

    def begin_claim(self, claim_id: str) -> None:
        """The lookups that follow are for this claim."""

    def reject(self, error: WebError, provider: str) -> None:
        """A response the provider could not parse: its call failed."""


@dataclass(frozen=True)
class WebStep:
    """What one web step computed, before anything is written: the lookups' documents by claim
    (``found``; ``with_docs`` those with documents), their new verdicts, the revision with the web
    documents in its pool, and how the calls went. ``error``: the methods or the revision failed
    (the local result stands)."""

    reasons: dict[str, list[str]]
    claims: tuple[ClaimView, ...]
    failures: list[dict[str, Any]]
    skipped: str = ""  # why nothing was (or no more was) attempted: "no_weak_claims", "residency"
    calls: int = 0
    cache_hits: int = 0
    answered: int = 0
    found: tuple[tuple[ClaimView, list[WebDocument]], ...] = ()
    with_docs: tuple[tuple[ClaimView, list[WebDocument]], ...] = ()
    verdicts: tuple[ClaimVerdict, ...] = ()  # one per ``with_docs`` item
    # each web document's retrieval score for its claim: claim id -> {source id: relevance}
    relevance: dict[str, dict[str, float]] = field(default_factory=dict)
    revision: RevisionOutcome | None = None
    error: Exception | None = None

    @property
    def computed(self) -> bool:
        """The lookups ran and their verdicts (and revision) were computed."""
        return self.skipped != "no_weak_claims" and self.error is None


def local_hits(claim: ClaimView) -> list[EvidenceHit]:
    return [
        EvidenceHit(passage=passage_of(ev), relevance=ev.relevance, cited=ev.cited)
        for ev in claim.evidence
        if ev.source_type != WEB and ev.snippet
    ]


def passage_of(ev: EvidenceItem) -> Passage:
    """The pipeline passage behind an evidence row (web rows keep their ``web:`` id)."""
    pid = f"web:{ev.source_id}" if ev.source_type == WEB else ev.source_id
    return Passage(
        id=pid,
        text=ev.snippet,
        title=ev.title,
        uri=ev.uri,
        source_type=ev.source_type,
        published=ev.published,
        anchors=(ev.source_id,),
    )


def relevance(claim_text: str, text: str) -> float:
    """Share of the claim's content stems found in a web document (its retrieval score)."""
    stems = set(content_stems(claim_text))
    return round(len(stems & set(content_stems(text))) / len(stems), 4) if stems else 0.0


def allowed_urls(urls: Iterable[str], domains: Iterable[str]) -> tuple[str, ...]:
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


def _cited_urls(claim: ClaimView, domains: Iterable[str]) -> tuple[str, ...]:
    """Public URLs the claim names or its local sources carry, on the allow-list only."""
    local = [ev.uri for ev in claim.evidence if ev.source_type != WEB]
    return allowed_urls(urls_in(claim.text) + local, domains)


def lookup(
    claim_text: str,
    urls: tuple[str, ...],
    client: WebStepClient,
    providers: Sequence[WebProvider],
    failures: list[dict[str, Any]],
    claim_id: str = "",
) -> list[WebDocument]:
    """Ask every provider; a failure is noted and the other providers still run.

    A residency refusal stops the lookups at once (it would refuse every call).
    """
    query = WebLookup(query=claim_query(claim_text), urls=urls)
    documents: dict[str, WebDocument] = {}
    for provider in providers:
        try:
            found = provider.find(query, client=client)
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


def verdicts_with_web_evidence(
    items: list[tuple[ClaimDraft, list[EvidenceHit]]], job: VerificationJob
) -> list[ClaimVerdict]:
    """Run the pipeline's methods, the same ones Audit-Local ran, on claims with web evidence."""
    from audit.pipeline.audit import run_methods
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.methods import OFFLINE_METHODS

    return run_methods(items, job_context(job, embed=get_embedder().encode), OFFLINE_METHODS)


def web_step(
    job: VerificationJob,
    claims: Sequence[ClaimView],
    *,
    given: int,
    reasons: Mapping[str, list[str]],
    client: WebStepClient,
    providers: Sequence[WebProvider],
    allowed_domains: Iterable[str],
    options: RevisionOptions,
) -> WebStep:
    """Look the escalated claims (``reasons``) up on the web, weakest first, then verify and revise;
    reads only. ``job`` is the web step's offline job; ``given`` the passages the request sent."""
    claims, reasons = tuple(claims), dict(reasons)
    weak = sorted((c for c in claims if c.claim_id in reasons), key=lambda c: (c.confidence, c.span_start))
    weak = weak[: constants.WEB_MAX_CLAIMS_PER_ANSWER]
    failures: list[dict[str, Any]] = []
    if not weak:
        return WebStep(reasons=reasons, claims=claims, failures=failures, skipped="no_weak_claims")
    domains, skipped = tuple(allowed_domains), ""
    found: list[tuple[ClaimView, list[WebDocument]]] = []
    try:
        for claim in weak:
            client.begin_claim(claim.claim_id)
            urls = _cited_urls(claim, domains)
            found.append((claim, lookup(claim.text, urls, client, providers, failures, claim.claim_id)))
    except WebError:  # residency: nothing may leave; the local result stands
        skipped = "residency"
    step = WebStep(
        reasons=reasons,
        claims=claims,
        failures=failures,
        skipped=skipped,
        calls=client.calls,
        cache_hits=client.cache_hits,
        answered=client.answered,
        found=tuple(found),
    )
    try:
        return _verified(step, job=job, given=given, options=options)
    except Exception as exc:  # the local result stands; the service reports it
        return replace(step, error=exc)


def _verified(step: WebStep, *, job: VerificationJob, given: int, options: RevisionOptions) -> WebStep:
    """Verify the claims with their web evidence and revise the answer (embedding, judges): reads only."""
    with_docs = tuple((claim, docs) for claim, docs in step.found if docs)
    if not with_docs:  # without web evidence the Audit-Local revision stands
        return step
    # the passages the revision reads: the answer's contexts, its claims' evidence, the web's
    pool = evidence_pool(job.passages, step.claims, adding=with_docs)
    items: list[tuple[ClaimDraft, list[EvidenceHit]]] = []
    scores: dict[str, dict[str, float]] = {}
    for claim, docs in with_docs:
        scores[claim.claim_id] = {d.source_id: relevance(claim.text, d.text) for d in docs}
        hits = local_hits(claim) + [
            EvidenceHit(passage=d.as_passage(), relevance=scores[claim.claim_id][d.source_id]) for d in docs
        ]
        items.append((claim.draft, hits))
    verdicts = tuple(verdicts_with_web_evidence(items, job))
    revision = revise_job(job.with_passages(pool), options=options, given=given)
    return replace(step, with_docs=with_docs, verdicts=verdicts, relevance=scores, revision=revision)


def evidence_pool(
    passages: Iterable[Passage],
    claims: Iterable[ClaimView],
    adding: Iterable[tuple[ClaimView, list[WebDocument]]] = (),
) -> list[Passage]:
    """The passages the answer was verified against: its contexts (the job's ``passages``), its
    claims' evidence, the web's.

    ``adding`` ([(claim view, [WebDocument])]) are web documents about to be linked to their claims:
    each takes the place its evidence row will have (after the claim's stored evidence).
    """
    pool = {p.id: p for p in passages}
    new = {claim.claim_id: docs for claim, docs in adding}
    for claim in claims:
        stored = sorted(claim.evidence, key=lambda ev: (ev.rank, ev.order))
        for ev in stored:
            if ev.snippet:
                passage = passage_of(ev)
                pool.setdefault(passage.id, passage)
        known = {ev.source_id for ev in stored if ev.source_type == WEB}
        for doc in new.get(claim.claim_id, ()):
            if doc.source_id[:200] in known:
                continue
            passage = web_passage(doc)
            if passage.text:
                pool.setdefault(passage.id, passage)
    return list(pool.values())


def web_passage(doc: WebDocument) -> Passage:
    """The passage a web document's evidence row will give back (``passage_of`` of that row)."""
    source_id = doc.source_id[:200]
    return Passage(
        id=f"web:{source_id}",
        text=doc.as_passage().text,
        title=doc.title[:500],
        uri=doc.url[:2000],
        source_type=WEB,
        published=doc.published,
        anchors=(source_id,),
    )
