"""Writes of the escalation workflow: intake, every case transition, the SLA sweep, notifications.

Each state change has exactly one function here; the API, the pages, the admin and the tasks
call them. A transition changes a case with a conditional update on ``(id, version, status)``
and checks the row count, so of two concurrent actions on one case exactly one succeeds and
the other raises :class:`~escalation.errors.CaseConflict`. Every transition writes a
``ReviewEvent`` row and an audit event in the same transaction; the kinds in
``ReviewEvent.NOTIFYING_KINDS`` also queue one ``Notification`` per target, delivered after
commit (and retried by the sweep).

Audit data (claim labels, answer suppression) changes only through ``audit.services.claims``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from audit import constants, roles
from audit.selectors.facade import Answer, Claim, Document, Label, Workspace, thresholds_for, workspace_of
from audit.services.claims import answer_suppress, claim_relabel
from audit.services.events import Actor, actor_user, event_record
from audit.services.reviewed_examples import case_decision_example_record

from . import policy, selectors
from .errors import AlreadyDone, CaseConflict, EscalationError, NotPermitted, TransitionNotAllowed
from .models import (
    CLOCK_STATUSES,
    OPEN_CASE_STATUSES,
    CaseStatus,
    CurationItem,
    ReviewCase,
    ReviewEvent,
    SlaState,
    TicketCounter,
)
from .notifications import notifications_queue

logger = logging.getLogger(__name__)

Decision = ReviewCase.Decision
RELABEL_DECISIONS: dict[str, str] = {
    Decision.RELABEL_SUPPORTED: Label.SUPPORTED,
    Decision.RELABEL_REFUTED: Label.REFUTED,
    Decision.RELABEL_NEI: Label.NEI,
}
SWEEP_ACTOR = "sla_sweep"
_SWEEP_MAX_STEPS = 10_000


# --- helpers ----------------------------------------------------------------------------------


def _required(value: str, field: str) -> str:
    text = (value or "").strip()
    if not text:
        raise ValidationError({field: f"{field} is required"})
    return text


def _require_tier(actor: Actor, tier: int, action: str) -> None:
    """Acting on a case needs a reviewer role of its tier or above (admins may do everything)."""
    if actor is None:
        return  # the system (intake, sweep) acts without a user
    if roles.review_tier(actor) < tier:
        raise NotPermitted(f"{action} a tier {tier} case needs the role {roles.TIER_ROLES[tier]} or above")


def _clock_start(
    case: ReviewCase, *, tier: int, start: datetime, used_s: float = 0.0, acknowledged: bool = False
) -> dict[str, Any]:
    """The columns of the clock a case runs at ``tier`` from ``start`` (``policy.clock_phase``: at L1
    the clock to acknowledge until it is acknowledged, then the clock to resolve)."""
    calendar = selectors.calendar_for_workspace(case.workspace)
    share = thresholds_for(case.workspace).sla_at_risk_share
    if not 0.0 < share <= 1.0:  # a bad override must not stop intake: fall back and say so
        logger.warning(
            "workspace %s: sla_at_risk_share %r is outside (0, 1]; using %s",
            case.workspace_id,
            share,
            constants.SLA_AT_RISK_SHARE,
        )
        share = constants.SLA_AT_RISK_SHARE
    phase = policy.clock_phase(tier, acknowledged=acknowledged)
    when = policy.deadlines(
        tier, calendar, start=start, used_seconds=used_s, at_risk_share=share, phase=phase
    )
    return {
        "clock_started_at": start,
        "clock_used_s": used_s,
        "due_at": when.due_at,
        "at_risk_at": when.at_risk_at,
    }


def _clock_stopped(used_s: float = 0.0) -> dict[str, Any]:
    return {"clock_started_at": None, "clock_used_s": used_s, "due_at": None, "at_risk_at": None}


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _record(
    case: ReviewCase,
    kind: str,
    *,
    actor: Actor = None,
    actor_label: str = "",
    reason: str = "",
    details: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> ReviewEvent:
    """Write the event row and the audit event of a transition; queue its notifications."""
    actor = actor_user(actor)
    label = actor_label or (actor.get_username() if actor else "system")
    event = ReviewEvent.objects.create(
        case=case,
        kind=kind,
        tier=case.tier,
        actor=actor,
        actor_label=label,
        reason=reason,
        details=details or {},
        at=at or timezone.now(),
    )
    event_record(
        action=f"case.{kind}",
        obj=case,
        actor=actor,
        actor_label=actor_label,
        workspace=case.workspace,
        details={
            "ticket": case.ticket,
            "tier": case.tier,
            "status": case.status,
            "reason": reason,
            **(details or {}),
        },
    )
    if kind in ReviewEvent.NOTIFYING_KINDS:
        notifications_queue(event)
    return event


# the event each transition records, and how a message says it was done
ACTION_KINDS = {
    "acknowledge": (ReviewEvent.Kind.ACKNOWLEDGED, "acknowledged"),
    "assign": (ReviewEvent.Kind.ASSIGNED, "assigned"),
    "unassign": (ReviewEvent.Kind.UNASSIGNED, "unassigned"),
    "escalate": (ReviewEvent.Kind.ESCALATED, "escalated"),
    "pause": (ReviewEvent.Kind.PAUSED, "paused"),
    "resume": (ReviewEvent.Kind.RESUMED, "resumed"),
    "resolve": (ReviewEvent.Kind.RESOLVED, "resolved"),
    "reopen": (ReviewEvent.Kind.REOPENED, "reopened"),
}
# the columns whose new value says a transition's change is in place
_TARGET_COLUMNS = ("status", "tier", "owner", "decision")


def _own_earlier_success(
    case: ReviewCase, current: ReviewCase | None, changes: dict[str, Any], action: str, actor: Actor
) -> ReviewEvent | None:
    """The actor's own event of this very change, when it is the last transition of the case and the
    case is in the state the change asks for (a double submit whose first request succeeded): read
    before it (``current`` one version on) or after it (``case`` is ``current``). None otherwise."""
    actor = actor_user(actor)
    if actor is None or current is None or action not in ACTION_KINDS:
        return None
    if current.version not in (case.version, case.version + 1):
        return None
    for column in _TARGET_COLUMNS:
        if column not in changes:
            continue
        wanted = changes[column]
        have = current.owner_id if column == "owner" else getattr(current, column)
        if (wanted.pk if column == "owner" and wanted is not None else wanted) != have:
            return None
    event = current.events.exclude(kind=ReviewEvent.Kind.NOTE).order_by("-at", "-id").first()
    if event is None or event.kind != ACTION_KINDS[action][0] or event.actor_id != actor.pk:
        return None
    return event


def _already_done(
    case: ReviewCase, current: ReviewCase | None, changes: dict[str, Any], action: str, actor: Actor
) -> None:
    """Raise :class:`AlreadyDone` when the actor's own earlier request made this very change."""
    own = _own_earlier_success(case, current, changes, action, actor)
    if own is not None:
        raise AlreadyDone(
            f"You already {ACTION_KINDS[action][1]} {case.ticket} at {own.at:%H:%M:%S} UTC; "
            "the second request changed nothing."
        )


