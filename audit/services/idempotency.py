"""The Idempotency-Key of an audit request: the answer of a retried key (its first answer, unchanged,
or the job that queued its audit), the same body being the same fingerprint (the API's
``request_fingerprint``). ``audit.services.submission_write`` stores the key with the answer; a
request whose key is already stored is answered here before anything is computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User

from audit import hooks
from audit.errors import Conflict
from audit.models import Answer, BackgroundJob, IdempotencyKey, Workspace


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


def submission_replay(
    *, workspace: Workspace, user: User | None, key: str, fingerprint: str
) -> Submission | None:
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


def queued_audit_of(
    *, workspace: Workspace, user: User | None, key: str, fingerprint: str
) -> BackgroundJob | None:
    """The job that queued the audit of a retried key (the same body; another body is 409), or None."""
    if user is None:
        return None
    queued = BackgroundJob.objects.filter(
        workspace=workspace, user=user, kind=BackgroundJob.KIND_AUDIT, key=key
    ).first()
    if queued is not None and queued.fingerprint != fingerprint:
        raise Conflict(f'Idempotency-Key "{key}" was already used with a different request body.')
    return queued
