"""Reads behind the REST API and the Claim Card exports.

Every function is scoped to a workspace and loads related rows in bulk, so a page of results
costs a fixed number of queries whatever its length.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

from django.db.models import Count, Prefetch, QuerySet

from audit import constants
from audit.models import Answer, BackgroundJob, Claim, Document, Evidence, VerificationRun, Workspace
from audit.selectors.weak_claims import weak_claims_q


def thresholds_for(
    workspace: Workspace, *, calibrated: bool = True, domain: str | None = None
) -> constants.Thresholds:
    """Return the thresholds in force in a workspace: the seed defaults, its freshness policy
    (``Workspace.freshness_policy``, the limits the nightly report uses too), then its overrides,
    then its calibration (``calibration_in_force``) unless ``calibrated`` is False. For an audit in
    ``domain``, a strictness the workspace left unset is the regulated point in its regulated domains
    (``operating_points.strictness_for_domain``)."""
    from audit.pipeline.operating_points import strictness_for_domain

    policy = constants.usable_overrides({"freshness_months": dict(workspace.freshness_policy or {})})
    base = constants.Thresholds().updated(policy)
    thresholds = base.updated(
        constants.usable_overrides(workspace.threshold_overrides)
    )  # a bad stored value: default
    if calibrated:  # the calibration reads the judge only, so it goes on before the strictness
        thresholds = calibration_in_force(workspace, thresholds)
    if domain:
        thresholds = replace(
            thresholds,
            strictness=strictness_for_domain(thresholds.strictness, domain, workspace.regulated_domains),
        )
    return thresholds


def thresholds_uncalibrated(workspace: Workspace) -> constants.Thresholds:
    """The workspace's thresholds before its calibration: what a calibration is fitted on and
    checked against (the calibration service), never what an audit is judged by."""
    return thresholds_for(workspace, calibrated=False)


def calibration_in_force(workspace: Workspace, thresholds: constants.Thresholds) -> constants.Thresholds:
    """``thresholds`` with the workspace's calibration attached, when it fits the workspace's judge.

    Its decision threshold becomes ``audit_score_threshold`` (SUPPORTED needs it whatever the
    depth); the entailment method applies its Platt scaling and stacker at the depth it was fitted
    for (``audit.pipeline.calibration``). A calibration fitted for another judge or artefact (the
    workspace switched judges, a new model shipped) is not applied: the judge's own figures stand.
    """
    from audit.pipeline.calibration import Calibration
    from audit.pipeline.judges import get_judge

    calibration = Calibration.from_dict(workspace.calibration)
    if calibration is None or not calibration.fits(get_judge(thresholds.judge)):
        return thresholds
    return replace(thresholds, calibration=calibration, audit_score_threshold=calibration.threshold)


def evidence_ordered() -> QuerySet[Evidence]:
    return Evidence.objects.order_by("rank", "id")


# The columns a Claim Card reads: loading only these keeps large columns (the answer's contexts
# and texts, the claim's label history) out of list pages and exports.
_CARD_CLAIM_FIELDS = (
    "claim_id",
    "text",
    "label",
    "machine_label",
    "label_history",
    "confidence",
    "methods",
    "metrics",
    "method_results",
    "revision",
    "drafted_at",
    "verified_at",
    "span_start",
    "answer__public_id",
    "answer__mode",
    "answer__created_at",
    "answer__workspace_id",
)
_CARD_EVIDENCE_FIELDS = ("claim_id", "rank", "source_type", "source_id", "title", "uri", "snippet", "hash")


def claim_card_list(*, workspace: Workspace) -> QuerySet[Claim]:
    """Return the workspace's claims ready for Claim Cards (answer joined, evidence prefetched)."""
    return (
        Claim.objects.filter(answer__workspace=workspace)
        .select_related("answer")
        .only(*_CARD_CLAIM_FIELDS)
        .prefetch_related(Prefetch("evidence", queryset=evidence_ordered().only(*_CARD_EVIDENCE_FIELDS)))
        .order_by("-answer__created_at", "-answer_id", "span_start", "id")
    )


def answer_list(*, workspace: Workspace) -> QuerySet[Answer]:
    answers: QuerySet[Answer] = (  # annotate() types its rows loosely
        Answer.objects.filter(workspace=workspace)
        .annotate(claim_count=Count("claims"))
        .order_by("-created_at", "-id")
    )
    return answers


def answer_detail_list(*, workspace: Workspace) -> QuerySet[Answer]:
    """Answers with claims, evidence and runs (latest first) prefetched, for full serialization."""
    claims = (
        Claim.objects.select_related("answer")
        .prefetch_related(Prefetch("evidence", queryset=evidence_ordered()))
        .order_by("span_start", "id")
    )
    return Answer.objects.filter(workspace=workspace).prefetch_related(
        Prefetch("claims", queryset=claims),
        Prefetch("runs", queryset=VerificationRun.objects.order_by("-started_at", "-id")),
    )


def evidence_list(*, workspace: Workspace) -> QuerySet[Evidence]:
    return (
        Evidence.objects.filter(claim__answer__workspace=workspace)
        .select_related("claim__answer")
        .order_by("-claim__answer__created_at", "claim_id", "rank", "id")
    )


def run_list(*, workspace: Workspace) -> QuerySet[VerificationRun]:
    return (
        VerificationRun.objects.filter(answer__workspace=workspace)
        .select_related("answer")
        .order_by("-started_at", "-id")
    )


def background_job_list(*, workspace: Workspace) -> QuerySet[BackgroundJob]:
    """The jobs the workspace's requests queued (queued audits, background uploads), newest first."""
    return (
        BackgroundJob.objects.filter(workspace=workspace)
        .select_related("answer")
        .order_by("-created_at", "-id")
    )


def document_list(*, workspace: Workspace) -> QuerySet[Document]:
    return (
        Document.objects.filter(workspace=workspace)
        .annotate(chunk_count=Count("chunks"))
        .order_by("title", "id")
    )


def low_confidence_claims(
    *, workspace: Workspace, day: dt.date, threshold: float | None = None
) -> QuerySet[Claim]:
    """Return the day's REFUTED / NEI claims below the low-confidence threshold (docs/SPEC_NOTES.md#nightly-auditor).

    The weak-claim rule of the nightly auditor (``audit.selectors.weak_claims.weak_claims_q``): ``day``
    is a UTC calendar day of the answers' creation; the threshold defaults to the workspace's
    ``low_confidence_threshold``.
    """
    if threshold is None:
        threshold = thresholds_for(workspace).low_confidence_threshold
    return claim_card_list(workspace=workspace).filter(weak_claims_q(bar=threshold, day=day))