def _transition(
    case: ReviewCase, *, allowed: tuple[Any, ...], changes: dict[str, Any], action: str, actor: Actor = None
) -> ReviewCase:
    """Apply ``changes`` if the case is still what the caller saw; raise on a concurrent change.

    The new state is validated with ``full_clean`` first; then one conditional UPDATE on
    (id, version, status) does the change, and its row count tells whether we won. When we lost
    to our own earlier request (the same actor, the same change, nothing else since: a double
    submit), :class:`AlreadyDone` says so instead of blaming someone else.
    """
    if case.status not in allowed:
        _already_done(case, case, changes, action, actor)
        raise TransitionNotAllowed(
            f"cannot {action} {case.ticket}: it is {case.get_status_display().lower()}"
        )
    candidate = ReviewCase.objects.get(pk=case.pk)
    for key, value in changes.items():
        setattr(candidate, key, value)
    candidate.full_clean(exclude=["number", "ticket"], validate_unique=False)
    try:
        with transaction.atomic():
            moved = ReviewCase.objects.filter(id=case.id, version=case.version, status=case.status).update(
                **changes, version=F("version") + 1
            )
    except IntegrityError:
        raise TransitionNotAllowed(
            f"cannot {action} {case.ticket}: another case is open for the same claim"
        ) from None
    if moved != 1:
        current = ReviewCase.objects.select_related("owner").filter(id=case.id).first()
        _already_done(case, current, changes, action, actor)
        who = f" by {current.owner.get_username()}" if current and current.owner is not None else ""
        state = current.get_status_display().lower() if current else "deleted"
        raise CaseConflict(
            f"{case.ticket} was changed by someone else (now {state}{who}, tier {current.tier if current else '?'}); reload it and try again"
        )
    case.refresh_from_db()
    return case


def _next_ticket_number() -> int:
    """Take the next ticket number; the counter row stays locked until the transaction commits."""
    prefix = constants.ESCALATION_TICKET_PREFIX
    TicketCounter.objects.get_or_create(prefix=prefix)
    TicketCounter.objects.filter(prefix=prefix).update(last=F("last") + 1)
    return TicketCounter.objects.get(prefix=prefix).last


# --- intake -------------------------------------------------------------------------------------


def _case_create(
    *,
    claim: Claim,
    trigger: str,
    actor: Actor = None,
    reason: str = "",
    now: datetime | None = None,
    reasons: list[str] | None = None,
) -> ReviewCase | None:
    """Open a tier-1 case for ``claim``; return None when one is already open (a concurrent intake)."""
    answer = claim.answer
    workspace = answer.workspace
    now = now or timezone.now()
    regulated = workspace.is_regulated(answer.domain)
    try:
        with transaction.atomic():
            number = _next_ticket_number()
            case = ReviewCase(
                workspace=workspace,
                number=number,
                ticket=policy.ticket_key(number),
                claim=claim,
                domain=answer.domain or "",
                trigger=trigger,
                reasons=list(reasons or [trigger]),
                tier=policy.FIRST_TIER,
                opened_at=now,
                risk_score=policy.risk_score(
                    importance=claim.importance,
                    label=claim.label,
                    confidence=claim.confidence,
                    regulated=regulated,
                ),
                summary=claim.text[:500],
            )
            for key, value in _clock_start(case, tier=policy.FIRST_TIER, start=now).items():
                setattr(case, key, value)
            case.full_clean(validate_constraints=False)
            case.save()
    except IntegrityError:
        return None
    _record(
        case,
        ReviewEvent.Kind.OPENED,
        actor=actor,
        actor_label="" if actor_user(actor) else "intake",
        reason=reason or ReviewCase.Trigger(trigger).label,
        at=now,
        details={
            "trigger": trigger,
            "reasons": case.reasons,
            "label": claim.label,
            "confidence": claim.confidence,
            "risk_score": case.risk_score,
            "revision": claim.revision,
        },
    )
    return case


