"""Human decisions on audited claims and answers (called by the escalation workflow)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import Answer, Claim
from audit.services.events import event_record


def _actor_name(actor) -> str:
    return actor.get_username() if getattr(actor, "is_authenticated", False) else "system"


@transaction.atomic
def claim_relabel(*, claim: Claim, label: str, actor, reason: str) -> Claim:
    """Set a claim's label by human decision; keep ``machine_label`` and append to ``label_history``.

    Relabelling to the current label records a confirmation (from == to). The row is locked
    (``select_for_update``) so two decisions append to the history one after the other.
    """
    if label not in Claim.Label.values:
        raise ValidationError({"label": f"label must be one of {', '.join(Claim.Label.values)}"})
    if not (reason or "").strip():
        raise ValidationError({"reason": "a reason is required"})
    locked = Claim.objects.select_for_update().select_related("answer").get(pk=claim.pk)
    previous = locked.label
    entry = {
        "at": timezone.now().isoformat(),
        "by": _actor_name(actor),
        "by_human": True,  # audit.services.labels: a re-verification never overwrites this label
        "from": previous,
        "to": label,
        "reason": reason.strip(),
    }
    locked.label = label
    locked.label_history = [*(locked.label_history or []), entry]
    locked.full_clean()
    locked.save(update_fields=["label", "label_history"])
    event_record(
        action="claim.relabelled" if previous != label else "claim.label_confirmed",
        obj=locked,
        actor=actor,
        workspace=locked.answer.workspace,
        details={"from": previous, "to": label, "machine_label": locked.machine_label, "reason": entry["reason"]},
    )
    return locked


@transaction.atomic
def answer_suppress(*, answer: Answer, actor, reason: str) -> Answer:
    """Mark an answer as not to be shown to users (a compliance decision); idempotent."""
    if not (reason or "").strip():
        raise ValidationError({"reason": "a reason is required"})
    changed = Answer.objects.filter(pk=answer.pk, suppressed=False).update(suppressed=True)
    answer.refresh_from_db(fields=["suppressed"])
    if changed:
        event_record(
            action="answer.suppressed",
            obj=answer,
            actor=actor,
            workspace=answer.workspace,
            details={"reason": reason.strip()},
        )
    return answer
