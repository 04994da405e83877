"""The nightly batch auditor (docs/SPEC_NOTES.md#nightly-auditor): re-check the day's weak claims and write the report.

One run for a (workspace, day):

1. :func:`nightly_report_open` creates the :class:`NightlyReport` (or finds it) and one
   :class:`NightlyItem` per weak claim, idempotently (unique (report, claim)).
2. :func:`nightly_audit_run` takes the unprocessed items in batches: embeds the claims in one
   call, searches the refreshed knowledge-base index for all of them at once
   (``audit.selectors.kb_index``), re-verifies them with the pipeline and stores each batch in
   one transaction (:func:`nightly_items_record`) that also flips ``processed``. A run killed
   mid-batch loses that batch's uncommitted work only; the restart redoes exactly those items,
   so each claim is processed once in total.
3. :func:`nightly_report_finish` computes the report (top failing KB documents, stale sources,
   claims for human review, label drift, counts) and marks the report DONE. Re-running a
   finished day changes nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Callable

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audit import constants, hooks
from audit.bulk import rows_update
from audit.models import Document, NightlyItem, NightlyReport, Workspace
from audit.pipeline.types import ClaimDraft, Label
from audit.selectors.nightly import nightly_claims_due
from audit.services import nightly_verify
from audit.services.events import event_record
from audit.services.labels import claims_machine_relabel

logger = logging.getLogger(__name__)

SOURCE = "nightly_audit"
FLAGGED_SOURCE = "nightly"  # the source of the documents it flags (``audit.hooks.documents_flagged``)
IMPORTANCE_RANK = {
    constants.IMPORTANCE_CRITICAL: 0,
    constants.IMPORTANCE_MATERIAL: 1,
    constants.IMPORTANCE_MINOR: 2,
}


@dataclass
class NightlyOutcome:
    """What one invocation did: the report, and the speed of this invocation's processing."""

    report: NightlyReport
    processed_now: int
    seconds: float
    already_done: bool = False
    stages: dict[str, float] = field(default_factory=dict)  # seconds spent retrieving, verifying, storing

    @property
    def claims_per_s(self) -> float:
        return self.processed_now / self.seconds if self.seconds > 0 else 0.0


