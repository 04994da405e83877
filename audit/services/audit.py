"""Audit one answer and store everything it produced (docs/ARCHITECTURE.md).

``audit_answer`` runs the verification pipeline (``audit.pipeline.audit_answer``) outside the
database transaction, then stores the answer, its claims, their evidence links, the
verification run and the audit events in one transaction. The pipeline itself is plain Python;
this module only loads what it needs (thresholds, the workspace's knowledge base, the LLM
client) and writes the rows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.models import Answer, Claim, Evidence, VerificationRun, Workspace
from audit.pipeline.audit import audit_job as pipeline_audit_job
from audit.pipeline.methods import LLM_METHODS
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.revision import RevisionOutcome, revise_job
from audit.pipeline.types import AuditResult, ClaimVerdict, Label, Passage
from audit.selectors import kb_index

if TYPE_CHECKING:
    from audit.kb.search import InProcessKnowledgeBase, PgKnowledgeBase

    KbIndex = InProcessKnowledgeBase | PgKnowledgeBase
from audit.services.deep_checks import DEFERRED, deep_check_queue
from audit.services.events import AnyUser, Event, actor_user, events_write
from audit.services.evidence_rows import evidence_rows_of
from audit.services.job import AuditJob, audit_job_build
from audit.services.llm import LLMSetup, run_record_llm_usage
from audit.services.revision import revision_apply


def workspace_kb(workspace: Workspace) -> tuple[KnowledgeBase | None, KbIndex | None]:
    """(the pipeline's KnowledgeBase or None, the workspace's kb.search knowledge base or None)."""
    kb = kb_index(workspace)
    if kb is None or not len(kb):
        return None, kb

    return kb.for_pipeline(), kb


def _unit(x: float | None) -> float:
    return min(1.0, max(0.0, float(x or 0.0)))


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256((text or "").encode("utf-8")).hexdigest()


def _method_results(v: ClaimVerdict) -> dict[str, Any]:
    out = {}
    for m in v.methods:
        details = {k: val for k, val in (m.details or {}).items() if k != "features"}
        out[m.method] = {
            "ran": m.ran,
            "score": m.score,
            "verdict": m.verdict,
            "flags": m.flags,
            "details": details,
        }
    return out


def _claim_row(
    answer: Answer, v: ClaimVerdict, drafted_at: dt.datetime, verified_at: dt.datetime, note: dict[str, Any]
) -> Claim:
    c = v.claim
    return Claim(
        answer=answer,
        claim_id=c.claim_id,
        text=c.text,
        span_start=c.span[0],
        span_end=max(c.span),
        claim_type=c.type,
        importance=c.importance,
        anchors=list(c.citations),
        label=v.label,
        machine_label=v.label,
        verdict=v.verdict,
        confidence=_unit(v.confidence),
        metrics={**v.metrics, "p_refuted": round(float(v.p_refuted), 4)},
        methods=v.method_names,
        method_results={**_method_results(v), **note},
        risk_flags=list(v.risk_flags),
        drafted_at=drafted_at,
        verified_at=verified_at,
    )


def answer_store(
    job: AuditJob,
    result: AuditResult,
    *,
    answer_text: str,
    mode: str,
    kb_meta: dict[str, Any] | None = None,
    started_at: dt.datetime | None = None,
    kind: str = VerificationRun.Kind.INTERACTIVE,
    evidence: dict[str, list[Evidence]],
    notes: dict[str, dict[str, Any]] | None = None,
    events: list[Event],
) -> tuple[Answer, VerificationRun]:
    """Write the rows of one audit of ``job`` (call inside a transaction): the answer as received
    (``answer_text``), its claims and ``evidence`` (``evidence_rows_of``, computed with the audit),
    the run (with the job's LLM usage); its events are noted in ``events`` (the caller writes them
    with the request's others)."""
    now = timezone.now()
    started_at = started_at or now - timedelta(milliseconds=result.duration_ms)
    answer = Answer(
        workspace=job.workspace,
        conversation_id=job.conversation_id or "",
        user=job.user,
        query=job.verification.query or "",
        text=answer_text or "",
        original_text=answer_text or "",
        mode=mode,
        domain=job.verification.domain or "",
        reference=job.verification.reference or "",
        contexts=_json_contexts(job.contexts),
        answer_json=job.answer_json,
    )
    answer.full_clean()
    answer.save()
    saved = _claims_store(answer, result, evidence, notes or {}, started_at, now)
    run = _run_row(
        answer,
        result,
        kind=kind,
        mode=mode,
        started_at=started_at,
        now=now,
        profile=job.verification.plan.profile,
    )
    run.full_clean(exclude=["answer"])
    run.save()
    events.extend(_audit_events(answer, run, result, saved, mode=mode))
    run_record_llm_usage(run=run, setup=job.llm_setup)
    return answer, run


def _claims_store(
    answer: Answer,
    result: AuditResult,
    rows: dict[str, list[Evidence]],
    notes: dict[str, dict[str, Any]],
    started_at: dt.datetime,
    now: dt.datetime,
) -> dict[str, Claim]:
    """Write the claims and their evidence rows; return the stored claims by claim id."""
    claims = [_claim_row(answer, v, started_at, now, notes.get(v.claim.claim_id, {})) for v in result.claims]
    # field values only: the named check constraints guard the rest in the database (an insert that
    # breaks one fails the whole write), and full_clean() would run one query per constraint and
    # claim (1,629 queries, 1.4 s of a 200-claim answer's 1.9 s write, on SQLite)
    for claim in claims:
        claim.clean_fields(exclude=["answer"])
    Claim.objects.bulk_create(claims)
    saved = {c.claim_id: c for c in Claim.objects.filter(answer=answer)}
    for claim_id, evidence in rows.items():
        for row in evidence:
            row.claim = saved[claim_id]
    Evidence.objects.bulk_create([row for evidence in rows.values() for row in evidence])
    return saved


def _run_row(
    answer: Answer,
    result: AuditResult,
    *,
    kind: str,
    mode: str,
    started_at: dt.datetime,
    now: dt.datetime,
    profile: str,
) -> VerificationRun:
    m = result.metrics
    return VerificationRun(
        answer=answer,
        kind=kind,
        status=VerificationRun.Status.DONE,
        mode=mode,
        started_at=started_at,
        finished_at=now,
        duration_ms=max(0.0, float(result.duration_ms)),
        claim_count=len(result.claims),
        coverage=_unit(m.get("evidence_coverage")),
        unsupported_rate=_unit(m.get("unsupported_rate")),
        audit_score=_unit(result.audit_score),
        faithfulness=_unit(m.get("faithfulness")),
        answer_relevance=_unit(m.get("answer_relevance")),
        context_precision=_unit(m.get("context_precision")),
        context_recall=None if m.get("context_recall") is None else _unit(m["context_recall"]),
        methods=sorted({name for v in result.claims for name in v.method_names}),
        warnings=list(result.warnings)
        + [
            {"code": "method_not_run", "method": k, "message": why}
            for k, why in sorted(result.methods_not_run.items())
        ],
        risk_flags=list(result.risk_flags),
        quality_gates=dict(result.quality_gates),
        rag_score=dict(m.get("rag_score") or {}),
        verification_profile=profile,
    )


def _audit_events(
    answer: Answer,
    run: VerificationRun,
    result: AuditResult,
    saved: dict[str, Claim],
    *,
    mode: str,
) -> list[Event]:
    """``answer.audited`` with the run's figures, and ``claim.flagged`` for each claim not SUPPORTED or flagged."""
    events = [
        Event(
            "answer.audited",
            answer,
            {
                "run": run.pk,
                "mode": mode,
                "claims": len(result.claims),
                "labels": result.metrics.get("label_counts") or {},
                "audit_score": round(result.audit_score, 4),
                "flagged": result.flagged,
                "risk_flags": sorted({f["type"] for f in result.risk_flags}),
                "duration_ms": result.duration_ms,
            },
        )
    ]
    for v in result.claims:
        if v.label != Label.SUPPORTED or v.risk_flags:
            details = {
                "label": v.label,
                "verdict": v.verdict,
                "confidence": round(v.confidence, 4),
                "risk_flags": v.risk_flags,
            }
            events.append(Event("claim.flagged", saved[v.claim.claim_id], details))
    return events


def _json_contexts(contexts: Sequence[dict[str, Any]]) -> list[Any]:
    out = []
    for c in contexts or []:
        if isinstance(c, Passage):
            out.append(
                {
                    "id": c.id,
                    "title": c.title,
                    "uri": c.uri,
                    "text": c.text,
                    "published_at": c.published.isoformat() if c.published else None,
                }
            )
        elif isinstance(c, dict):
            out.append({k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in c.items()})
        else:
            out.append(str(c))
    return out


@dataclass
class AuditComputation:
    """What one audit computed (pipeline, revision loop), before anything is written."""

    started_at: dt.datetime
    result: AuditResult
    outcome: RevisionOutcome | None
    setup: LLMSetup | None  # usage is recorded on the run
    kb_meta: dict[str, Any] | None
    profile: str = ""
    deferred: bool = False  # the LLM methods are left to the asynchronous deep check
    # what a claim's ``method_results`` keeps besides its methods, by claim id (a structured field's note)
    notes: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)


