"""Machine label changes of claims: the one place a re-verification rewrites a claim's verdict."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.bulk import rows_update
from audit.models import AuditEvent, Claim, Workspace
from audit.services.events import Event, events_write


def claim_has_human_label(claim: Claim) -> bool:
    """Return True when a person has decided the claim's label (a history entry with an actor)."""
    return any(entry.get("by_human") for entry in (claim.label_history or []))


@transaction.atomic
def claim_machine_relabel(
    *,
    claim: Claim,
    label: str,
    confidence: float,
    verdict: str,
    source: str,
    reason: str = "",
    now: dt.datetime | None = None,
) -> bool:
    """Store a new machine verdict for ``claim``; return True when its machine label changed.

    ``machine_label``, ``verdict`` and ``confidence`` always take the new values and
    ``label_history`` gains an entry (source, from, to, confidences, when, why). ``label`` follows
    the machine only while no person has decided it: a human decision is never overwritten by
    a re-run, the drift is still recorded. An audit event ``claim.label_drifted`` is written
    when the machine label changes. ``source`` names the component (e.g. ``"nightly_audit"``).
    """
    events: list[Event] = []
    drifted = claim_machine_relabel_noted(
        claim=claim,
        label=label,
        confidence=confidence,
        verdict=verdict,
        source=source,
        reason=reason,
        now=now,
        events=events,
    )
    events_write(events, actor=None, workspace=claim.answer.workspace)
    return drifted


def claim_machine_relabel_noted(
    *,
    claim: Claim,
    label: str,
    confidence: float,
    verdict: str,
    source: str,
    reason: str = "",
    now: dt.datetime | None = None,
    events: list[Event],
) -> bool:
    """:func:`claim_machine_relabel` inside the caller's transaction, its ``claim.label_drifted``
    event noted in ``events`` (written with the others of the caller's request)."""
    now = now or timezone.now()
    drift = _relabel_in_memory(
        claim=claim,
        label=label,
        confidence=confidence,
        verdict=verdict,
        source=source,
        reason=reason,
        now=now,
    )
    claim.save(update_fields=RELABEL_FIELDS)
    if drift is not None:
        events.append(Event("claim.label_drifted", claim, drift, system=source))
    return drift is not None


RELABEL_FIELDS = ["machine_label", "label", "verdict", "confidence", "verified_at", "label_history"]


def _relabel_in_memory(
    *, claim: Claim, label: str, confidence: float, verdict: str, source: str, reason: str, now: dt.datetime
) -> dict[str, Any] | None:
    """Apply a new machine verdict to ``claim`` (unsaved); return the drift event's details, or None."""
    old_label, old_confidence = claim.machine_label, claim.confidence
    human = claim_has_human_label(claim)
    changed = label != old_label
    claim.machine_label = label
    claim.verdict = verdict
    claim.confidence = round(float(confidence), 6)
    claim.verified_at = now
    if not human:
        claim.label = label
    if changed:
        claim.label_history = [
            *(claim.label_history or []),
            {
                "at": now.isoformat(),
                "by": source,
                "by_human": False,
                "from": old_label,
                "to": label,
                "confidence_from": old_confidence,
                "confidence_to": claim.confidence,
                "reason": reason,
                "label_kept_by_human": human,
            },
        ]
    # Field values only (labels, verdict, confidence): the named check constraints guard the
    # rest in the database, and full_clean() would cost one query per constraint and for the
    # answer foreign key on every claim of a nightly batch.
    claim.clean_fields(exclude=["answer"])
    if not changed:
        return None
    return {
        "from": old_label,
        "to": label,
        "confidence_from": old_confidence,
        "confidence_to": claim.confidence,
        "reason": reason,
        "label_kept_by_human": human,
    }


@transaction.atomic
def claims_machine_relabel(
    *,
    changes: list[tuple[Claim, str, float, str]],
    workspace: Workspace,
    source: str,
    reason: str = "",
    now: dt.datetime | None = None,
) -> list[bool]:
    """:func:`claim_machine_relabel` for a batch of ``(claim, label, confidence, verdict)``, in bulk.

    Same rules and the same stored result (fields, history, one ``claim.label_drifted`` event per
    changed claim), written with one ``executemany`` and one ``bulk_create`` instead of a save and
    an insert per claim (the nightly auditor's batches). Returns, per change, whether it drifted.
    """
    now = now or timezone.now()
    drifted, events = [], []
    for claim, label, confidence, verdict in changes:
        drift = _relabel_in_memory(
            claim=claim,
            label=label,
            confidence=confidence,
            verdict=verdict,
            source=source,
            reason=reason,
            now=now,
        )
        drifted.append(drift is not None)
        if drift is not None:
            events.append(
                AuditEvent(
                    workspace=workspace,
                    actor_label=source,
                    action="claim.label_drifted",
                    object_type=Claim._meta.label_lower,
                    object_id=str(claim.pk),
                    at=now,
                    details=drift,
                )
            )
    rows_update([c for c, *_ in changes], RELABEL_FIELDS)  # executemany: see audit.bulk
    AuditEvent.objects.bulk_create(events, batch_size=500)
    return drifted
