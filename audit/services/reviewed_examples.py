"""Reviewer decisions as data: every resolution and revision review becomes a labelled example.

The escalation workflow calls :func:`case_decision_example_record` when it resolves a case (confirm,
relabel, suppress), and revision approval calls :func:`revision_review_example_record` when a
reviewer accepts or rejects a revision; both go through :func:`review_example_record`, which copies
what the reviewer judged (wording, evidence shown, the machine's label, confidence, logit, judge
version and calibration version) beside the reviewer's label. ``manage.py calibrate`` learns from
these rows, the dashboard draws them, and ``export_reviewed_examples`` writes them as benchmark JSONL.
"""

from __future__ import annotations

import datetime as dt
from types import EllipsisType
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.models import Claim, ReviewedExample
from audit.models.choices import Label
from audit.services.events import Actor, actor_name, actor_user

Decision = ReviewedExample.Decision
RELABELS: dict[str, str] = {
    Decision.RELABEL_SUPPORTED: Label.SUPPORTED,
    Decision.RELABEL_REFUTED: Label.REFUTED,
    Decision.RELABEL_NEI: Label.NEI,
}


def machine_judgement(claim: Claim) -> dict[str, Any]:
    """What the entailment method recorded on the claim: judge, judge version, calibration, logit."""
    details = ((claim.method_results or {}).get("entailment") or {}).get("details") or {}
    logit = details.get("logit")
    return {
        "judge": str(details.get("judge") or ""),
        "judge_version": str(details.get("judge_version") or ""),
        "calibration_version": details.get("calibration"),
        "logit": float(logit) if isinstance(logit, (int, float)) else None,
    }


def evidence_shown(claim: Claim, passage_id: str = "") -> list[dict[str, Any]]:
    """The claim's evidence as its card shows it (rank order); only ``passage_id`` when it names one."""
    rows = [
        {
            "id": ev.source_id,
            "title": ev.title,
            "text": ev.snippet,
            "source_type": ev.source_type,
            "uri": ev.uri,
            "hash": ev.hash,
        }
        for ev in claim.evidence.order_by("rank", "id")
    ]
    if passage_id:
        named = [r for r in rows if r["id"] == passage_id]
        if named:
            return named
        for context in claim.answer.contexts or []:
            if isinstance(context, dict) and str(context.get("id") or "") == passage_id:
                text = str(context.get("text") or "")
                return [{"id": passage_id, "title": str(context.get("title") or ""), "text": text}]
    return rows


@transaction.atomic
def review_example_record(
    *,
    claim: Claim,
    source: str,
    decision: str,
    reviewer_label: str,
    actor: Actor,
    rationale: str = "",
    reference: str = "",
    claim_text: str | None = None,
    evidence: list[dict[str, Any]] | None = None,
    machine_label: str | None = None,
    machine_confidence: float | None = None,
    machine_logit: float | EllipsisType | None = ...,
    decided_at: dt.datetime | None = None,
) -> ReviewedExample:
    """Store one labelled example of ``claim``'s workspace; the machine's side defaults to the claim's.

    ``claim_text``/``evidence`` default to the claim's wording and evidence, ``machine_logit`` (left
    out) to the claim's support logit; the judge, its version and the calibration version come from
    the claim's entailment result.
    """
    if reviewer_label not in Label.values:
        raise ValidationError({"reviewer_label": f"must be one of {', '.join(Label.values)}"})
    machine = machine_judgement(claim)
    confidence = claim.confidence if machine_confidence is None else machine_confidence
    example = ReviewedExample(
        workspace_id=claim.answer.workspace_id,
        claim=claim,
        source=source,
        decision=decision,
        reference=reference[:64],
        domain=claim.answer.domain,
        claim_text=claim.text if claim_text is None else claim_text,
        evidence=evidence_shown(claim) if evidence is None else evidence,
        machine_label=machine_label or claim.machine_label,
        machine_confidence=min(1.0, max(0.0, float(confidence))),
        machine_logit=machine["logit"] if machine_logit is ... else machine_logit,
        judge=machine["judge"],
        judge_version=machine["judge_version"],
        calibration_version=machine["calibration_version"],
        reviewer_label=reviewer_label,
        reviewer=actor_user(actor),
        reviewer_name=actor_name(actor),
        rationale=(rationale or "").strip(),
        decided_at=decided_at or timezone.now(),
    )
    example.full_clean(exclude=["claim", "workspace", "reviewer"])
    example.save()
    return example


def case_decision_example_record(
    *,
    claim: Claim,
    decision: str,
    actor: Actor,
    rationale: str,
    ticket: str,
    decided_at: dt.datetime | None = None,
) -> ReviewedExample | None:
    """The example of a case resolution, recorded before the decision changes the claim.

    confirm: the reviewer's label is the claim's label; relabel: the new label; suppress: the
    answer is unfit to show, so the claim is not supported (REFUTED where it is labelled REFUTED,
    else NEI). A knowledge-base correction says nothing of the claim: no example (None).
    """
    if decision == Decision.CONFIRM:
        label = claim.label
    elif decision in RELABELS:
        label = RELABELS[decision]
    elif decision == Decision.SUPPRESS:
        label = Label.REFUTED if claim.label == Label.REFUTED else Label.NEI
    else:
        return None
    return review_example_record(
        claim=claim,
        source=ReviewedExample.Source.CASE,
        decision=decision,
        reviewer_label=label,
        actor=actor,
        rationale=rationale,
        reference=ticket,
        decided_at=decided_at,
    )


def revision_review_example_record(
    *, claim: Claim, accepted: bool, actor: Actor, rationale: str = "", reviewer_label: str | None = None
) -> ReviewedExample | None:
    """The example of a reviewer accepting or rejecting the revision of ``claim``.

    The example is the revised wording against the passage the revision rests on, with the
    pipeline's verdict on it (``Claim.revision``). The reviewer's label is ``reviewer_label`` when
    given, else SUPPORTED for an accepted revision and NEI for a rejected one (the reviewer does not
    vouch for that wording). A revision that removed the claim has no wording to learn from: None.
    """
    revision = claim.revision or {}
    text = str(revision.get("text") or "").strip()
    if not text or revision.get("label") not in Label.values:
        return None
    label = reviewer_label or (Label.SUPPORTED if accepted else Label.NEI)
    return review_example_record(
        claim=claim,
        source=ReviewedExample.Source.REVISION,
        decision=Decision.REVISION_ACCEPTED if accepted else Decision.REVISION_REJECTED,
        reviewer_label=label,
        actor=actor,
        rationale=rationale,
        reference=f"revision:{revision.get('strategy') or ''}",
        claim_text=text,
        evidence=evidence_shown(claim, str(revision.get("passage_id") or "")),
        machine_label=revision["label"],
        machine_confidence=float(revision.get("confidence") or 0.0),
        machine_logit=None,  # the revised wording's logit is not stored
    )