def _cases_of(claims: list[Claim], earlier_answers: list[int]) -> dict[int, ReviewCase | None]:
    """The case each of ``claims`` already belongs to (its open one first, then its latest), or
    None, by the claim's pk; four queries whatever the number of claims.

    A claim belongs to the cases opened for it and to those it joined; a claim of a later audit of
    the same answer (same workspace, query and text as received) belongs to the case of the same
    claim (same text) in the earlier audit: a re-audit adds to that case, never a duplicate. Among
    several open cases the first in the queue's order wins (``ReviewCase.Meta.ordering``: highest
    risk, then the earliest due, a stopped clock last), else the latest opened.
    """
    if not claims:
        return {}
    same_text: dict[str, list[int]] = {}
    for pk, text in Claim.objects.filter(
        answer_id__in=earlier_answers, text__in={c.text for c in claims}
    ).values_list("pk", "text"):
        same_text.setdefault(text, []).append(pk)
    related = {c.pk for c in claims} | {pk for pks in same_text.values() for pk in pks}
    by_claim: dict[int, set[int]] = {}
    for case_id, claim_id in ReviewCase.objects.filter(claim_id__in=related).values_list("pk", "claim_id"):
        by_claim.setdefault(claim_id, set()).add(case_id)
    joined = ReviewCase.joined_claims.through.objects.filter(claim_id__in=related)
    for case_id, claim_id in joined.values_list("reviewcase_id", "claim_id"):
        by_claim.setdefault(claim_id, set()).add(case_id)
    cases = ReviewCase.objects.in_bulk({pk for pks in by_claim.values() for pk in pks})
    found: dict[int, ReviewCase | None] = {}
    for claim in claims:
        ids = set().union(*(by_claim.get(pk, set()) for pk in [claim.pk, *same_text.get(claim.text, [])]))
        mine = [cases[pk] for pk in ids]
        open_ = [c for c in mine if c.status in OPEN_CASE_STATUSES]
        if open_:
            found[claim.pk] = min(
                open_, key=lambda c: (-c.risk_score, c.due_at is None, c.due_at or c.opened_at, c.pk)
            )
        else:
            found[claim.pk] = max(mine, key=lambda c: (c.opened_at, c.pk), default=None)
    return found


def _earlier_audits(answer: Answer) -> list[int]:
    """The earlier audits of the same answer: same workspace, query and text as received."""
    return list(
        Answer.objects.filter(
            workspace_id=answer.workspace_id, query=answer.query, original_text=answer.original_text
        )
        .exclude(pk=answer.pk)
        .values_list("pk", flat=True)
    )


def _case_join(case: ReviewCase, joining: list[tuple[Claim, list[str]]]) -> ReviewCase:
    """Add the re-audited (or re-checked) claims that belong to ``case`` to it, with one note for
    them all; reopen a resolved case when the audit finds a reason the case did not have (a new
    finding is never hidden)."""
    claims = [claim for claim, _ in joining]
    already = set(case.joined_claims.filter(pk__in=[c.pk for c in claims]).values_list("pk", flat=True))
    added = [c for c in claims if c.pk != case.claim_id and c.pk not in already]
    if added:
        case.joined_claims.add(*added)
        first = added[0]
        if len(added) == 1:
            reason = (
                f"A later audit of the same answer ({first.answer.public_id}, {first.claim_id}) "
                f"found this claim {first.label}: it joins this case"
            )
            details: dict[str, Any] = {"joined_claim": first.pk, "label": first.label}
        else:
            shown = ", ".join(c.claim_id for c in added[: constants.CASE_NOTE_CLAIMS_SHOWN])
            more = "" if len(added) <= constants.CASE_NOTE_CLAIMS_SHOWN else ", …"
            reason = (
                f"A later audit of the same answer ({first.answer.public_id}) found {len(added)} of its "
                f"claims again ({shown}{more}): they join this case"
            )
            details = {"joined_claims": [c.pk for c in added], "labels": {c.claim_id: c.label for c in added}}
        _record(
            case,
            ReviewEvent.Kind.NOTE,
            actor_label="intake",
            reason=reason,
            details={**details, "answer": first.answer.public_id},
        )
    new = list(dict.fromkeys(r for _, reasons in joining for r in reasons if r not in (case.reasons or [])))
    if case.status == CaseStatus.RESOLVED and new:
        labels = ", ".join(dict.fromkeys(c.label for c, rs in joining if set(rs) & set(new)))
        case = case_reopen(case=case, actor=None, reason=f"A later audit found: {', '.join(new)} ({labels})")
        ReviewCase.objects.filter(pk=case.pk).update(reasons=[*case.reasons, *new])
        case.reasons = [*case.reasons, *new]
    return case


