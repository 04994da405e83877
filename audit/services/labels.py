"""Machine label changes of claims: the one place a re-verification rewrites a claim's verdict."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from audit.models import Claim
from audit.services.events import event_record


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
    now=None,
) -> bool:
    """Store a new machine verdict for ``claim``; return True when its machine label changed.

    ``machine_label``, ``verdict`` and ``confidence`` always take the new values and
    ``label_history`` gains an entry (source, from, to, confidences, when, why). ``label`` follows
    the machine only while no person has decided it: a human decision is never overwritten by
    a re-run, the drift is still recorded. An audit event ``claim.label_drifted`` is written
    when the machine label changes. ``source`` names the component (e.g. ``"nightly_audit"``).
    """
    now = now or timezone.now()
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
            {"at": now.isoformat(), "by": source, "by_human": False, "from": old_label, "to": label,
             "confidence_from": old_confidence, "confidence_to": claim.confidence, "reason": reason,
             "label_kept_by_human": human},
        ]
    # Field values only (labels, verdict, confidence): the named check constraints guard the
    # rest in the database, and full_clean() would cost one query per constraint and for the
    # answer foreign key on every claim of a nightly batch.
    claim.clean_fields(exclude=["answer"])
    claim.save(update_fields=["machine_label", "label", "verdict", "confidence", "verified_at", "label_history"])
    if changed:
        event_record(
            action="claim.label_drifted", obj=claim, actor_label=source, workspace=claim.answer.workspace,
            details={"from": old_label, "to": label, "confidence_from": old_confidence,
                     "confidence_to": claim.confidence, "reason": reason, "label_kept_by_human": human},
        )
    return changed
