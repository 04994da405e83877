"""What audit announces to, and asks of, the apps built on it, without importing them.

Audit stores answers, claims and documents; an app that acts on them (``escalation``: review
cases, knowledge-base curation) registers its receivers here in its ``AppConfig.ready()``. Audit
acts on that app only through these hooks: no audit module opens, changes or queries a case for
its own rules. Audit does still read escalation's rows to show them, in exactly three modules
(``audit/views.py``, ``audit/selectors/dashboard.py``, ``audit/admin.py``; listed in
``audit.selectors.facade`` and enforced by ``tests/foundation/test_dependencies.py``), so the
import graph has that one edge back (docs/ARCHITECTURE.md). With no receiver registered, an
announcement does nothing and a question gets an empty answer.

Announcements (audit → receivers):

- ``answer_intake(answer, actor)``: an answer was stored (or relabelled by a deep check); each
  receiver returns what it opened for people (escalation: its review cases).
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

register_answer_intake = _answer_intake.register
register_documents_flagged = _documents_flagged.register
register_answer_decided = _answer_decided.register
register_claim_escalations = _claim_escalations.register
register_claim_escalation_filter = _claim_escalation_filter.register
register_reviewer_agreement_low = _reviewer_agreement_low.register
register_records_held = _records_held.register


def answer_intake(*, answer, actor=None) -> list:
    """Announce a stored answer; return everything the receivers opened for people (flattened)."""
    return [item for opened in _answer_intake.call(answer=answer, actor=actor) for item in opened]


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


def claim_escalations(claim_pks) -> dict[int, list[dict]]:
    """Return {claim pk: [escalation refs]} from every receiver (empty when none is registered)."""
    pks = list(claim_pks)
    merged: dict[int, list[dict]] = {}
    for refs in _claim_escalations.call(claim_pks=pks) if pks else []:
        for pk, items in refs.items():
            merged.setdefault(pk, []).extend(items)
    return merged


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