@transaction.atomic
def cases_open_for_answer(
    *, answer: Answer, actor: Actor = None, held: dict[int, list[ReviewCase]] | None = None
) -> list[ReviewCase]:
    """Put each claim of ``answer`` that needs a human in a case; return those cases.

    The claims are those of the answer as received: a claim needs review when it is not labelled
    SUPPORTED (REFUTED, even when the revision loop corrected it: reasons ``refuted`` and
    ``auto_corrected``, unless the workspace's ``auto_corrected_review`` spares a minor one; NEI
    at any confidence, reason ``unsupported``, unless ``unsupported_review`` spares a minor one),
    or when the answer's domain is regulated in its workspace (``policy.review_reasons``). A claim
    that already belongs to a case (its own, or the same claim of an earlier audit of the same
    answer) joins it, and a resolved one is reopened for a new reason; otherwise a case is opened.
    So every such claim belongs to exactly one case; ``held``, when given, gets that case under
    the claim's pk.
    """
    workspace = answer.workspace
    thresholds = thresholds_for(workspace)
    claims = list(answer.claims.select_related("answer__workspace").order_by("span_start", "id"))
    earlier = _earlier_audits(answer)
    result = []
    needing: list[tuple[Claim, list[str]]] = []
    for claim in claims:
        reasons = policy.review_reasons(
            label=claim.label,
            confidence=claim.confidence,
            domain=answer.domain,
            regulated_domains=workspace.regulated_domains,
            low_confidence_threshold=thresholds.low_confidence_threshold,
            revision=claim.revision,
            importance=claim.importance,
            auto_corrected_review=thresholds.auto_corrected_review,
            unsupported_review=thresholds.unsupported_review,
            risk_flags=claim.risk_flags or (),
        )
        if reasons:
            needing.append((claim, reasons))
    belongs = _cases_of([claim for claim, _ in needing], earlier)
    new = [(claim, reasons) for claim, reasons in needing if belongs[claim.pk] is None]
    group = _case_group_open(new, actor=actor) if len(new) >= constants.CASES_GROUPED_FROM else None
    # each case the audit's claims already belong to is joined once, by all of them together
    joining: dict[int, tuple[ReviewCase, list[tuple[Claim, list[str]]]]] = {}
    for claim, reasons in needing:
        owner = belongs[claim.pk]
        if owner is not None:
            joining.setdefault(owner.pk, (owner, []))[1].append((claim, reasons))
    joined = {pk: _case_join(case, pairs) for pk, (case, pairs) in joining.items()}
    for claim, reasons in needing:
        owner = belongs[claim.pk]
        if owner is not None:
            case = joined[owner.pk]
        elif group is not None:
            case = group
        else:
            created = _case_create(claim=claim, trigger=reasons[0], actor=actor, reasons=reasons)
            # None: opened by a concurrent intake between our read and our insert
            case = created or ReviewCase.objects.get(claim=claim, status__in=OPEN_CASE_STATUSES)
        if held is not None:
            held.setdefault(claim.pk, []).append(case)
        if case not in result:
            result.append(case)
    return result


def _case_group_open(new: list[tuple[Claim, list[str]]], *, actor: Actor = None) -> ReviewCase:
    """One case for the many claims of one answer that need a person and belong to no case yet
    (``CASES_GROUPED_FROM``): its claim is the first REFUTED one (else the first), the others join
    it, its reasons are theirs together, and one note says how many claims it holds."""
    first = next((pair for pair in new if pair[0].label == Label.REFUTED), new[0])
    reasons = list(dict.fromkeys(r for _, rs in [first, *new] for r in rs))
    case = _case_create(claim=first[0], trigger=first[1][0], actor=actor, reasons=reasons)
    if case is None:  # a concurrent intake opened the first claim's case: the others join that one
        case = ReviewCase.objects.get(claim=first[0], status__in=OPEN_CASE_STATUSES)
    others = [claim for claim, _ in new if claim.pk != case.claim_id]
    case.joined_claims.add(*others)
    _record(
        case,
        ReviewEvent.Kind.NOTE,
        actor_label="intake",
        reason=f"One audit of {first[0].answer.public_id} found {len(new)} claims that need a person: "
        f"they are grouped in this case",
        details={"grouped_claims": [c.pk for c, _ in new], "answer": first[0].answer.public_id},
    )
    return case


def answer_intake(*, answer: Answer, actor: Actor = None) -> dict[int, list[dict[str, Any]]]:
    """Audit's ``answer_intake`` receiver: :func:`cases_open_for_answer`, answered as the escalation
    log of each claim put in a case ({claim pk: [refs]}, as ``selectors.claim_escalations`` reads
    it), so the request that stored the answer answers with what it wrote."""
    held: dict[int, list[ReviewCase]] = {}
    cases_open_for_answer(answer=answer, actor=actor, held=held)
    return {pk: [selectors.escalation_ref(case) for case in cases] for pk, cases in held.items()}


