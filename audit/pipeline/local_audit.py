"""The audit of one answer as the pipeline computes it for a request (:func:`local_audit`: the
pipeline's audit and the revision loop; a structured answer's is
``audit.pipeline.structured.structured_audit``), before anything is written: a :class:`LocalAudit`
(its evidence rows: ``audit.pipeline.web.step.evidence_items_of``). Plain Python; the knowledge base is handed in
(its search and ``KbMeta``, the metadata of the passages the audit cites).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from audit import constants
from audit.pipeline.audit import audit_job
from audit.pipeline.job import VerificationJob
from audit.pipeline.methods import LLM_METHODS
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.revision import RevisionOptions, RevisionOutcome, revise_job
from audit.pipeline.types import AuditResult

DEFERRED = "deferred: runs in the asynchronous deep check"  # an LLM method left to the deep check

# the metadata of knowledge-base passages (by passage id) that the service keeps with evidence rows:
# each has ``sensitive`` (its document's snippets are stored as a preview only)
KbMeta = Callable[[set[str]], Mapping[str, Any]]


@dataclass(frozen=True)
class LocalAudit:
    """What the audit of one answer computed (pipeline and revision loop, or the structured audit),
    before anything is written."""

    started_at: datetime
    result: AuditResult
    outcome: RevisionOutcome | None
    kb_meta: Mapping[str, Any] | None = None  # the knowledge-base passages cited (``KbMeta``)
    # the passages cited from sensitive documents (their evidence rows keep a preview only)
    sensitive: frozenset[str] = frozenset()
    deferred: bool = False  # the LLM methods are left to the asynchronous deep check
    # what a claim's ``method_results`` keeps besides its methods, by claim id (a structured field's note)
    notes: dict[str, dict[str, Any]] = field(default_factory=dict)


def local_audit(
    job: VerificationJob,
    *,
    kb: KnowledgeBase | None = None,
    kb_meta: KbMeta | None = None,
    deep: str = "",
    revise: bool = False,
    options: RevisionOptions,
) -> LocalAudit:
    """Audit the job's answer (and, with ``revise`` and a plan that revises, run the revision loop);
    reads only.

    The job's plan decides depth, methods and revision rounds
    (docs/SPEC_NOTES.md#verification-depths-and-profiles); its LLM client is the request's, so a
    draft's calls and tokens are on this run: the result's ``duration_ms`` is counted from the
    client's start. With ``deep`` (or the thresholds' ``deep_checks``) ``async`` and a usable LLM the
    LLM methods are left to the asynchronous deep check (``DEFERRED``). ``result`` stays the audit
    of the text as received even when the loop revised it
    (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop).
    """
    started_at = datetime.now(timezone.utc)
    started = time.perf_counter()
    plan = job.plan
    if job.llm is not None:  # the client started with the request: a draft is part of its audit
        earlier = max(0.0, started - job.llm.started)
        started, started_at = started - earlier, started_at - timedelta(seconds=earlier)
    deferred = job.llm_methods is not None and (deep or plan.thresholds.deep_checks) == "async"
    verification = job.offline() if deferred else job  # claims are then extracted offline
    result = audit_job(verification, kb=kb)
    if plan.profile:
        result.methods_not_run = {
            **result.methods_not_run,
            **{
                name: why
                for name, why in plan.not_run.items()
                if name not in LLM_METHODS or job.llm is not None
            },
        }
    outcome = None
    # an answer the audit did not read whole (AUDIT_READ_BUDGET_CHARS) is not revised: its unread
    # claims stay as sent, each NEI with its flag, for a person
    unread = any(constants.OVER_BUDGET_FLAG in v.risk_flags for v in result.claims)
    if revise and plan.revise and not unread:
        outcome = revise_job(verification, initial=result, kb=kb, options=options)
    result = replace(result, duration_ms=round(1000 * (time.perf_counter() - started), 2))
    if deferred:
        result.methods_not_run = {**result.methods_not_run, **dict.fromkeys(LLM_METHODS, DEFERRED)}
        result.methods_not_run.pop("llm_extraction", None)
    # the knowledge-base passages cited: their rows' chunk and sensitivity
    meta = None if kb_meta is None else kb_meta({h.passage.id for v in result.claims for h in v.evidence})
    return LocalAudit(
        started_at=started_at,
        result=result,
        outcome=outcome,
        kb_meta=meta,
        sensitive=frozenset(pid for pid, m in (meta or {}).items() if m.sensitive),
        deferred=deferred,
    )
