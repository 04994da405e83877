"""Audit requests of the RAG front end: idempotency, mode resolution, Normal-mode recording and
the hand-off to the verification pipeline (Audit-Local) and to web verification (Audit-Web).

``audit_submit_or_queue`` (the API) and ``audit_submit`` ("Audit now", a queued audit's task, the
answer form) run one pass, ``_audit_submit``: it checks the request, resolves the actor, answers a
retried key, resolves the mode, builds the job (the answer's claims counted there), and, with the
cost budget, estimates the audit once (``audit.pipeline.cost``) to queue it
(``audit.services.audit_queue``) or run it now: one call that computes everything
(``audit.services.submission_compute``) and one write (``audit.services.submission_write``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

from django.conf import settings

from audit import constants
from audit.errors import InvalidInput, TooLarge
from audit.models import Answer, BackgroundJob, Workspace
from audit.pipeline.cost import audit_cost, surely_queued
from audit.services.actors import actor_user
from audit.services.audit_queue import audit_queue, queue_room_check
from audit.services.events import Actor
from audit.services.idempotency import Submission, queued_audit_of, submission_replay
from audit.services.job import audit_job_build
from audit.services.modes import mode_resolve
from audit.services.submission_compute import submission_compute
from audit.services.submission_write import Closing, submission_write


@dataclass
class AuditRequest:
    """One ``POST /api/v1/audits`` body, already checked for shape."""

    query: str
    answer: str | None = None  # None: not sent (an LLM may draft one)
    contexts: list[dict[str, Any]] = field(default_factory=list)  # {id, title, uri, text, published_at}
    mode: str = ""
    conversation_id: str = ""
    domain: str = ""
    reference: str | None = None
    generation_mode: str = ""  # docs/SPEC_NOTES.md#verification-depths-and-profiles drafting mode ("" = the workspace's, else the profile's)
    verification_profile: str = (
        ""  # docs/SPEC_NOTES.md#verification-depths-and-profiles depth profile ("" = the workspace's, if any)
    )
    answer_json: dict[str, Any] | None = (
        None  # a structured answer (docs/SPEC_NOTES.md#structured-answers), sent instead of ``answer``
    )
    deep: str = ""  # "sync" | "async" LLM methods ("" = the workspace's deep_checks), docs/LLM.md

    def job_fields(self) -> dict[str, Any]:
        """What the audit job takes of the request as it is (``audit_job_build``)."""
        names = ("query", "contexts", "domain", "reference", "conversation_id", "deep", "answer_json")
        return {name: getattr(self, name) for name in names}


def audit_request_check(request: AuditRequest) -> None:
    """The checks of an audit request that the API and the answer form share (``InvalidInput``
    naming the field, with the API's own wording): an answer or a structured answer, not both and
    not blank; at most ``API_MAX_CONTEXTS`` passages; an answer of ``MAX_ANSWER_CHARS`` or less."""
    if request.answer is not None and request.answer_json is not None:
        raise InvalidInput("answer_json", "Send either answer or answer_json (one of them).")
    if request.answer is not None and not request.answer.strip():
        raise InvalidInput("answer", "May not be blank.")
    limit = settings.THEORIA["API_MAX_CONTEXTS"]
    if len(request.contexts) > limit:
        raise InvalidInput("contexts", f"At most {limit} contexts are allowed; got {len(request.contexts)}.")
    if request.answer is not None and len(request.answer) > constants.MAX_ANSWER_CHARS:
        raise TooLarge(
            "answer",
            f"has {len(request.answer):,} characters; an answer may have at most "
            f"{constants.MAX_ANSWER_CHARS:,} (MAX_ANSWER_CHARS). Split it into several audits.",
        )


def audit_submit(
    *,
    workspace: Workspace,
    user: Actor,
    request: AuditRequest,
    idempotency_key: str = "",
    fingerprint: str = "",
    on_stored: Callable[[Answer], None] | None = None,
) -> Submission:
    """Run one audit request now, whatever its cost (``_audit_submit``): "Audit now"
    (``audit_now``), a queued audit's task, the answer form. ``on_stored(answer)`` writes the caller's own rows in the request's
    transaction ("Audit now" links the two answers there); what it raises stores nothing."""
    submission = _audit_submit(
        workspace=workspace,
        user=user,
        request=request,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
        on_stored=on_stored,
        budget=False,
    )
    assert isinstance(submission, Submission)  # only the cost budget queues an audit
    return submission


def audit_submit_or_queue(
    *,
    workspace: Workspace,
    user: Actor,
    request: AuditRequest,
    idempotency_key: str = "",
    fingerprint: str = "",
) -> Submission | BackgroundJob:
    """Audit now (a ``Submission``) or queue the audit (a ``BackgroundJob``), by its estimated cost
    (``audit.pipeline.cost``): the API's and the form's way in (``_audit_submit``).

    An audit within ``AUDIT_INLINE_COST_BUDGET`` runs now (201); one over it is stored as a queued
    job, run by the task queue (202 with the job's URL): a retried key of a queued audit gets its
    job (the same body; another body is 409). A Normal answer (recorded, not read) and an anonymous
    caller's audit always run now. A user holds at most ``QUEUED_AUDITS_PER_USER`` queued or running
    audits (429 with Retry-After)."""
    return _audit_submit(
        workspace=workspace,
        user=user,
        request=request,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
        budget=True,
    )


# one pass, in the order a request runs (its checks, the replay of a retried key, the mode, the job,
# the budget, the computation, the write), each step's result handed to the next
def _audit_submit(
    *,
    workspace: Workspace,
    user: Actor,
    request: AuditRequest,
    idempotency_key: str,
    fingerprint: str,
    on_stored: Callable[[Answer], None] | None = None,
    budget: bool,
) -> Submission | BackgroundJob:
    """Run one audit request; a retried idempotency key returns the first answer unchanged (with
    ``budget``, or the job that queued it). With ``budget``, an audit over the inline cost budget is
    queued (``audit_queue``).

    Raises InvalidInput (:func:`audit_request_check`), TooLarge (an answer over MAX_ANSWER_CHARS, or
    more claims than the workspace audits: counted when the job is built, before anything is
    verified or queued), Conflict (a key reused with another body), Busy (the user's expensive or
    queued audits). Drafting, the pipeline and web calls run outside any transaction, then the one
    short write (``submission_write``): a failure stores nothing, the key is stored with the answer.
    The actor is resolved once, here (``actor_user``): the job carries the signed-in user or None.
    """
    audit_request_check(request)
    user = actor_user(user)
    if idempotency_key:
        if len(idempotency_key) > 255:
            raise InvalidInput("Idempotency-Key", "must be at most 255 characters.")
        replay = submission_replay(
            workspace=workspace, user=user, key=idempotency_key, fingerprint=fingerprint
        )
        if replay is not None:
            return replay
        queued = (  # the job that queued the audit of a retried key
            queued_audit_of(workspace=workspace, user=user, key=idempotency_key, fingerprint=fingerprint)
            if budget
            else None
        )
        if queued is not None:
            return queued
    decision = mode_resolve(
        workspace=workspace,
        user=user,
        requested=request.mode,
        conversation_id=request.conversation_id,
        domain=request.domain,
    )
    normal = decision.mode == constants.MODE_NORMAL
    if budget and not normal and user is not None and surely_queued(request.answer or ""):
        queue_room_check(workspace, user)  # a full queue's 429 before the claims are extracted
    verifies_or_drafts = (request.answer is None and request.answer_json is None) or not normal
    job = audit_job_build(  # one client (and time budget) for the request: draft, audit, revision
        workspace,
        user=user,
        answer_text=request.answer or "",
        revise=True,
        profile=request.verification_profile,
        generation_mode=request.generation_mode,
        offline="" if verifies_or_drafts else "a Normal answer is recorded, not verified",
        claims=not normal and request.answer is not None,  # the claims cap's 413 before anything is queued
        **request.job_fields(),
    )
    if budget and not normal and user is not None:
        cost = audit_cost(
            job.verification.answer_text, job.verification.passages, answer_json=request.answer_json
        )
        if not cost.inline:
            return audit_queue(
                job, dataclasses.asdict(request), key=idempotency_key, fingerprint=fingerprint, cost=cost
            )
    # Normal: recorded as received; else verified first, outside any transaction; then the one write
    computed = submission_compute(job, decision, answer=request.answer, verify=not normal)
    closing = Closing(
        decision=decision,
        user=user,
        key=idempotency_key,
        fingerprint=fingerprint,
        drafted=computed.drafted,
        citations=computed.citations,
        on_stored=on_stored,
    )
    return submission_write(computed.job, closing, computed.verified)