def audit_compute(job: AuditJob) -> AuditComputation:
    """Run the pipeline (and, with ``job.revise``, the revision loop) for the job's text; reads only,
    writes nothing.

    The slow part of an audit (embedding, judges, LLM calls) happens here, outside any
    transaction, so other requests are never blocked behind it. The job's plan decides depth,
    methods and revision rounds (docs/SPEC_NOTES.md#verification-depths-and-profiles); its LLM setup is the
    request's one client, so a draft's calls and tokens are on this run and its time budget covers
    both. The result's ``duration_ms`` is the whole computation, revision included, counted from the
    request's start (its LLM client's): the draft of a drafted answer is in it. ``job.deep``
    is ``sync`` or ``async`` ("" = the workspace's ``deep_checks``): with ``async`` and a usable
    LLM the LLM methods are left to the asynchronous deep check (``services.deep_checks``), queued
    by :func:`audit_store`. ``result`` stays the audit of the text as received even when the loop
    revised it: the claims stored, counted and escalated are those of the submitted text, each
    with its revision (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop).
    """
    started_at = timezone.now()
    started = time.perf_counter()
    plan, setup = job.verification.plan, job.llm_setup
    if setup is not None and setup.client is not None:
        # the request's client started with the request: a drafted answer's draft is part of its audit
        earlier = max(0.0, started - setup.client.started)
        started, started_at = started - earlier, started_at - timedelta(seconds=earlier)
    thresholds = plan.thresholds
    kb, raw_kb = workspace_kb(job.workspace)
    verification = job.verification
    deferred = verification.llm_methods is not None and (job.deep or thresholds.deep_checks) == "async"
    if deferred:
        verification = (
            verification.offline()
        )  # the LLM methods run in the deep check; claims are extracted offline
    result = pipeline_audit_job(verification, kb=kb)
    if plan.profile:
        result.methods_not_run = {
            **result.methods_not_run,
            **{
                name: why
                for name, why in plan.not_run.items()
                if name not in LLM_METHODS or setup.client is not None
            },
        }
    outcome = None
    # an answer the audit did not read whole (AUDIT_READ_BUDGET_CHARS) is not revised: its unread
    # claims stay as sent, each NEI with its flag, for a person
    unread = any(constants.OVER_BUDGET_FLAG in v.risk_flags for v in result.claims)
    if job.revise and plan.revise and not unread:
        outcome = revise_job(verification, initial=result, kb=kb, options=job.revision)
    result = dataclasses.replace(result, duration_ms=round(1000 * (time.perf_counter() - started), 2))
    if deferred:
        result.methods_not_run = {**result.methods_not_run, **dict.fromkeys(LLM_METHODS, DEFERRED)}
        result.methods_not_run.pop("llm_extraction", None)
    # what the stored evidence rows need (chunk, sensitivity) of the knowledge-base passages cited
    kb_meta = (
        None if raw_kb is None else raw_kb.meta_for({h.passage.id for v in result.claims for h in v.evidence})
    )
    return AuditComputation(
        started_at=started_at,
        result=result,
        outcome=outcome,
        setup=setup,
        kb_meta=kb_meta,
        profile=plan.profile,
        deferred=deferred,
    )