@transaction.atomic
def case_open(*, claim: Claim, actor: Actor, reason: str) -> ReviewCase:
    """Escalate a claim by hand (a moderator); refuse when a case is already open for it (its own,
    or one it joined as a re-audit of the same answer)."""
    reason = _required(reason, "reason")
    if actor is not None and not roles.can_review(actor):
        raise NotPermitted("opening a case needs a reviewer role")
    existing = (
        ReviewCase.objects.filter(Q(claim=claim) | Q(joined_claims=claim), status__in=OPEN_CASE_STATUSES)
        .distinct()
        .first()
    )
    if existing is not None:
        raise TransitionNotAllowed(f"{existing.ticket} is already open for this claim")
    case = _case_create(claim=claim, trigger=ReviewCase.Trigger.MANUAL, actor=actor, reason=reason)
    if case is None:
        raise CaseConflict("another case was opened for this claim at the same moment")
    return case


# --- transitions ------------------------------------------------------------------------------


@transaction.atomic
def case_acknowledge(*, case: ReviewCase, actor: Actor, note: str = "") -> ReviewCase:
    """Take an open case: the actor becomes its owner unless it has one.

    At a tier with a clock to acknowledge (L1), that clock stops and the tier's resolution clock
    starts now, on track (``SLA_RESOLUTION_BY_TIER``); an acknowledgement after the deadline that
    the sweep has not marked yet is marked breached first, so the breach is counted either way.
    At L2/L3 the one clock, to resolve, runs on. A ``note`` (optional) is added in the same
    transaction, so an acknowledgement never lands without the note that came with it.
    """
    _require_tier(actor, case.tier, "acknowledging")
    now = timezone.now()
    changes = {"status": CaseStatus.ACKNOWLEDGED, "acknowledged_at": now}
    if not case.owner_id and actor_user(actor):
        changes["owner"] = actor
    clock_changes = policy.clock_phase(case.tier, acknowledged=False) != policy.clock_phase(
        case.tier, acknowledged=True
    )
    late = case.status == CaseStatus.OPEN and case.sla_state_at(now) == SlaState.BREACHED
    if clock_changes:
        if late and case.sla_state != SlaState.BREACHED:
            _sla_mark(case, SlaState.BREACHED, now)
        changes["sla_state"] = SlaState.ON_TRACK
        changes.update(_clock_start(case, tier=case.tier, start=now, acknowledged=True))
    case = _transition(case, allowed=(CaseStatus.OPEN,), changes=changes, action="acknowledge", actor=actor)
    _record(
        case,
        ReviewEvent.Kind.ACKNOWLEDGED,
        actor=actor,
        at=now,
        details={
            "within_sla": not late,
            "clock": policy.clock_phase(case.tier, acknowledged=True),
            "due_at": case.due_at.isoformat() if case.due_at else None,
        },
    )
    if note.strip():
        case_note(case=case, actor=actor, note=note)
    return case


@transaction.atomic
def case_assign(*, case: ReviewCase, actor: Actor, owner: User, reason: str = "") -> ReviewCase:
    """Assign or reassign an open case to a reviewer of its tier (or above)."""
    _require_tier(actor, case.tier, "assigning")
    home = workspace_of(owner) if owner is not None else None
    if home is None or home.pk != case.workspace_id:
        raise ValidationError({"owner": "the owner must be an active user of the case's workspace"})
    if roles.review_tier(owner) < case.tier:
        raise ValidationError(
            {"owner": f"the owner must hold the role {roles.TIER_ROLES[case.tier]} or above"}
        )
    previous = case.owner.get_username() if case.owner is not None else None
    case = _transition(
        case, allowed=OPEN_CASE_STATUSES, changes={"owner": owner}, action="assign", actor=actor
    )
    _record(
        case,
        ReviewEvent.Kind.ASSIGNED,
        actor=actor,
        reason=reason,
        details={"from": previous, "to": owner.get_username()},
    )
    return case


@transaction.atomic
def case_unassign(*, case: ReviewCase, actor: Actor, reason: str = "") -> ReviewCase:
    """Take the owner off an open case (it goes back to the unassigned pile); its clock is unchanged."""
    _require_tier(actor, case.tier, "unassigning")
    if case.owner is None:
        raise TransitionNotAllowed(f"cannot unassign {case.ticket}: it has no owner")
    previous = case.owner.get_username()
    case = _transition(
        case, allowed=OPEN_CASE_STATUSES, changes={"owner": None}, action="unassign", actor=actor
    )
    _record(
        case, ReviewEvent.Kind.UNASSIGNED, actor=actor, reason=reason, details={"from": previous, "to": None}
    )
    return case


@transaction.atomic
def case_note(*, case: ReviewCase, actor: Actor, note: str) -> ReviewEvent:
    """Add a note to a case (any status); a note changes no state, so it never conflicts."""
    note = _required(note, "note")
    _require_tier(actor, 1, "annotating")
    return _record(case, ReviewEvent.Kind.NOTE, actor=actor, reason=note)


def _owner_after_escalation(case: ReviewCase, tier: int) -> tuple[User | None, str]:
    """Who owns the case at ``tier``, and why the owner changed ('' when it did not).

    The owner stays, unless they may not work the new tier (the one rule that takes a case away:
    the owner must hold that tier's role or above, as ``case_assign`` requires).
    """
    owner = case.owner
    if owner is None or roles.review_tier(owner) >= tier:
        return owner, ""
    return None, (
        f"{owner.get_username()} does not hold the {roles.TIER_ROLES[tier]} role (Level {tier}); "
        "the case is unassigned at its new tier"
    )


