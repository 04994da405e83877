"""Audit one answer and store everything it produced (docs/ARCHITECTURE.md).

``audit_answer`` runs the verification pipeline (``audit.pipeline.audit_answer``) outside the
database transaction, then stores the answer, its claims, their evidence links, the
verification run and the audit events in one transaction. The pipeline itself is plain Python;
this module only loads what it needs (thresholds, the workspace's knowledge base, the LLM
client) and writes the rows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.models import Answer, Claim, Evidence, VerificationRun, Workspace
from audit.pipeline.local_audit import KbMeta, LocalAudit, local_audit
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.types import AuditResult, ClaimVerdict, Label, Passage
from audit.pipeline.web.step import evidence_items_of
from audit.selectors import kb_index
from audit.services.deep_checks import deep_check_queue
from audit.services.events import AnyUser, Event, actor_user, events_write
from audit.services.evidence_rows import evidence_rows_of
from audit.services.job import AuditJob, audit_job_build
from audit.services.llm import LLMSetup, run_record_llm_usage
from audit.services.revision import revision_apply


def workspace_kb_ports(workspace: Workspace) -> tuple[KnowledgeBase | None, KbMeta | None]:
    """What the pipeline reads of the workspace's knowledge base (``ports``): its search (None
    while it is empty) and the metadata of the passages an audit cites."""
    kb = kb_index(workspace)
    return (None, None) if kb is None else kb.ports()


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
    kb_meta: Mapping[str, Any] | None = None,
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


def audit_compute(job: AuditJob) -> LocalAudit:
    """Run the pipeline (and, with ``job.revise``, the revision loop) for the job's text, against
    its passages and the workspace's knowledge base (``audit.pipeline.submission.local_audit``);
    reads only, writes nothing. The slow part of an audit (embedding, judges, LLM calls) happens
    here, outside any transaction; ``job.deep`` ``async`` leaves the LLM methods to the
    asynchronous deep check, queued by :func:`audit_store`."""
    kb, kb_meta = workspace_kb_ports(job.workspace)
    return local_audit(
        job.verification, kb=kb, kb_meta=kb_meta, deep=job.deep, revise=job.revise, options=job.revision
    )


def audit_store(
    computed: LocalAudit,
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
    evidence = evidence_rows_of(evidence_items_of(computed.result, computed.sensitive), computed.kb_meta)
    events: list[Event] = []
    with transaction.atomic():
        answer = audit_store(computed, job, mode=mode, evidence=evidence, events=events)
        events_write(events, actor=job.user, workspace=job.workspace)
    return answer