def audit_store(
    computed: AuditComputation,
    job: AuditJob,
    *,
    mode: str = constants.MODE_AUDIT_LOCAL,
    evidence: dict[str, list[Evidence]],
    events: list[Event],
) -> Answer:
    """Write what :func:`audit_compute` computed for ``job`` with its claims' ``evidence`` rows
    (``evidence_rows_of``) (call inside a transaction: it is quick); its events are noted in
    ``events``."""
    answer, run = answer_store(
        job,
        computed.result,
        answer_text=job.verification.answer_text,
        mode=mode,
        kb_meta=computed.kb_meta,
        started_at=computed.started_at,
        evidence=evidence,
        notes=computed.notes,
        events=events,
    )
    if computed.outcome is not None:
        answer = revision_apply(answer=answer, run=run, outcome=computed.outcome, events=events)
    if computed.deferred:
        deep_check_queue(run)
    return answer


def audit_and_store(
    *,
    workspace: Workspace,
    query: str,
    answer_text: str,
    contexts: list[dict[str, Any]],
    mode: str = constants.MODE_AUDIT_LOCAL,
    user: AnyUser | None = None,
    conversation_id: str = "",
    domain: str = "",
    reference: str | None = None,
    revise: bool = False,
    profile: str = "",
    llm_setup: LLMSetup | None = None,
    deep: str = "",
) -> Answer:
    """Audit ``answer_text`` (Audit-Local: request passages + the workspace knowledge base) and store it.

    Builds the job once (``audit_job_build``), computes outside any transaction, then writes the
    answer, its claims, evidence, run and events in one transaction, so a failure stores nothing.
    With ``revise=True`` the revision loop (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    runs on the result first; the claims stored are still those of the answer as received, each
    with its revision, and ``Answer.text`` becomes the revised text. ``profile`` is a verification
    depth profile (docs/SPEC_NOTES.md#verification-depths-and-profiles; "" = the workspace's, if any).
    """
    job = audit_job_build(
        workspace,
        query=query,
        answer_text=answer_text,
        contexts=contexts,
        domain=domain,
        reference=reference,
        user=actor_user(user),
        conversation_id=conversation_id,
        profile=profile,
        deep=deep,
        revise=revise,
        llm_setup=llm_setup,
    )
    computed = audit_compute(job)
    evidence = evidence_rows_of(computed.result, computed.kb_meta)
    events: list[Event] = []
    with transaction.atomic():
        answer = audit_store(computed, job, mode=mode, evidence=evidence, events=events)
        events_write(events, actor=job.user, workspace=job.workspace)
    return answer
