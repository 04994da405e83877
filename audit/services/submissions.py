"""Audit requests of the RAG front end: idempotency, mode resolution, Normal-mode recording and
the hand-off to the verification pipeline (Audit-Local) and to web verification (Audit-Web).

``audit_submit`` is the one entry point (the API calls it). The verification itself belongs to
``audit.services.audit.audit_and_store``; web verification to ``audit.services.web``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

from django.conf import settings
from django.core.cache import cache

from audit import constants
from audit.errors import Busy, InvalidInput, TooLarge, Unavailable
from audit.models import Answer, Workspace
from audit.pipeline.extraction import citations_of
from audit.pipeline.llm.generation import generate
from audit.pipeline.structured import canonical_text
from audit.pipeline.types import Passage
from audit.services.audit import audit_compute, evidence_rows_of
from audit.services.events import Actor, actor_user
from audit.services.job import AuditJob, audit_job_build
from audit.services.modes import ModeDecision, mode_resolve, web_block, web_escalation_of
from audit.services.structured import (
    structured_compute,
    structured_fields_check,
)
from audit.services.submission_write import (
    Closing,
    Submission,
    Verified,
    submission_replay,
    submission_write,
)
from audit.services.submission_write import (
    request_fingerprint as request_fingerprint,  # the view fingerprints a body with it
)
from audit.services.web import web_compute


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


def _draft(request: AuditRequest, job: AuditJob) -> tuple[AuditJob, dict[str, Any], int]:
    """Return the job with the answer to audit, how it was obtained (the one sent, else an LLM
    draft) and how many citation anchors it has (``citations_of``: a Normal answer's record).

    Without an answer and without a usable LLM (none configured, residency, budget) the request
    is refused naming ``answer``: Theoria does not invent answers offline for a front end.
    The draft uses the job's plan and client: the audit that follows uses the same, so the
    draft's calls and tokens are stored on its run. ``request`` is read, never changed: a drafted
    answer's contexts (with the citation keys the draft gave them) are the returned job's.
    """
    contexts: list[dict[str, Any]] | None = None  # the request's, unless a draft gave them keys
    drafted: dict[str, Any] = {}
    if request.answer_json is not None:  # a malformed field or source ref: 400 before any audit
        structured_fields_check(request.answer_json, request.contexts)
        text = canonical_text(request.answer_json)
    elif request.answer is not None:
        if not request.answer.strip():
            raise InvalidInput("answer", "may not be blank.")
        text = request.answer
    else:  # an LLM's draft, with the contexts it gave citation keys
        setup = job.llm_setup
        if setup.client is None:
            raise Unavailable("answer", f"is required: no answer can be drafted ({setup.offline_reason}).")
        passages = [
            Passage(id=str(c["id"]), text=c["text"], title=c.get("title", ""), uri=c.get("uri", ""))
            for c in request.contexts
        ]
        draft = generate(setup.client, request.query, passages, job.verification.plan.generation_mode)
        keys = {p.id: [k for k, pid in draft.keys.items() if pid == p.id] for p in draft.passages}
        contexts = [
            {**c, "anchors": keys[str(c["id"])]} if keys.get(str(c["id"])) else c for c in request.contexts
        ]
        accounting = setup.client.accounting.run_fields()
        text, drafted = (
            draft.text,
            {
                "method": draft.method,
                "fallback": draft.fallback,
                "generation_mode": draft.mode,
                "citation_keys": draft.keys,
                "llm_calls": accounting["llm_calls"],
                "prompt_tokens": accounting["prompt_tokens"],
                "completion_tokens": accounting["completion_tokens"],
            },
        )
    citations = len(citations_of(text, request.contexts if contexts is None else contexts))
    return job.with_answer(text, contexts), drafted, citations


def _verify(job: AuditJob, decision: ModeDecision) -> Verified:
    """Audit-Local (with the revision loop), then Audit-Web when asked for or when docs/SPEC_NOTES.md#escalation-to-audit-web says
    so and the workspace allows external calls; computes, writes nothing (``submission_write`` writes it).

    The pipeline and the revision loop run outside any transaction (``audit_compute``,
    ``structured_compute``), and the Audit-Web rule is applied to what they decided. When the web
    must be consulted, its calls, methods and revision run next, still outside any transaction
    (``web_compute``, on the audit's result and the evidence rows it will store).
    """
    # The stored claims are those of the text received whatever the revision did, so every mode
    # audits and revises the same way first; the web step re-verifies the received claims and
    # revises again from the received text only when it brought evidence.
    computed, structured = None, None
    if job.answer_json is not None:  # one claim per field, checked against the passages its refs name
        structured = structured_compute(job)
        verdicts = structured.outcome.result.claims
    else:
        computed = audit_compute(job)
        verdicts = computed.result.claims
    escalation = web_escalation_of(verdicts, job.verification.thresholds)
    web = web_block(
        decision,
        escalation,
        structured=structured is not None,
        external_calls=job.workspace.allow_external_calls,
        plan=job.verification.plan,
    )
    web_pass = None
    if computed is not None and web and "status" not in web:  # the web must be consulted, now
        rows = evidence_rows_of(computed.result, computed.kb_meta)  # as they will be stored
        web_pass = web_compute(job=job, result=computed.result, evidence=rows, reasons=escalation.reasons)
    return Verified(web=web, computed=computed, structured=structured, web_pass=web_pass)


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
    job, drafted, citations = _draft(request, job)
    closing = Closing(
        decision=decision,
        user=user,
        key=idempotency_key,
        fingerprint=fingerprint,
        drafted=drafted,
        citations=citations,
        on_stored=on_stored,
    )
    # Normal: recorded as received; else verified first (TooLarge when the answer has more claims
    # than the workspace audits), outside any transaction; then the one write
    if not normal:
        job = job.with_claims()
    verified = None if normal else _verify(job, decision)
    return submission_write(job, closing, verified)