@transaction.atomic
def case_escalate(*, case: ReviewCase, actor: Actor, reason: str) -> ReviewCase:
    """Move a case up one tier with a required note; the new tier's clock starts now.

    The case keeps its owner when the owner may work the new tier; otherwise it goes back to the
    unassigned pile, and the escalation event says who was removed and why.
    """
    reason = _required(reason, "reason")
    _require_tier(actor, case.tier, "escalating")
    try:
        tier = policy.next_tier(case.tier)
    except policy.PolicyError as exc:
        raise TransitionNotAllowed(f"cannot escalate {case.ticket}: {exc}") from None
    now = timezone.now()
    owner, owner_change = _owner_after_escalation(case, tier)
    previous_owner = case.owner.get_username() if case.owner is not None else None
    changes = {
        "tier": tier,
        "status": CaseStatus.OPEN,
        "owner": owner,
        "acknowledged_at": None,
        "sla_state": SlaState.ON_TRACK,
        **_clock_start(case, tier=tier, start=now),
    }
    from_tier = case.tier
    case = _transition(
        case,
        allowed=(CaseStatus.OPEN, CaseStatus.ACKNOWLEDGED),
        changes=changes,
        action="escalate",
        actor=actor,
    )
    _record(
        case,
        ReviewEvent.Kind.ESCALATED,
        actor=actor,
        reason=reason,
        at=now,
        details={
            "from_tier": from_tier,
            "to_tier": tier,
            "due_at": _iso(case.due_at),
            "owner_from": previous_owner,
            "owner_to": owner.get_username() if owner is not None else None,
            "owner_change": owner_change,
        },
    )
    return case


@transaction.atomic
def case_pause(*, case: ReviewCase, actor: Actor, reason: str) -> ReviewCase:
    """Stop the clock while waiting on information; the time used so far is kept."""
    reason = _required(reason, "reason")
    _require_tier(actor, case.tier, "pausing")
    now = timezone.now()
    used = case.clock_used_s
    if case.clock_started_at is not None:
        calendar = selectors.calendar_for_workspace(case.workspace)
        phase = policy.clock_phase(case.tier, acknowledged=case.acknowledged_at is not None)
        used += policy.clock_elapsed(case.tier, calendar, case.clock_started_at, now, phase)
    changes = {"status": CaseStatus.PAUSED, "paused_at": now, **_clock_stopped(used)}
    case = _transition(
        case, allowed=(CaseStatus.OPEN, CaseStatus.ACKNOWLEDGED), changes=changes, action="pause", actor=actor
    )
    _record(
        case,
        ReviewEvent.Kind.PAUSED,
        actor=actor,
        reason=reason,
        at=now,
        details={"clock_used_s": round(used, 1)},
    )
    return case


@transaction.atomic
def case_resume(*, case: ReviewCase, actor: Actor, reason: str = "") -> ReviewCase:
    """Restart the clock of a paused case (to acknowledge or to resolve) from where it stopped."""
    _require_tier(actor, case.tier, "resuming")
    now = timezone.now()
    acknowledged = case.acknowledged_at is not None
    changes = {"status": CaseStatus.ACKNOWLEDGED if acknowledged else CaseStatus.OPEN, "paused_at": None}
    changes.update(
        _clock_start(case, tier=case.tier, start=now, used_s=case.clock_used_s, acknowledged=acknowledged)
    )
    case = _transition(case, allowed=(CaseStatus.PAUSED,), changes=changes, action="resume", actor=actor)
    _record(
        case,
        ReviewEvent.Kind.RESUMED,
        actor=actor,
        reason=reason,
        at=now,
        details={"due_at": case.due_at.isoformat() if case.due_at else None},
    )
    return case


