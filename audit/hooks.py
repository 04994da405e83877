"""What audit announces to, and asks of, the apps built on it, without importing them.

Audit stores answers, claims and documents; an app that acts on them (``escalation``: review
cases, knowledge-base curation) registers its receivers here in its ``AppConfig.ready()`` (and its
admin inlines from its ``admin.py``). Audit calls the hooks and imports nothing of that app, not
even a model by name, so the dependency points one way (escalation → audit;
``tests/foundation/test_dependencies.py`` holds it, docs/ARCHITECTURE.md draws it). With no
receiver registered, an announcement does nothing and a question gets an empty answer (or None).

Announcements (audit → receivers):

- ``answer_intake(answer, actor)``: an answer was stored (or relabelled by a deep check); each
  receiver returns what it opened for people, by claim ({claim pk: [escalation refs]}, as
  ``claim_escalations`` answers: escalation's review cases), so the request that stored the
  answer answers with what was written.
- ``documents_flagged(workspace, source, reasons)``: knowledge-base documents need a person's look
  (``reasons``: {document: reason}); each receiver returns the ids of what it opened.
- ``reviewer_agreement_low(workspace, alerts)``: reviewers agreed with the machine less than the
  threshold in some domains (``alerts``: one dict per domain); each receiver returns how many
  alerts it queued (escalation: one notification per target).
- ``answer_decided(answer, audit_event)``: a person decided on an answer outside any case (a held
  revision accepted or rejected); escalation notifies its targets as for a case decision.

Questions (receivers answer audit's pages and API):

- ``claim_escalations(claim_pks)`` → {claim pk: [escalation refs]} (the Claim Card's log).
- ``claim_escalation_filter(state)`` → a ``Q`` on claims for an escalation state
  (open, resolved, any, none).
- ``records_held(workspace)`` → {"answer_ids": set, "events": {(object_type, object_id)}}: what
  retention must keep because people are still working on it (escalation: open cases).
- ``claim_reviews(claim_ids)`` → {claim id: [review dicts, newest first]} (the claim page's cases).
- ``user_work(user, workspace)`` → what needs the user first (the home page's "my work"), or None.
- ``queue_summary(workspace, start, end, domain)`` → the dashboard's queue figures (of one domain's
  cases when ``domain`` is given; ``domains``: open cases and SLA attainment per domain), or None.
- ``correction_backlog(workspace, moments)`` → the open knowledge-base corrections at each moment
  (the dashboard's backlog metric), or None.

Places and jobs (the apps name their own pages and recurring jobs, so audit holds no string of theirs):

- ``review_queue_url(params)`` → the URL of the review-case queue filtered by ``params`` (the
  dashboard's drill-down links), or "" when no app registered one.
- ``kb_corrections_url(staff, open_only)`` → the URL of the knowledge-base corrections (the admin
  list for staff, the API otherwise), or "".
- ``schedules()`` → the recurring jobs the apps declare (``setup_schedules`` installs them beside
  audit's own).

Admin (the apps add to audit's pages): ``register_workspace_admin_inline(inline)`` adds an inline
to the workspace admin page (escalation: the business calendar, the notification targets).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from django.db.models import Q


@dataclass
class Hook:
    """A named list of receivers, called in the order they registered."""

    name: str
    receivers: list[Callable[..., Any]] = field(default_factory=list)

    def register(self, receiver: Callable[..., Any]) -> Callable[..., Any]:
        """Add a receiver (once: registering it again is a no-op); return it, so this works as a decorator."""
        if receiver not in self.receivers:
            self.receivers.append(receiver)
        return receiver

    def call(self, **kwargs) -> list:
        """Call every receiver with ``kwargs``; return their results in order."""
        return [receiver(**kwargs) for receiver in self.receivers]


_answer_intake = Hook("answer_intake")
_documents_flagged = Hook("documents_flagged")
_answer_decided = Hook("answer_decided")
_claim_escalations = Hook("claim_escalations")
_claim_escalation_filter = Hook("claim_escalation_filter")
_reviewer_agreement_low = Hook("reviewer_agreement_low")
_records_held = Hook("records_held")
_claim_reviews = Hook("claim_reviews")
_user_work = Hook("user_work")
_queue_summary = Hook("queue_summary")
_correction_backlog = Hook("correction_backlog")
_workspace_admin_inlines = Hook("workspace_admin_inlines")
_review_queue_url = Hook("review_queue_url")
_kb_corrections_url = Hook("kb_corrections_url")
_schedules = Hook("schedules")

register_answer_intake = _answer_intake.register
register_documents_flagged = _documents_flagged.register
register_answer_decided = _answer_decided.register
register_claim_escalations = _claim_escalations.register
register_claim_escalation_filter = _claim_escalation_filter.register
register_reviewer_agreement_low = _reviewer_agreement_low.register
register_records_held = _records_held.register
register_claim_reviews = _claim_reviews.register
register_user_work = _user_work.register
register_queue_summary = _queue_summary.register
register_correction_backlog = _correction_backlog.register
register_workspace_admin_inline = _workspace_admin_inlines.register
register_review_queue_url = _review_queue_url.register
register_kb_corrections_url = _kb_corrections_url.register
register_schedules = _schedules.register


def answer_intake(*, answer, actor=None) -> dict[int, list[dict]]:
    """Announce a stored answer; return what the receivers opened for people, by claim pk."""
    return _per_claim(_answer_intake.call(answer=answer, actor=actor))


def documents_flagged(*, workspace, source: str, reasons: dict) -> list[int]:
    """Announce documents that need a person's look; return the ids the receivers opened (flattened)."""
    if not reasons:
        return []
    return [
        pk
        for opened in _documents_flagged.call(workspace=workspace, source=source, reasons=reasons)
        for pk in opened
    ]


