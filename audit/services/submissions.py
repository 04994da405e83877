"""Audit requests of the RAG front end: idempotency, mode resolution, Normal-mode recording and
the hand-off to the verification pipeline (Audit-Local) and to web verification (Audit-Web).

``audit_submit`` is the one entry point (the API and the answer form call it): it checks the
request, resolves the actor and the mode, builds the job, then makes one call that computes
everything (``audit.services.submission_compute``) and one write (``audit.services.submission_write``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

from django.conf import settings
from django.core.cache import cache

from audit import constants
from audit.errors import Busy, InvalidInput, TooLarge
from audit.models import Answer, Workspace
from audit.services.actors import actor_user
from audit.services.events import Actor
from audit.services.idempotency import Submission, submission_replay
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


@contextmanager
def expensive_audit_slot(user: Actor, answer: str | None) -> Iterator[None]:
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


def audit_submit(
    *,
    workspace: Workspace,
    user: Actor,
    request: AuditRequest,
    idempotency_key: str = "",
    fingerprint: str = "",
    on_stored: Callable[[Answer], None] | None = None,
) -> Submission:
    """Run one audit request (``_audit_submit``); an answer of ``EXPENSIVE_AUDIT_CHARS`` or more runs
    while the user holds an expensive-audit slot (``Busy``, 429, when they hold them all); one over
    ``MAX_ANSWER_CHARS`` is refused first (``TooLarge``, 413), as is any request that fails
    :func:`audit_request_check`."""
    audit_request_check(request)
    with expensive_audit_slot(user, request.answer):
        return _audit_submit(
            workspace=workspace,
            user=user,
            request=request,
            idempotency_key=idempotency_key,
            fingerprint=fingerprint,
            on_stored=on_stored,
        )


def _audit_submit(
    *,
    workspace: Workspace,
    user: Actor,
    request: AuditRequest,
    idempotency_key: str = "",
    fingerprint: str = "",
    on_stored: Callable[[Answer], None] | None = None,
) -> Submission:
    """Run one audit request; a retried idempotency key returns the first answer unchanged.

    Raises InvalidInput (bad values), TooLarge (an answer over MAX_ANSWER_CHARS, or more claims
    than the workspace audits), Conflict (a key reused with another body). Drafting, the pipeline and web calls run before
    any transaction; the rows are then written in one short transaction (``submission_write``), so
    other requests are never kept waiting behind a long audit, a failure stores nothing and the
    key is stored with the answer. ``on_stored(answer)`` writes the caller's own rows in that
    transaction ("Audit now" links the two answers there); what it raises stores nothing. The
    actor is resolved once, here (``actor_user``): the job carries the signed-in user or None.
    """
    user = actor_user(user)
    if idempotency_key:
        if len(idempotency_key) > 255:
            raise InvalidInput("Idempotency-Key", "must be at most 255 characters.")
        replay = submission_replay(
            workspace=workspace, user=user, key=idempotency_key, fingerprint=fingerprint
        )
        if replay is not None:
            return replay
    job_fields = request.job_fields()
    decision = mode_resolve(
        workspace=workspace,
        user=user,
        requested=request.mode,
        conversation_id=request.conversation_id,
        domain=request.domain,
    )
    normal = decision.mode == constants.MODE_NORMAL
    verifies_or_drafts = (request.answer is None and request.answer_json is None) or not normal
    job = audit_job_build(  # one client (and time budget) for the request: draft, audit, revision
        workspace,
        user=user,
        answer_text="",
        revise=True,
        profile=request.verification_profile,
        generation_mode=request.generation_mode,
        offline="" if verifies_or_drafts else "a Normal answer is recorded, not verified",
        **job_fields,
    )
    # Normal: recorded as received; else verified first (TooLarge when the answer has more claims
    # than the workspace audits), outside any transaction; then the one write
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