@transaction.atomic
def case_resolve(*, case: ReviewCase, actor: Actor, decision: str, rationale: str) -> ReviewCase:
    """Close a case with a decision and a rationale, and feed the decision back to the audit store.

    confirm / relabel_*: the claim's label is set (its machine label stays in the history);
    suppress: the answer is suppressed (needs the L3 role: the compliance lead authorises
    suppression); kb_correction: a curation item is opened.
    """
    rationale = _required(rationale, "rationale")
    if decision not in Decision.values:
        raise ValidationError({"decision": f"decision must be one of {', '.join(Decision.values)}"})
    _require_tier(actor, case.tier, "resolving")
    if decision == Decision.SUPPRESS:
        _require_tier(actor, policy.LAST_TIER, "suppressing the answer of")
    now = timezone.now()
    changes = {
        "status": CaseStatus.RESOLVED,
        "resolved_at": now,
        "paused_at": None,
        "decision": decision,
        "rationale": rationale,
        **_clock_stopped(case.clock_used_s),
    }
    case = _transition(case, allowed=OPEN_CASE_STATUSES, changes=changes, action="resolve", actor=actor)
    claim = case.claim
    details: dict[str, Any] = {"decision": decision}
    # the decision as a labelled example, before it changes the claim (docs/ARCHITECTURE.md,
    # "Learning from reviewers")
    example = case_decision_example_record(
        claim=claim, decision=decision, actor=actor, rationale=rationale, ticket=case.ticket, decided_at=now
    )
    if example is not None:
        details["reviewed_example"] = example.pk
    if decision == Decision.CONFIRM:
        claim_relabel(claim=claim, label=claim.label, actor=actor, reason=f"{case.ticket}: {rationale}")
    elif decision in RELABEL_DECISIONS:
        claim_relabel(
            claim=claim, label=RELABEL_DECISIONS[decision], actor=actor, reason=f"{case.ticket}: {rationale}"
        )
    elif decision == Decision.SUPPRESS:
        answer_suppress(answer=claim.answer, actor=actor, reason=f"{case.ticket}: {rationale}")
    elif decision == Decision.KB_CORRECTION:
        item = curation_item_open(
            workspace=case.workspace,
            source=CurationItem.Source.REVIEW,
            reason=rationale,
            case=case,
            claim=claim,
            actor=actor,
        )
        details["curation_item"] = item.pk
    claim.refresh_from_db(fields=["label"])
    details["label"] = claim.label
    _record(case, ReviewEvent.Kind.RESOLVED, actor=actor, reason=rationale, at=now, details=details)
    return case


@transaction.atomic
def case_reopen(*, case: ReviewCase, actor: Actor, reason: str) -> ReviewCase:
    """Reopen a resolved case at its tier with a fresh clock (refused if another case is open for the claim)."""
    reason = _required(reason, "reason")
    _require_tier(actor, case.tier, "reopening")
    now = timezone.now()
    changes = {
        "status": CaseStatus.OPEN,
        "resolved_at": None,
        "decision": "",
        "acknowledged_at": None,
        "sla_state": SlaState.ON_TRACK,
        **_clock_start(case, tier=case.tier, start=now),
    }
    other = (
        ReviewCase.objects.filter(claim_id=case.claim_id, status__in=OPEN_CASE_STATUSES)
        .exclude(id=case.id)
        .first()
    )
    if other is not None:
        raise TransitionNotAllowed(f"cannot reopen {case.ticket}: {other.ticket} is open for the same claim")
    previous = {"decision": case.decision, "rationale": case.rationale}
    case = _transition(case, allowed=(CaseStatus.RESOLVED,), changes=changes, action="reopen", actor=actor)
    _record(
        case, ReviewEvent.Kind.REOPENED, actor=actor, reason=reason, at=now, details={"previous": previous}
    )
    return case


# --- bulk actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class BulkOutcome:
    """What a bulk action did to one case: ``done``, or why not (the row's own message)."""

    ticket: str
    done: bool
    message: str


BULK_ACTIONS = ("acknowledge", "assign", "unassign")


def cases_bulk_apply(
    *, cases: Iterable[ReviewCase], actor: Actor, action: str, owner: User | None = None
) -> list[BulkOutcome]:
    """Apply one action to each case through the single-case service, one transaction per case.

    The same conditional update guards every row, so a case changed meanwhile (or refused: its
    state, the actor's tier, an owner who may not own it) is reported on its own row while the
    others go through. ``owner`` is the new owner of ``assign``.
    """
    if action not in BULK_ACTIONS:
        raise ValidationError({"action": f"action must be one of {', '.join(BULK_ACTIONS)}"})
    if action == "assign" and owner is None:
        raise ValidationError({"owner": "pick who the cases go to"})
    outcomes = []
    for case in cases:
        try:
            if action == "acknowledge":
                case_acknowledge(case=case, actor=actor)
                done = "acknowledged"
            elif action == "assign" and owner is not None:  # an assignment without an owner is refused above
                case_assign(case=case, actor=actor, owner=owner)
                done = f"assigned to {owner.get_username()}"
            else:
                case_unassign(case=case, actor=actor)
                done = "unassigned"
        except AlreadyDone as exc:
            outcomes.append(BulkOutcome(case.ticket, True, str(exc)))
        except EscalationError as exc:
            outcomes.append(BulkOutcome(case.ticket, False, f"not changed: {exc}"))
        except ValidationError as exc:
            reasons = "; ".join(m for msgs in exc.message_dict.values() for m in msgs)
            outcomes.append(BulkOutcome(case.ticket, False, f"not changed: {reasons}"))
        else:
            outcomes.append(BulkOutcome(case.ticket, True, done))
    return outcomes


# --- curation -----------------------------------------------------------------------------------


@transaction.atomic
def curation_item_open(
    *,
    workspace: Workspace,
    source: str,
    reason: str,
    case: ReviewCase | None = None,
    claim: Claim | None = None,
    document: Document | None = None,
    actor: Actor = None,
) -> CurationItem:
    """Open a knowledge-base correction item (from a review decision, the nightly auditor or by hand)."""
    item = CurationItem(
        workspace=workspace,
        source=source,
        reason=_required(reason, "reason"),
        case=case,
        claim=claim,
        document=document,
        created_by=actor_user(actor),
    )
    item.full_clean()
    item.save()
    event_record(
        action="curation.opened",
        obj=item,
        actor=actor,
        actor_label="" if actor_user(actor) else source,
        workspace=workspace,
        details={"source": source, "case": case.ticket if case else None, "reason": item.reason},
    )
    return item


