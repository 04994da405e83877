"""What one audit request computes before anything is written (docs/ARCHITECTURE.md, "The path of
one audit"): one call into the pipeline (``audit.pipeline.submission.submission``) computes the
answer to audit (the one received, a structured answer's text, else an LLM's draft), then, unless
the request is Normal, its audit (or structured audit) with the revision loop and, when the
Audit-Web rule asks for it, the web step. This module prepares what only Django can give that call
(the knowledge base's ports, the web step's client and providers) and turns its result into the
rows ``audit.services.submission_write`` writes. Reads only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from django.contrib.auth.models import User
from django.core.cache import cache

from audit import constants
from audit.errors import Busy
from audit.pipeline.submission import SubmissionRequest, WebPort, submission
from audit.selectors import kb_index
from audit.services.evidence_rows import evidence_rows_of
from audit.services.job import AuditJob
from audit.services.modes import ModeDecision
from audit.services.submission_write import Verified
from audit.services.web import WebPass
from audit.services.web_client import WebCallClient, web_providers


@dataclass(frozen=True)
class Computed:
    """What a request computed: the job with the answer to audit, how the answer was drafted
    (empty when it was received), its citation anchors, and its verification (None: Normal)."""

    job: AuditJob
    drafted: dict[str, Any]
    citations: int
    verified: Verified | None


@contextmanager
def expensive_audit_slot(user: User | None, answer: str | None) -> Iterator[None]:
    """Hold one of the user's ``EXPENSIVE_AUDITS_PER_USER`` slots (shared cache) while an answer of
    ``EXPENSIVE_AUDIT_CHARS`` or more is audited; ``Busy`` (429) when they are all held."""
    pk = getattr(user, "pk", None)
    if pk is None or answer is None or len(answer) < constants.EXPENSIVE_AUDIT_CHARS:
        yield
        return
    for slot in range(constants.EXPENSIVE_AUDITS_PER_USER):
        key = f"theoria:expensive-audit:{pk}:{slot}"
        if cache.add(key, 1, timeout=constants.EXPENSIVE_AUDIT_SLOT_S):
            try:
                yield
            finally:
                cache.delete(key)
            return
    raise Busy(
        "answer",
        f"you already have {constants.EXPENSIVE_AUDITS_PER_USER} audit(s) of an answer of "
        f"{constants.EXPENSIVE_AUDIT_CHARS:,} characters or more running; send this one when it has finished.",
        retry_after=constants.EXPENSIVE_AUDIT_RETRY_AFTER_S,
    )


def submission_compute(
    job: AuditJob, decision: ModeDecision, *, answer: str | None, verify: bool
) -> Computed:
    """Compute one request in one call into the pipeline; writes nothing. An answer of
    ``EXPENSIVE_AUDIT_CHARS`` or more is computed while the user holds an expensive-audit slot
    (``Busy``, 429, when they hold them all).

    Before the call, what only the service has: the workspace's knowledge base (its search and the
    metadata of the passages an audit cites) for an answer audited as prose, and the web step's
    client (its calls kept until the answer is stored), providers and allow-list. The pipeline
    raises Unavailable (no answer and no usable LLM), InvalidInput (a malformed structured field)
    and TooLarge (more claims than the workspace audits). After it, the evidence rows the claims
    will be stored with (the web step read the same)."""
    with expensive_audit_slot(job.user, answer):
        # what only the service has: the web step's way out (its calls kept until the answer is
        # stored), the workspace's knowledge base for an answer audited as prose
        client = WebCallClient(workspace=job.workspace, deferred=True)
        web = WebPort(
            client=client,
            providers=tuple(web_providers()),
            allowed_domains=tuple(job.workspace.web_allowed_domains or ()),
            external_calls=job.workspace.allow_external_calls,
            plan=job.web_plan or job.verification.plan,
        )
        kb = kb_index(job.workspace) if verify and job.answer_json is None else None
        search, kb_meta = (None, None) if kb is None else kb.ports()
        request = SubmissionRequest(
            contexts=job.contexts,
            web=web,
            answer=answer,
            answer_json=job.answer_json,
            verify=verify,
            web_asked=decision.mode == constants.MODE_AUDIT_WEB,
            revise=job.revise,
            deep=job.deep,
            options=job.revision,
            kb=search,
            kb_meta=kb_meta,
        )
        result = submission(job.verification, request)
    job = replace(job, contexts=result.contexts, verification=result.job)
    audit = result.audit
    if audit is None:  # Normal: recorded as received
        return Computed(job=job, drafted=result.drafted, citations=result.citations, verified=None)
    web_pass = None if result.web_step is None else WebPass(step=result.web_step, client=client)
    evidence = evidence_rows_of(result.evidence, audit.kb_meta)  # the rows the pipeline computed, as rows
    verified = Verified(web=result.web, evidence=evidence, computed=audit, web_pass=web_pass)
    return Computed(job=job, drafted=result.drafted, citations=result.citations, verified=verified)
