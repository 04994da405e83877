"""The one write of an audit request (docs/ARCHITECTURE.md, "The path of one audit").

What a request computed (``audit.services.submissions``: the drafted or received answer, its
audit, its Audit-Web pass) is written here, in one short transaction: the answer, its claims and
evidence, the run, the web step's rows, the events (noted as the rows are written, appended
together), the idempotency key, the intake of what needs people and the caller's own rows. The
returned :class:`Submission` is what was written, so the response is built from it; a retried
idempotency key is answered from its first answer (``audit.services.idempotency``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from audit import constants, hooks
from audit.models import Answer, Evidence, IdempotencyKey
from audit.pipeline.local_audit import LocalAudit
from audit.services.audit import audit_store
from audit.services.events import Event, events_write
from audit.services.idempotency import Submission, submission_replay
from audit.services.job import AuditJob
from audit.services.modes import ModeDecision
from audit.services.web import WebPass, web_store
from audit.services.write_priority import at_web_priority


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
class Closing:
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
class Verified:
    """What the verification of a request computed before anything is written (from the pipeline's
    ``SubmissionResult``): the audit (or the structured audit), the evidence rows of its claims, the
    Audit-Web block and, when the web was consulted, its pass."""

    web: dict[str, Any]
    evidence: dict[str, list[Evidence]]  # the rows each claim is stored with (``evidence_rows_of``)
    computed: LocalAudit  # the audit (or the structured audit)
    web_pass: WebPass | None = None


@at_web_priority  # a task worker's write holds SQLite's lock at the web's priority
def submission_write(job: AuditJob, closing: Closing, verified: Verified | None) -> Submission:
    """Write the request in one short transaction, so a failed request stores nothing and nothing
    is stored to be deleted: the answer (a Normal one as received, ``verified`` None), its claims,
    the web step's rows, the events (noted as the rows are written, appended together), the
    idempotency key, the intake of what needs people (docs/SPEC_NOTES.md#human-escalation) and the
    caller's own rows. Returns the submission as written: the answer, the ``web`` block and what
    the intake opened, by claim; a concurrent request that committed the same idempotency key
    first answers it, as a retry would (``submission_replay``).

    The ``web`` block's ``status`` is ``done``, ``failed`` (every web call failed: the run carries
    WEB_VERIFICATION_FAILED and the answer stays Audit-Local, its mode naming what verified it) or
    ``skipped: <why>``; ``failures`` lists each failed call; ``requested`` keeps what was asked for.
    """
    events: list[Event] = []
    web: dict[str, Any] = {} if verified is None else verified.web
    opened: dict[int, list[dict[str, Any]]] = {}
    try:
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
            else:
                answer = audit_store(verified.computed, job, evidence=verified.evidence, events=events)
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
                    extras={
                        "mode_decision": closing.decision.as_dict(),
                        "web": web,
                        "drafted": closing.drafted,
                    },
                )
            events_write(events, actor=closing.user, workspace=job.workspace)
            if verified is not None:
                opened = hooks.answer_intake(answer=answer, actor=closing.user)
            if closing.on_stored is not None:
                closing.on_stored(answer)
    except IntegrityError:
        # A concurrent request with the same key committed first: answer as a retry would.
        if closing.key:
            replay = submission_replay(
                workspace=job.workspace, user=closing.user, key=closing.key, fingerprint=closing.fingerprint
            )
            if replay is not None:
                return replay
        raise
    return Submission(
        answer=answer,
        decision=closing.decision.as_dict(),
        web=web,
        drafted=closing.drafted,
        escalations=opened,
    )