def curation_items_open_for_documents(
    *, workspace: Workspace, source: str, reasons: dict[Document, str]
) -> list[int]:
    """Open one curation item per document (``reasons``: {document: reason}); return their ids.

    A document that already has an open item from the same source is skipped, so daily runs do
    not pile items up. Registered as audit's ``documents_flagged`` hook (the nightly auditor's).
    """
    already = set(
        CurationItem.objects.filter(
            document__in=list(reasons), source=source, status=CurationItem.Status.OPEN
        ).values_list("document_id", flat=True)
    )
    return [
        curation_item_open(workspace=workspace, source=source, document=document, reason=reason).id
        for document, reason in reasons.items()
        if document.id not in already
    ]


@transaction.atomic
def curation_item_close(*, item: CurationItem, actor: Actor, status: str, note: str = "") -> CurationItem:
    """Mark a curation item done or dismissed (once)."""
    if status not in (CurationItem.Status.DONE, CurationItem.Status.DISMISSED):
        raise ValidationError({"status": "status must be done or dismissed"})
    now = timezone.now()
    if (
        CurationItem.objects.filter(pk=item.pk, status=CurationItem.Status.OPEN).update(
            status=status, closed_at=now
        )
        != 1
    ):
        raise CaseConflict(f"curation item {item.pk} is already closed")
    item.refresh_from_db()
    event_record(
        action=f"curation.{status}", obj=item, actor=actor, workspace=item.workspace, details={"note": note}
    )
    return item


@transaction.atomic
def curation_item_update(*, item: CurationItem, actor: Actor, reason: str) -> CurationItem:
    """Reword a curation item's reason (the admin console); one ``curation.changed`` event with before and after."""
    item = CurationItem.objects.select_for_update().get(pk=item.pk)
    reason = _required(reason, "reason")
    if reason == item.reason:
        return item
    before = item.reason
    item.reason = reason
    item.full_clean()
    item.save(update_fields=["reason"])
    event_record(
        action="curation.changed",
        obj=item,
        actor=actor,
        workspace=item.workspace,
        details={"changes": {"reason": {"from": before, "to": reason}}},
    )
    return item


@transaction.atomic
def curation_item_delete(*, item: CurationItem, actor: Actor) -> None:
    """Delete a curation item (the admin console); the ``curation.deleted`` event keeps what it said."""
    event_record(
        action="curation.deleted",
        obj=item,
        actor=actor,
        workspace=item.workspace,
        details={
            "source": item.source,
            "status": item.status,
            "reason": item.reason,
            "case": item.case_id,
            "claim": item.claim_id,
            "document": item.document_id,
        },
    )
    item.delete()


# --- SLA sweep ----------------------------------------------------------------------------------


def _sla_mark(case: ReviewCase, state: str, now: datetime) -> bool:
    """Move one case's SLA state forward if its clock is still the one we read; record it once."""
    with transaction.atomic():
        moved = ReviewCase.objects.filter(
            id=case.id,
            sla_state=case.sla_state,
            status__in=CLOCK_STATUSES,
            due_at=case.due_at,
            tier=case.tier,
        ).update(sla_state=state)
        if moved != 1:
            return False
        case.sla_state = state
        kind = ReviewEvent.Kind.BREACHED if state == SlaState.BREACHED else ReviewEvent.Kind.AT_RISK
        _record(
            case,
            kind,
            actor_label=SWEEP_ACTOR,
            at=now,
            details={
                "due_at": _iso(case.due_at),
                "at_risk_at": _iso(case.at_risk_at),
                "clock": case.clock_phase,
            },
        )
        return True


def cases_sweep(*, now: datetime | None = None) -> dict[str, Any]:
    """Mark at-risk and breached cases, one conditional update each, until none is left.

    Breached: the clock runs and ``due_at`` < now. At risk: ``at_risk_at`` <= now <= ``due_at``.
    The clock is whichever the case runs (``ReviewCase.clock_phase``): an acknowledged L1 case's
    resolution clock breaches like any other, and its events say which clock (``details.clock``).
    Running it twice changes (and notifies) nothing the second time.
    """
    now = now or timezone.now()
    counts = {SlaState.AT_RISK.value: 0, SlaState.BREACHED.value: 0}
    running = ReviewCase.objects.filter(status__in=CLOCK_STATUSES, due_at__isnull=False).select_related(
        "workspace"
    )
    steps = [
        (SlaState.BREACHED, running.filter(due_at__lt=now).exclude(sla_state=SlaState.BREACHED)),
        (SlaState.AT_RISK, running.filter(at_risk_at__lte=now, due_at__gte=now, sla_state=SlaState.ON_TRACK)),
    ]
    for state, queryset in steps:
        skipped: set[int] = set()
        for _ in range(_SWEEP_MAX_STEPS):
            case = queryset.exclude(id__in=skipped).order_by("due_at", "id").first()
            if case is None:
                break
            if _sla_mark(case, state, now):
                counts[state.value] += 1
            else:
                skipped.add(case.id)  # changed meanwhile: the next sweep sees it fresh
    return counts