def reviewer_agreement_low(*, workspace, alerts: list[dict]) -> int:
    """Announce domains whose reviewers agree less with the machine; return the alerts queued."""
    if not alerts:
        return 0
    return sum(_reviewer_agreement_low.call(workspace=workspace, alerts=alerts))


def answer_decided(*, answer, audit_event) -> None:
    """Announce a person's decision on an answer (recorded as ``audit_event``) to the receivers."""
    _answer_decided.call(answer=answer, audit_event=audit_event)


def _per_claim(answers: list[dict[int, list[dict]]]) -> dict[int, list[dict]]:
    """Merge the receivers' {claim pk: [items]} answers, in the order they registered."""
    merged: dict[int, list[dict]] = {}
    for answer in answers:
        for pk, items in answer.items():
            merged.setdefault(pk, []).extend(items)
    return merged


def claim_escalations(claim_pks) -> dict[int, list[dict]]:
    """Return {claim pk: [escalation refs]} from every receiver (empty when none is registered)."""
    pks = list(claim_pks)
    return _per_claim(_claim_escalations.call(claim_pks=pks)) if pks else {}


def claim_escalation_filter(state: str) -> Q:
    """Return the claim filter of an escalation state (every receiver's, and-ed; ``Q()`` when none)."""
    combined = Q()
    for q in _claim_escalation_filter.call(state=state):
        combined &= q
    return combined


def records_held(*, workspace) -> tuple[set[int], set[tuple[str, str]]]:
    """Return (answer ids, audit-event keys (object_type, object_id)) the receivers hold open in
    ``workspace`` (retention keeps them); empty sets when none is registered."""
    answer_ids: set[int] = set()
    events: set[tuple[str, str]] = set()
    for held in _records_held.call(workspace=workspace):
        answer_ids |= set(held.get("answer_ids", ()))
        events |= set(held.get("events", ()))
    return answer_ids, events


def _first(answers: list) -> Any:
    """The first receiver's answer, or None when none is registered."""
    return answers[0] if answers else None


def claim_reviews(claim_ids) -> dict[int, list[dict]]:
    """Return {claim id: [review dicts, newest first]} from every receiver (empty when none)."""
    ids = list(claim_ids)
    return _per_claim(_claim_reviews.call(claim_ids=ids)) if ids else {}


def user_work(*, user, workspace) -> dict | None:
    """What needs ``user`` first in ``workspace`` (the first receiver's answer; None when none)."""
    return _first(_user_work.call(user=user, workspace=workspace))


def queue_summary(*, workspace, start, end, domain: str = "") -> dict | None:
    """The review queue's figures for [start, end), of one domain's cases when ``domain`` is given
    (the first receiver's answer; None when none)."""
    return _first(_queue_summary.call(workspace=workspace, start=start, end=end, domain=domain))


def correction_backlog(*, workspace, moments: list) -> list[int] | None:
    """How many knowledge-base corrections were open at each of ``moments`` (None when no receiver)."""
    return _first(_correction_backlog.call(workspace=workspace, moments=moments))


def workspace_admin_inlines() -> list:
    """The admin inlines the apps added to the workspace page, in the order they registered."""
    return list(_workspace_admin_inlines.receivers)


def review_queue_url(**params) -> str:
    """The review-case queue's URL filtered by ``params`` (the first receiver's; "" when none)."""
    return _first(_review_queue_url.call(params=params)) or ""


def kb_corrections_url(*, staff: bool, open_only: bool = False) -> str:
    """The knowledge-base corrections' URL (the first receiver's; "" when none)."""
    return _first(_kb_corrections_url.call(staff=staff, open_only=open_only)) or ""


def schedules() -> list[dict]:
    """The recurring jobs the apps declare (every receiver's, in the order they registered)."""
    return [entry for declared in _schedules.call() for entry in declared]
