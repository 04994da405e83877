"""Human decisions on audited claims and answers (called by the escalation workflow)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit import constants
from audit.models import Answer, Claim, VerificationRun
from audit.models.choices import RevisionStatus
from audit.pipeline.scoring import audit_score
from audit.selectors.api import thresholds_for
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
        answer_metrics_follow_labels(answer=locked.answer, actor=actor, claim_id=locked.claim_id)
    return locked


def _decided(claim: Claim, threshold: float) -> tuple[str, float]:
    """(verdict, weight in the mean confidence) of a claim as its label now stands: a person's label
    counts as certain (SUPPORTED 1, REFUTED 0; NEI the machine's P(supported), below the bar); the
    machine's label keeps its own verdict and P(supported)."""
    if claim.label == claim.machine_label:
        return claim.verdict, claim.confidence
    if claim.label == Claim.Label.SUPPORTED:
        return "supported", 1.0
    if claim.label == Claim.Label.REFUTED:
        return "contradicted", 0.0
    verdict = claim.verdict if claim.verdict in ("weak", "not_found") else "not_found"
    return verdict, min(claim.confidence, threshold)


def answer_metrics_follow_labels(
    *, answer: Answer, actor: Actor, claim_id: str = ""
) -> VerificationRun | None:
    """Recompute the answer's label-driven metrics on its latest run after a person's decision:
    faithfulness (share SUPPORTED), evidence coverage and unsupported rate (over non-minor claims,
    docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score) and the audit score (the workspace's
    weights; a person's label counts as certain, ``_decided``). The figures before and after go to
    the history (``answer.metrics_recomputed``). None when the answer has no run."""
    run = (
        VerificationRun.objects.select_for_update()
        .filter(answer=answer)
        .order_by("-started_at", "-id")
        .first()
    )
    if run is None:
        return None
    thresholds = thresholds_for(answer.workspace)
    claims = list(Claim.objects.filter(answer=answer).order_by("span_start", "id"))
    if not claims:
        return run
    decided = [(c, *_decided(c, thresholds.audit_score_threshold)) for c in claims]
    material = [(c, v, w) for c, v, w in decided if c.importance != constants.IMPORTANCE_MINOR]
    before = {k: getattr(run, k) for k in ("audit_score", "coverage", "unsupported_rate", "faithfulness")}
    run.faithfulness = round(sum(c.label == Claim.Label.SUPPORTED for c in claims) / len(claims), 4)
    run.coverage = (
        round(sum(v in ("supported", "weak") for _, v, _ in material) / len(material), 4) if material else 1.0
    )
    run.unsupported_rate = (
        round(sum(v == "not_found" for _, v, _ in material) / len(material), 4) if material else 0.0
    )
    run.audit_score = round(
        audit_score(
            {
                "faithfulness": run.faithfulness,
                "mean_confidence": sum(w for _, _, w in decided) / len(decided),
                "answer_relevance": run.answer_relevance,
                "context_precision": run.context_precision,
            },
            thresholds,
        ),
        4,
    )
    after = {k: getattr(run, k) for k in before}
    run.save(update_fields=list(before))
    event_record(
        action="answer.metrics_recomputed",
        obj=answer,
        actor=actor,
        workspace=answer.workspace,
        details={"claim_id": claim_id, "before": before, "after": after},
    )
    return run


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
    # the claim as received, with its citation markers: the span of the received answer
    as_received = (answer.original_text or "")[claim.span_start : claim.span_end] or claim.text
    revised, received = _body(revision.get("text", "")), _body(as_received)
    restored = False
    # a revision held for approval is the proposal's to follow; the served text is as received
    field = "proposed_text" if answer.revision_status == RevisionStatus.PROPOSED else "text"
    served = getattr(answer, field)
    if (
        label == Claim.Label.SUPPORTED
        and revision.get("strategy") is not None
        and revised
        and revised != received
        and received not in served
        and revised in served
    ):
        # what the revision changed because of the old label (its wording, a citation it removed):
        # the received span's citation markers, where the served text still has them, are not doubled
        plain = _body(claim.text)
        tail = received[len(plain) :] if received.startswith(plain) else ""
        old = revised + tail if tail and revised + tail in served else revised
        setattr(answer, field, served.replace(old, received, 1))
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
