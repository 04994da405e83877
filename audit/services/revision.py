"""Store what the revision loop did (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): the revised answer, the original and the ledger.

``audit_and_store(..., revise=True)`` (``audit.services.audit``) runs ``revision_run`` on the
pipeline's result, stores the claims of the answer as received, then calls ``revision_record``
in the same transaction: the claims keep their text and verdict, and each claim the kept
attempt changed gets its ``revision`` (strategy, new wording, its own verdict, the judgement of
its sentence as a whole, passage). The audit event ``answer.revised`` lists the edits per
strategy, the kept attempt, the warnings and whether the revision was served or held.

Where the workspace holds revisions for approval (``Workspace.holds_revisions``: every domain, or
its regulated ones), a revision that changes only citations may still be served at once
(``Workspace.citation_only_revisions``, default: except in regulated domains; the revision entry
then says ``served_without_approval: citations_only``). Otherwise the answer is served as received and the revised text waits in
``proposed_text`` (``revision_status`` proposed) until ``answer_revision_decide`` accepts it (it
becomes the served text) or rejects it; the decision is an audit event, and the apps registered
with ``audit.hooks.answer_decided`` (escalation's notifications) hear of it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit import hooks, roles
from audit.errors import AlreadyDone, Conflict, NotAllowed
from audit.models import Answer, VerificationRun
from audit.models.choices import RevisionStatus
from audit.pipeline.job import VerificationJob
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.revision import RevisionOptions, RevisionOutcome, revise_job
from audit.pipeline.types import AuditResult
from audit.services.events import Actor, AnyUser, Event, actor_user, event_record, events_write
from audit.services.job import revision_options as revision_options  # the job reads them; re-exported
from audit.services.reviewed_examples import revision_review_example_record

SOURCE = "revision_loop"


def revision_run(
    job: VerificationJob,
    *,
    initial: AuditResult | None = None,
    kb: KnowledgeBase | None = None,
    options: RevisionOptions | None = None,
    given: int | None = None,
) -> RevisionOutcome:
    """Revise the job's answer from its first audit ``initial`` (audited here when None); stores nothing.

    The job gives the query, text, passages, domain, the plan's thresholds and the LLM client its
    LLM methods may call (None: the offline strategies). ``kb`` is the pipeline's ``KnowledgeBase``
    (corrective retrieval searches it); ``options`` default to the settings; ``given``: how many
    of the job's passages the request sent (the rest is evidence, cited as ``[n]``).
    """
    return revise_job(job, initial=initial, kb=kb, options=options or revision_options(), given=given)


@transaction.atomic
def revision_record(
    *, answer: Answer, run: VerificationRun, outcome: RevisionOutcome, actor: Actor = None
) -> Answer:
    """Put a revision outcome on ``answer`` and ``run`` and record the ``answer.revised`` event
    (:func:`revision_apply`, then its event written)."""
    events: list[Event] = []
    answer = revision_apply(answer=answer, run=run, outcome=outcome, events=events)
    events_write(events, actor=actor_user(actor), workspace=answer.workspace)
    return answer


def revision_apply(
    *, answer: Answer, run: VerificationRun, outcome: RevisionOutcome, events: list[Event]
) -> Answer:
    """Put a revision outcome on ``answer`` and ``run`` (call inside a transaction) and note the
    ``answer.revised`` (or ``answer.revision_checked``) event in ``events``.

    ``answer.original_text`` keeps the answer as received (set once); ``answer.text`` becomes
    the kept attempt; ``answer.revisions`` gains one entry (text, ledger, warnings, stop reason,
    the passages its ``[n]`` markers name beyond the request's); ``run.revision_history`` holds
    every attempt (text, per-claim ledger, edits, decision); each stored claim gets the revision
    of the claim with its id and text in the outcome's first attempt (or none).
    """
    if not answer.original_text:
        answer.original_text = outcome.original_text
    citations_only = outcome.revised and outcome.citations_only
    held = outcome.revised and answer.workspace.holds_revisions(answer.domain, citations_only=citations_only)
    # held were it not for changing only citations: served, and said so on the revision
    unheld = citations_only and not held and answer.workspace.holds_revisions(answer.domain)
    answer.text = outcome.original_text if held else outcome.final_text
    answer.proposed_text = outcome.final_text if held else ""
    answer.revision_status = (
        RevisionStatus.PROPOSED if held else RevisionStatus.SERVED if outcome.revised else ""
    )
    answer.revision_decision = {}
    if outcome.revised:
        answer.revisions = [
            *(answer.revisions or []),
            {
                "source": SOURCE,
                "at": timezone.now().isoformat(),
                "text": outcome.final_text,
                "ledger": outcome.ledger_json(),
                "warnings": outcome.warnings,
                "stop_reason": outcome.stop_reason,
                "kept_attempt": outcome.kept,
                "attempts": len(outcome.attempts),
                "citations": cited_passages(outcome),
                "status": answer.revision_status,
                "served_without_approval": "citations_only" if unheld else "",
            },
        ]
    answer.full_clean()
    answer.save(
        update_fields=[
            "original_text",
            "text",
            "revisions",
            "proposed_text",
            "revision_status",
            "revision_decision",
        ]
    )
    claims_record_revisions(answer=answer, outcome=outcome)
    run.revision_history = outcome.history_json()
    codes = {w.get("code") for w in run.warnings or []}
    run.warnings = [*(run.warnings or []), *(w for w in outcome.warnings if w["code"] not in codes)]
    run.full_clean()
    run.save(update_fields=["revision_history", "warnings"])
    events.append(
        Event(
            "answer.revised" if outcome.revised else "answer.revision_checked",
            answer,
            {
                "run": run.pk,
                "attempts": len(outcome.attempts),
                "kept_attempt": outcome.kept,
                "stop_reason": outcome.stop_reason,
                "edits": dict(Counter(e.strategy for e in outcome.edits)),
                "warnings": [w["code"] for w in outcome.warnings],
                "status": answer.revision_status,
                "served_without_approval": "citations_only" if unheld else "",
            },
        )
    )
    return answer


DECISIONS = {"accept": RevisionStatus.ACCEPTED, "reject": RevisionStatus.REJECTED}


@transaction.atomic
def answer_revision_decide(*, answer: Answer, actor: AnyUser, decision: str, reason: str) -> Answer:
    """Accept or reject an answer's held revision, with a reason; return the answer.

    Accepting makes the proposed text the served ``text``; rejecting keeps the answer as received.
    The claims, their verdicts and their cases are untouched either way. A conditional update on
    the proposed status decides who wins when two people decide at once: the other gets
    :class:`~audit.errors.Conflict` naming the decision that stands, or
    :class:`~audit.errors.AlreadyDone` when it was their own (a double submit). Records the audit
    event ``answer.revision_accepted`` / ``answer.revision_rejected`` and announces it
    (``hooks.answer_decided``: escalation notifies the workspace's targets, webhook and e-mail).
    Each revised claim's wording becomes a reviewed example (SUPPORTED when accepted, NEI when
    rejected), as a case resolution does.
    """
    if not roles.can_review(actor):
        raise NotAllowed("deciding on a held revision needs a reviewer role")
    errors = {}
    if decision not in DECISIONS:
        errors["decision"] = "decision must be accept or reject"
    reason = (reason or "").strip()
    if not reason:
        errors["reason"] = "say why you accept or reject this revision"
    if errors:
        raise ValidationError(errors)
    status = DECISIONS[decision]
    now = timezone.now()
    by = actor.get_username()
    record = {"decision": decision, "by": by, "at": now.isoformat(), "reason": reason}
    changes = {"revision_status": status, "revision_decision": record}
    if status == RevisionStatus.ACCEPTED:
        changes["text"] = answer.proposed_text
    moved = Answer.objects.filter(pk=answer.pk, revision_status=RevisionStatus.PROPOSED).update(**changes)
    if moved != 1:
        current = Answer.objects.filter(pk=answer.pk).values("revision_status", "revision_decision").first()
        earlier = (current.get("revision_decision") if current else None) or {}
        if current and current["revision_status"] == status and earlier.get("by") == by:
            raise AlreadyDone(
                f"You already {status} this revision at {earlier.get('at', '')[11:19]} UTC; "
                "the second request changed nothing."
            )
        if current and earlier:
            raise Conflict(
                f"this revision was already {current['revision_status']} by {earlier.get('by')} "
                f"at {earlier.get('at', '')[11:19]} UTC; reload the answer"
            )
        raise Conflict(f"{answer.public_id} has no revision awaiting approval")
    answer = Answer.objects.select_for_update().get(pk=answer.pk)
    answer.revisions = [
        *(answer.revisions or []),
        {"source": "approval", **record, "status": status, "text": answer.text},
    ]
    answer.save(update_fields=["revisions"])
    event = event_record(
        action=f"answer.revision_{status}",
        obj=answer,
        actor=actor,
        workspace=answer.workspace,
        details={
            "answer_id": answer.public_id,
            "status": status,
            "decision": decision,
            "reason": reason,
            "served": "proposed" if status == RevisionStatus.ACCEPTED else "as_received",
        },
    )
    for claim in answer.claims.exclude(revision__isnull=True):  # each revised wording, a labelled example
        revision_review_example_record(
            claim=claim, accepted=status == RevisionStatus.ACCEPTED, actor=actor, rationale=reason
        )
    hooks.answer_decided(answer=answer, audit_event=event)
    return answer


def cited_passages(outcome: RevisionOutcome) -> list[dict[str, Any]]:
    """The passages the revised text names by position beyond the request's (``[n]``)."""
    return [
        {"anchor": str(n), "id": p.id, "title": p.title, "uri": p.uri, "source_type": p.source_type}
        for n, p in enumerate(outcome.passages, start=1)
        if n > outcome.given
    ]


def claims_record_revisions(*, answer: Answer, outcome: RevisionOutcome) -> None:
    """Put each claim's remediation on its row (``Claim.revision``); the claim's own text and verdict stay."""
    first = {c.claim.claim_id: c.claim.text for c in outcome.attempts[0].result.claims}
    revisions = outcome.claim_revisions() if outcome.revised else {}
    for claim in answer.claims.all():
        revision = revisions.get(claim.claim_id) if first.get(claim.claim_id) == claim.text else None
        if claim.revision != revision:
            claim.revision = revision
            claim.save(update_fields=["revision"])
