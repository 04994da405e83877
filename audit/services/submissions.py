"""Audit requests of the RAG front end: idempotency, mode resolution, Normal-mode recording and
the hand-off to the verification pipeline (Audit-Local) and to web verification (Audit-Web).

``audit_submit`` is the one entry point (the API calls it). The verification itself belongs to
``audit.services.audit.audit_and_store``; web verification to ``audit.services.web``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction

from audit import constants, hooks
from audit.errors import Busy, Conflict, InvalidInput, TooLarge, Unavailable
from audit.models import Answer, IdempotencyKey, Workspace
from audit.pipeline.extraction import citations_of
from audit.pipeline.llm.generation import generate
from audit.pipeline.structured import canonical_text
from audit.pipeline.types import Passage
from audit.services.audit import AuditComputation, audit_compute, audit_store, evidence_rows_of
from audit.services.events import Actor, Event, actor_user, events_write
from audit.services.job import AuditJob, audit_job_build
from audit.services.modes import ModeDecision, mode_resolve, web_block, web_escalation_of
from audit.services.structured import (
    StructuredComputation,
    structured_compute,
    structured_fields_check,
    structured_store,
)
from audit.services.web import WebPass, web_compute, web_store


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


@dataclass
class Submission:
    answer: Answer
    decision: dict[str, Any]  # ModeDecision.as_dict()
    replayed: bool = False
    web: dict[str, Any] = field(
        default_factory=dict
    )  # {"requested", "reasons": {claim_id: [...]}, "status", ...}
    drafted: dict[str, Any] = field(default_factory=dict)  # how Theoria drafted the answer, when it did
    # the answer's claims put before people ({claim pk: [escalation refs]}): what the intake opened
    escalations: dict[int, list[dict[str, Any]]] = field(default_factory=dict)


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


def request_fingerprint(payload: Any) -> str:
    """Return sha256 of a request body in canonical JSON (key order and spacing do not matter)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _replay(*, workspace: Workspace, user: User | None, key: str, fingerprint: str) -> Submission | None:
    """The first answer of a retried key (its claims' cases as they stand now), or None."""
    stored = (
        IdempotencyKey.objects.select_related("answer")
        .filter(workspace=workspace, user=user, key=key)
        .first()
    )
    if stored is None:
        return None
    if stored.fingerprint != fingerprint:
        raise Conflict(f'Idempotency-Key "{key}" was already used with a different request body.')
    extras = stored.extras or {}
    return Submission(
        answer=stored.answer,
        decision=extras.get("mode_decision", {}),
        web=extras.get("web", {}),
        drafted=extras.get("drafted", {}),
        replayed=True,
        escalations=hooks.claim_escalations(stored.answer.claims.values_list("pk", flat=True)),
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
    if request.answer_json is not None:  # a malformed field or source ref: 400 before any audit
        structured_fields_check(request.answer_json, request.contexts)
        text, contexts, drafted = canonical_text(request.answer_json), None, {}
    elif request.answer is not None:
        if not request.answer.strip():
            raise InvalidInput("answer", "may not be blank.")
        text, contexts, drafted = request.answer, None, {}
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


def _normal_row(job: AuditJob, user: User | None) -> Answer:
    """The answer of a Normal request: recorded as received, not verified."""
    answer = Answer(
        workspace=job.workspace,
        user=user,
        conversation_id=job.conversation_id,
        query=job.verification.query,
        text=job.verification.answer_text,
        original_text=job.verification.answer_text,
        mode=constants.MODE_NORMAL,
        domain=job.verification.domain,
        reference=job.verification.reference or "",
        contexts=list(job.contexts),
        answer_json=job.answer_json,
    )
    answer.full_clean()
    answer.save()
    return answer


@dataclass(frozen=True)
class _Closing:
    """What the request's last rows need besides the answer: how the mode was decided, the
    idempotency key and body fingerprint, and how the answer was drafted."""

    decision: ModeDecision
    user: User | None  # the signed-in user who asked (resolved once), or None
    key: str
    fingerprint: str
    drafted: dict[str, Any]
    citations: int  # the citation anchors of the answer (``citations_of``)
    on_stored: Callable[[Answer], None] | None = None  # the caller's rows, in the same transaction


@dataclass
class _Verified:
    """What the verification of a request computed before anything is written: the audit (or the
    structured audit), the Audit-Web block and, when the web was consulted, its pass."""

    web: dict[str, Any]
    computed: AuditComputation | None = None
    structured: StructuredComputation | None = None
    web_pass: WebPass | None = None


def _verify(job: AuditJob, decision: ModeDecision) -> _Verified:
    """Audit-Local (with the revision loop), then Audit-Web when asked for or when docs/SPEC_NOTES.md#escalation-to-audit-web says
    so and the workspace allows external calls; computes, writes nothing (see :func:`_write`).

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
    return _Verified(web=web, computed=computed, structured=structured, web_pass=web_pass)


def _write(
    job: AuditJob, closing: _Closing, verified: _Verified | None
) -> tuple[Answer, dict[str, Any], dict[int, list[dict[str, Any]]]]:
    """Write the request in one short transaction, so a failed request stores nothing and nothing
    is stored to be deleted: the answer (a Normal one as received, ``verified`` None), its claims,
    the web step's rows, the events (noted as the rows are written, appended together), the
    idempotency key, the intake of what needs people (docs/SPEC_NOTES.md#human-escalation) and the
    caller's own rows. Returns the answer, the ``web`` block and what the intake opened, by claim.

    The ``web`` block says what the web step did: ``status`` is ``done`` (the web was
    consulted), ``failed`` (every web call was refused or failed, e.g. DNS failures or timeouts:
    the local result stands) or ``skipped: <why>``; ``failures`` lists each failed call (claim,
    provider, reason, detail). On ``failed`` the run carries the WEB_VERIFICATION_FAILED warning
    and the answer stays Audit-Local even when Audit-Web was requested: an answer's mode names
    what verified it, and claim cards or filters saying Audit-Web must mean web evidence was
    consulted. ``requested`` and the response's ``mode_decision`` keep what was asked for.
    """
    events: list[Event] = []
    web: dict[str, Any] = {} if verified is None else verified.web
    opened: dict[int, list[dict[str, Any]]] = {}
    with transaction.atomic():
        if verified is None:
            answer = _normal_row(job, closing.user)
            details = {
                "mode": answer.mode,
                "mode_decision": closing.decision.as_dict(),
                "drafted": closing.drafted,
                "citations": closing.citations,
            }
            events.append(Event("answer.recorded", answer, details))
        elif verified.structured is not None:
            answer = structured_store(verified.structured, job, events=events)
        else:
            assert verified.computed is not None
            answer = audit_store(verified.computed, job, mode=constants.MODE_AUDIT_LOCAL, events=events)
        if verified is not None and verified.web_pass is not None:
            outcome = web_store(verified.web_pass, answer=answer, actor=closing.user, events=events)
            web.update(
                status=f"skipped: {outcome.skipped}" if outcome.skipped else outcome.status,
                calls=outcome.calls,
                verified=outcome.verified,
                evidence_added=outcome.evidence_added,
                failures=outcome.failures,
            )
        if verified is not None:
            if web:
                events.append(Event("answer.web_escalation", answer, web))
            details = {**closing.decision.as_dict(), "final_mode": answer.mode}
            events.append(Event("answer.mode_resolved", answer, details))
        if closing.key and closing.user is not None:  # keys belong to a signed-in client (the API's)
            IdempotencyKey.objects.create(
                workspace=job.workspace,
                user=closing.user,
                key=closing.key,
                fingerprint=closing.fingerprint,
                answer=answer,
                extras={"mode_decision": closing.decision.as_dict(), "web": web, "drafted": closing.drafted},
            )
        events_write(events, actor=closing.user, workspace=job.workspace)
        if verified is not None:
            opened = hooks.answer_intake(answer=answer, actor=closing.user)
        if closing.on_stored is not None:
            closing.on_stored(answer)
    return answer, web, opened


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
    any transaction; the rows are then written in one short transaction (see ``_write``), so
    other requests are never kept waiting behind a long audit, a failure stores nothing and the
    key is stored with the answer. ``on_stored(answer)`` writes the caller's own rows in that
    transaction ("Audit now" links the two answers there); what it raises stores nothing. The
    actor is resolved once, here (``actor_user``): the job carries the signed-in user or None.
    """
    user = actor_user(user)
    if idempotency_key:
        if len(idempotency_key) > 255:
            raise InvalidInput("Idempotency-Key", "must be at most 255 characters.")
        replay = _replay(workspace=workspace, user=user, key=idempotency_key, fingerprint=fingerprint)
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
    decided = decision.as_dict()
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
    closing = _Closing(
        decision=decision,
        user=user,
        key=idempotency_key,
        fingerprint=fingerprint,
        drafted=drafted,
        citations=citations,
        on_stored=on_stored,
    )
    try:
        # Normal: recorded as received; else verified first (TooLarge when the answer has more
        # claims than the workspace audits), outside any transaction
        if not normal:
            job = job.with_claims()
        verified = None if normal else _verify(job, decision)
        answer, web, escalations = _write(job, closing, verified)
    except IntegrityError:
        # A concurrent request with the same key committed first: answer as a retry would.
        if idempotency_key:
            replay = _replay(workspace=workspace, user=user, key=idempotency_key, fingerprint=fingerprint)
            if replay is not None:
                return replay
        raise
    return Submission(answer=answer, decision=decided, web=web, drafted=drafted, escalations=escalations)