@transaction.atomic
def nightly_report_open(*, workspace: Workspace, day: dt.date) -> NightlyReport:
    """Create or resume the report of ``day`` with one work item per weak claim of that day.

    A finished report is returned untouched. For a running one (a previous run was killed),
    claims that became due since are added; items already there are kept as they are.
    """
    report, created = NightlyReport.objects.get_or_create(workspace=workspace, date=day)
    if report.status == NightlyReport.Status.DONE:
        return report
    # the machine's label: the one the re-check compares with, so a drift always reads "before -> after"
    # (a claim a reviewer relabelled keeps its human label; its machine label is what drifts)
    due = nightly_claims_due(workspace=workspace, day=day).values_list("id", "machine_label", "confidence")
    NightlyItem.objects.bulk_create(
        [
            NightlyItem(report=report, claim_id=cid, old_label=label, old_confidence=conf)
            for cid, label, conf in due
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )
    NightlyReport.objects.filter(id=report.id).update(
        claims_selected=NightlyItem.objects.filter(report=report).count(), attempts=F("attempts") + 1
    )
    report.refresh_from_db()
    event_record(
        action="nightly.started" if created else "nightly.resumed",
        obj=report,
        actor_label=SOURCE,
        workspace=workspace,
        details={
            "date": day.isoformat(),
            "claims_selected": report.claims_selected,
            "attempt": report.attempts,
        },
    )
    return report


@transaction.atomic
def nightly_items_record(
    *, report: NightlyReport, results: dict[int, nightly_verify.Recheck], now: dt.datetime | None = None
) -> int:
    """Store the re-checks of a batch of items; return how many this call processed.

    Locks the batch's still-unprocessed items (``select_for_update``) so a second runner of the
    same day skips them; items another run already processed are ignored. Label changes go
    through :func:`audit.services.labels.claims_machine_relabel` (one bulk write per batch).
    """
    now = now or timezone.now()
    items = list(
        NightlyItem.objects.select_for_update(of=("self",))
        .filter(report=report, id__in=list(results), processed=False)
        .select_related("claim")
    )
    drifted = claims_machine_relabel(
        changes=[
            (item.claim, results[item.id].label, results[item.id].confidence, results[item.id].verdict)
            for item in items
        ],
        workspace=report.workspace,
        source=SOURCE,
        reason=f"nightly re-check of {report.date.isoformat()}",
        now=now,
    )
    for item, changed_now in zip(items, drifted):
        recheck = results[item.id]
        item.processed, item.processed_at, item.attempt = True, now, report.attempts
        item.new_label, item.new_confidence = recheck.label, round(float(recheck.confidence), 6)
        item.result = recheck.as_json()
        item.changed = changed_now
    changed = sum(drifted)
    rows_update(
        items, ["processed", "processed_at", "attempt", "new_label", "new_confidence", "result", "changed"]
    )
    NightlyReport.objects.filter(id=report.id).update(
        claims_processed=F("claims_processed") + len(items), labels_changed=F("labels_changed") + changed
    )
    return len(items)


def _todo_batches(report: NightlyReport, batch_size: int) -> Iterator[list[int]]:
    ids = list(
        NightlyItem.objects.filter(report=report, processed=False).order_by("id").values_list("id", flat=True)
    )
    for start in range(0, len(ids), batch_size):
        yield ids[start : start + batch_size]


def _drafts(items: list[NightlyItem]) -> list[ClaimDraft]:
    return [
        ClaimDraft(
            claim_id=item.claim.claim_id,
            text=item.claim.text,
            span=(item.claim.span_start, item.claim.span_end),
            type=item.claim.claim_type,
            importance=item.claim.importance,
        )
        for item in items
    ]


def nightly_audit_run(
    *,
    workspace: Workspace,
    day: dt.date,
    batch_size: int = constants.NIGHTLY_BATCH_SIZE,
    depth: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> NightlyOutcome:
    """Re-check the weak claims of ``day`` in ``workspace`` and write the day's report.

    Safe to call again: a finished day is returned as it is; an interrupted one resumes with
    the claims not yet processed. ``depth`` ("full" or "fast") replaces the depth for this run;
    without it the run takes the workspace's ``verification_depth`` override where one is set, else
    ``constants.NIGHTLY_VERIFICATION_DEPTH`` (fast, with label changes confirmed at the full depth). ``progress(done, total)`` is called after each batch.
    """
    if depth is None and "verification_depth" not in (workspace.threshold_overrides or {}):
        depth = constants.NIGHTLY_VERIFICATION_DEPTH  # see constants: fast, drift confirmed at full depth
    # the plain job (no domain) sets the search and the depth; ValueError on an unknown depth
    plain = nightly_verify.nightly_job(workspace, depth=depth)
    thresholds = plain.thresholds
    report = nightly_report_open(workspace=workspace, day=day)
    if report.status == NightlyReport.Status.DONE:
        return NightlyOutcome(report=report, processed_now=0, seconds=0.0, already_done=True)
    # each claim is judged by the job of its answer's domain: the strictness its audit had
    verifier = nightly_verify.Reverifier(workspace=workspace, depth=depth, plain=plain)
    started = time.perf_counter()
    stages = {"retrieve": 0.0, "verify": 0.0, "web": 0.0, "store": 0.0}
    processed_now = 0
    done = report.claims_processed
    if progress:
        progress(done, report.claims_selected)
    for ids in _todo_batches(report, batch_size):
        items = list(
            NightlyItem.objects.filter(id__in=ids, processed=False)
            .select_related("claim__answer")
            .order_by("id")
        )
        rechecks = verifier.recheck(_drafts(items), [item.claim for item in items], timings=stages)
        t0 = time.perf_counter()
        n = nightly_items_record(report=report, results={item.id: r for item, r in zip(items, rechecks)})
        stages["store"] += time.perf_counter() - t0
        processed_now += n
        done += n
        if progress:
            progress(done, report.claims_selected)
    seconds = time.perf_counter() - started
    figures = {
        "verification_depth": thresholds.verification_depth,
        "batch_size": batch_size,
        "stage_seconds": {k: round(v, 2) for k, v in stages.items()},
    }
    report = nightly_report_finish(
        report=report, seconds=seconds, processed_now=processed_now, figures=figures
    )
    outcome = NightlyOutcome(report=report, processed_now=processed_now, seconds=seconds, stages=stages)
    logger.info(
        "nightly_audit workspace=%s date=%s depth=%s selected=%d processed_now=%d changed=%d seconds=%.2f "
        "claims_per_s=%.1f retrieve_s=%.2f verify_s=%.2f store_s=%.2f",
        workspace.slug,
        day,
        thresholds.verification_depth,
        report.claims_selected,
        processed_now,
        report.labels_changed,
        seconds,
        outcome.claims_per_s,
        stages["retrieve"],
        stages["verify"],
        stages["store"],
    )
    return outcome


def _months_between(older: dt.date, newer: dt.date) -> int:
    return (newer.year - older.year) * 12 + (newer.month - older.month) - (newer.day < older.day)


# long: one pass over the day's items fills every section of the report
def nightly_report_build(*, report: NightlyReport) -> dict[str, Any]:
    """Compute the report body from the day's processed items (a pure read of stored rows)."""
    workspace = report.workspace
    items = list(
        NightlyItem.objects.filter(report=report, processed=True)
        .select_related("claim__answer")
        .order_by("id")
    )
    still_failing = [i for i in items if i.new_label in constants.NIGHTLY_LABELS]
    doc_fail: dict[int, Counter[str]] = defaultdict(Counter)
    docs_seen: set[int] = set()
    for item in items:
        for doc_id in item.result.get("documents", []):
            docs_seen.add(doc_id)
            if item.new_label in constants.NIGHTLY_LABELS:
                doc_fail[doc_id][item.new_label] += 1
    documents = {d.id: d for d in Document.objects.filter(id__in=docs_seen, workspace=workspace)}
    failing_rows: list[dict[str, Any]] = [
        {
            "document_id": doc_id,
            "title": documents[doc_id].title,
            "uri": documents[doc_id].uri,
            "failing_claims": sum(c.values()),
            "refuted": c.get(Label.REFUTED, 0),
            "nei": c.get(Label.NEI, 0),
        }
        for doc_id, c in doc_fail.items()
        if doc_id in documents
    ]
    top_failing = sorted(
        failing_rows,
        key=lambda row: (-row["failing_claims"], -row["refuted"], row["title"], row["document_id"]),
    )[: constants.NIGHTLY_TOP_FAILING_DOCUMENTS]

    stale = []
    for doc in sorted(documents.values(), key=lambda d: (d.published_at or dt.date.min, d.id)):
        if doc.published_at is None:
            continue
        limit = workspace.freshness_months(doc.domain)
        age = _months_between(doc.published_at, report.date)
        if age > limit:
            stale.append(
                {
                    "document_id": doc.id,
                    "title": doc.title,
                    "uri": doc.uri,
                    "domain": doc.domain,
                    "published_at": doc.published_at.isoformat(),
                    "age_months": age,
                    "limit_months": limit,
                }
            )

    def claim_row(item: NightlyItem) -> dict[str, Any]:
        return {
            "claim": item.claim_id,
            "answer": item.claim.answer.public_id,
            "claim_id": item.claim.claim_id,
            "text": item.claim.text[:500],
            "importance": item.claim.importance,
            "old_label": item.old_label,
            "new_label": item.new_label,
            "old_confidence": round(item.old_confidence, 4),
            "new_confidence": round(item.new_confidence or 0.0, 4),
        }

    review = sorted(
        (
            i
            for i in still_failing
            if i.claim.importance != constants.IMPORTANCE_MINOR or i.new_label == Label.REFUTED
        ),
        key=lambda i: (
            IMPORTANCE_RANK.get(i.claim.importance, 3),
            i.new_label != Label.REFUTED,
            i.new_confidence or 0.0,
            i.id,
        ),
    )
    drift = [claim_row(i) for i in items if i.changed]
    transitions = Counter(f"{i.old_label}->{i.new_label}" for i in items if i.changed)
    return {
        "date": report.date.isoformat(),
        "workspace": workspace.slug,
        "counts": {
            "claims_selected": report.claims_selected,
            "claims_processed": len(items),
            "labels_changed": len(drift),
            "still_failing": len(still_failing),
            "now_supported": sum(1 for i in items if i.new_label == Label.SUPPORTED),
            "by_new_label": dict(sorted(Counter(i.new_label for i in items).items())),
            "by_old_label": dict(sorted(Counter(i.old_label for i in items).items())),
            "review_recommended": len(review),
            "stale_sources": len(stale),
            "web_checked": sum(1 for i in items if i.result.get("web")),
            "web_decisive": sum(1 for i in items if (i.result.get("web") or {}).get("used")),
        },
        "top_failing_documents": top_failing,
        "stale_sources": stale,
        "review_recommended": [claim_row(i) for i in review[: constants.NIGHTLY_REVIEW_LIMIT]],
        "label_drift": {"transitions": dict(sorted(transitions.items())), "claims": drift},
    }


@transaction.atomic
def nightly_report_finish(
    *, report: NightlyReport, seconds: float, processed_now: int, figures: dict[str, Any] | None = None
) -> NightlyReport:
    """Write the report body and mark the report DONE (once: a conditional update on RUNNING)."""
    report.refresh_from_db()
    if report.status == NightlyReport.Status.DONE:
        return report
    body = nightly_report_build(report=report)
    if figures:
        body["figures"] = figures  # of the attempt that finished the day
    duration = report.duration_s + max(seconds, 0.0)
    total_processed = body["counts"]["claims_processed"]
    finished = NightlyReport.objects.filter(id=report.id, status=NightlyReport.Status.RUNNING).update(
        status=NightlyReport.Status.DONE,
        finished_at=timezone.now(),
        report=body,
        claims_processed=total_processed,
        labels_changed=body["counts"]["labels_changed"],
        review_recommended=body["counts"]["review_recommended"],
        duration_s=duration,
        claims_per_s=(processed_now / seconds) if seconds > 0 else 0.0,
    )
    report.refresh_from_db()
    if finished == 1:
        opened = nightly_curation_open(report=report)
        if opened:
            body["curation_items_opened"] = opened
            NightlyReport.objects.filter(id=report.id).update(report=body)
            report.refresh_from_db()
        event_record(
            action="nightly.finished",
            obj=report,
            actor_label=SOURCE,
            workspace=report.workspace,
            details={"date": report.date.isoformat(), **body["counts"]},
        )
    return report


def nightly_curation_open(*, report: NightlyReport) -> list[int]:
    """Open curation items for KB documents the day's re-check found wanting; return their ids.

    Two reasons: a top failing document that contradicts a claim (the document or the answers
    are wrong), and a stale source (older than the freshness policy) that served as evidence.
    Skipped for a document that already has an open nightly item, so daily runs do not pile items up.
    """
    body = report.report
    reasons: dict[int, list[str]] = {}
    for row in body.get("top_failing_documents", []):
        if row["refuted"]:
            reasons.setdefault(row["document_id"], []).append(
                f"{row['refuted']} claim(s) contradicted by this document and {row['nei']} left without support"
            )
    for row in body.get("stale_sources", []):
        reasons.setdefault(row["document_id"], []).append(
            f"evidence for the day's claims but {row['age_months']} months old (policy for "
            f"{row['domain']}: {row['limit_months']} months)"
        )
    documents = Document.objects.filter(workspace=report.workspace, id__in=list(reasons)).order_by("id")
    return hooks.documents_flagged(
        workspace=report.workspace,
        source=FLAGGED_SOURCE,
        reasons={
            document: f"Nightly re-check of {report.date.isoformat()}: {'; '.join(reasons[document.id])}. "
            "Check whether the document is correct and current, and re-ingest it if not."
            for document in documents
        },
    )
