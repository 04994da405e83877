"""Human decisions on audited claims and answers (called by the escalation workflow)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import Answer, Claim
from audit.models.choices import RevisionStatus
from audit.services.events import Actor, actor_name, event_record


@transaction.atomic
def claim_relabel(*, claim: Claim, label: str, actor: Actor, reason: str) -> Claim:
    """Set a claim's label by human decision; keep ``machine_label`` and append to ``label_history``.

    Relabelling to the current label records a confirmation (from == to). The row is locked
    (``select_for_update``) so two decisions append to the history one after the other. The
    served answer follows the decision (:func:`answer_follow_relabel`).
    """
    if label not in Claim.Label.values:
        raise ValidationError({"label": f"label must be one of {', '.join(Claim.Label.values)}"})
    if not (reason or "").strip():
        raise ValidationError({"reason": "a reason is required"})
    locked = Claim.objects.select_for_update().select_related("answer").get(pk=claim.pk)
    previous = locked.label
    entry = {
        "at": timezone.now().isoformat(),
        "by": actor_name(actor),
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
        details={
            "from": previous,
            "to": label,
            "machine_label": locked.machine_label,
            "reason": entry["reason"],
        },
    )
    if previous != label:
        answer_follow_relabel(claim=locked, label=label, actor=actor, reason=reason.strip())
    return locked


def _body(text: str) -> str:
    return (text or "").strip().rstrip(".!?;: ").strip()


def answer_follow_relabel(*, claim: Claim, label: str, actor: Actor, reason: str) -> Answer:
    """Make the served answer agree with a reviewer's label and record it.

    A claim relabelled SUPPORTED whose wording the revision loop changed (qualified, softened,
    corrected) gets its received wording back in ``Answer.text`` where the revised wording is
    found; otherwise (a removed claim, a claim relabelled REFUTED/NEI, a wording not found) the
    served text is marked superseded by the decision. Either way ``Answer.revisions`` gains a
    ``review`` entry, the claim's ``revision`` notes it, and an audit event is written.
    """
    answer = Answer.objects.select_for_update().get(pk=claim.answer_id)
    revision = dict(claim.revision or {})
    revised, received = _body(revision.get("text", "")), _body(claim.text)
    restored = False
    # a revision held for approval is the proposal's to follow; the served text is as received
    field = "proposed_text" if answer.revision_status == RevisionStatus.PROPOSED else "text"
    if (
        label == Claim.Label.SUPPORTED
        and revision.get("strategy") not in (None, "citation")
        and revised
        and revised != received
        and revised in getattr(answer, field)
    ):
        setattr(answer, field, getattr(answer, field).replace(revised, received, 1))
        restored = True
    elif label == Claim.Label.SUPPORTED and not revision:
        return answer  # the served text already states the claim as received
    entry = {
        "source": "review",
        "at": timezone.now().isoformat(),
        "by": actor_name(actor),
        "claim_id": claim.claim_id,
        "label": label,
        "reason": reason,
        "text": answer.text,
        "superseded": not restored,
        "action": "restored_received_wording" if restored else "marked_superseded",
    }
    answer.revisions = [*(answer.revisions or []), entry]
    answer.full_clean()
    answer.save(update_fields=["text", "proposed_text", "revisions"])
    if revision:
        revision["review"] = {"label": label, "by": entry["by"], "at": entry["at"], "action": entry["action"]}
        Claim.objects.filter(pk=claim.pk).update(revision=revision)
        claim.revision = revision
    event_record(
        action="answer.text_restored" if restored else "answer.text_superseded",
        obj=answer,
        actor=actor,
        workspace=answer.workspace,
        details={"claim_id": claim.claim_id, "label": label, "reason": reason},
    )
    return answer


@transaction.atomic
def answer_suppress(*, answer: Answer, actor: Actor, reason: str) -> Answer:
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
