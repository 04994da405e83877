"""Reads of what the verifier learns from its reviewers: examples, their export, calibration versions,
and the dashboard's reliability, agreement and drift figures. Every read is scoped to a workspace."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from audit import constants
from audit.models import CalibrationVersion, ReviewedExample, Workspace
from audit.models.choices import Label
from audit.pipeline.calibration import Calibration
from audit.pipeline.judges import get_judge
from audit.selectors.api import thresholds_for

# the columns the figures read (one query for the whole dashboard panel)
_FIGURE_COLUMNS = ("decided_at", "domain", "machine_label", "machine_confidence", "reviewer_label")


def reviewed_example_list(*, workspace: Workspace) -> QuerySet[ReviewedExample]:
    """The workspace's reviewed examples, newest first, with their claim and answer joined."""
    return (
        ReviewedExample.objects.filter(workspace=workspace)
        .select_related("claim__answer")
        .order_by("-decided_at", "-id")
    )


def examples_for_calibration(
    *, workspace: Workspace, limit: int = constants.CALIBRATION_MAX_EXAMPLES
) -> list[Any]:
    """The examples a calibration learns from: the newest decision per claim and source (a reopened
    case decided again counts once, as decided last), at most ``limit`` of them, newest first."""
    seen, out = set(), []
    for example in reviewed_example_list(workspace=workspace).iterator(chunk_size=500):
        key = (example.claim_id, example.source)
        if key in seen:
            continue
        seen.add(key)
        out.append(example)
        if len(out) >= limit:
            break
    return out


def benchmark_id(workspace_slug: str, example_pk: int) -> str:
    """The ``id`` of an example's benchmark row."""
    return f"{workspace_slug}-review-{example_pk}"


def benchmark_row(example: ReviewedExample, workspace_slug: str) -> dict[str, Any]:
    """One example in the claim format of the shared benchmarks (``evaluate`` reads it like a dataset).

    ``label`` is the reviewer's; ``fine_label`` the decision; ``meta`` carries what the machine said
    (label, confidence, logit, judge, judge version, calibration version), the reviewer, the time,
    and ``answer_id``, the group key (no answer straddles a cross-validation fold).
    """
    answer = example.claim.answer
    return {
        "id": benchmark_id(workspace_slug, example.pk),
        "dataset": f"review:{workspace_slug}",
        "claim": example.claim_text,
        "evidence": [
            {
                "id": str(e.get("id") or f"e{i}"),
                "title": str(e.get("title") or ""),
                "text": str(e.get("text") or ""),
            }
            for i, e in enumerate(example.evidence or [])
            if isinstance(e, dict)
        ],
        "label": example.reviewer_label,
        "fine_label": example.decision,
        "domain": example.domain,
        "meta": {
            "labels": "3-way",
            "source": example.source,
            "reference": example.reference,
            "answer_id": answer.public_id,
            "claim_id": example.claim.claim_id,
            "question": answer.query,
            "machine_label": example.machine_label,
            "machine_confidence": example.machine_confidence,
            "machine_logit": example.machine_logit,
            "judge": example.judge,
            "judge_version": example.judge_version,
            "calibration_version": example.calibration_version,
            "reviewer": example.reviewer_name,
            "rationale": example.rationale,
            "decided_at": example.decided_at.isoformat(),
        },
    }


def benchmark_rows(
    *, workspace: Workspace, queryset: QuerySet[ReviewedExample] | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the workspace's examples (or those of ``queryset``, already scoped) as benchmark rows."""
    qs = queryset if queryset is not None else reviewed_example_list(workspace=workspace)
    for example in qs.iterator(chunk_size=500):
        yield benchmark_row(example, workspace.slug)


def calibration_versions(*, workspace: Workspace) -> QuerySet[CalibrationVersion]:
    return CalibrationVersion.objects.filter(workspace=workspace).order_by("-number")


def calibration_active(*, workspace: Workspace) -> CalibrationVersion | None:
    """The version in force (the one ``Workspace.calibration`` copies), or None."""
    return calibration_versions(workspace=workspace).filter(status=CalibrationVersion.Status.ACTIVE).first()


def calibration_version_get(*, workspace: Workspace, number: int) -> CalibrationVersion | None:
    return CalibrationVersion.objects.filter(workspace=workspace, number=number).first()


def readiness(examples: list[Any]) -> tuple[int, int, int]:
    """(examples, of them SUPPORTED per reviewers, how many more are needed at least)."""
    n = len(examples)
    supported = sum(1 for e in examples if e.reviewer_label == Label.SUPPORTED)
    other = n - supported
    per_class = constants.CALIBRATION_MIN_PER_CLASS
    missing_classes = max(0, per_class - supported) + max(0, per_class - other)
    return n, supported, max(constants.CALIBRATION_MIN_EXAMPLES - n, missing_classes)


def calibration_state(workspace: Workspace) -> dict[str, Any]:
    """The calibration in force, whether it fits the workspace's judge, the examples, the versions."""
    plain = thresholds_for(workspace, calibrated=False)
    judge = get_judge(plain.judge)
    in_force = Calibration.from_dict(workspace.calibration)
    n, supported, needed = readiness(examples_for_calibration(workspace=workspace))
    return {
        "in_force": in_force.as_dict() if in_force else None,
        "applies": bool(in_force and in_force.fits(judge)),
        "judge": judge.version,
        "depth": plain.verification_depth,
        "examples": n,
        "examples_supported": supported,
        "examples_needed": needed,
        "versions": list(calibration_versions(workspace=workspace)),
    }


# --- dashboard figures ----------------------------------------------------------------------------


def _rows(
    workspace: Workspace, start: dt.datetime, end: dt.datetime, domain: str = ""
) -> list[tuple[Any, ...]]:
    return list(
        ReviewedExample.objects.filter(workspace=workspace, decided_at__gte=start, decided_at__lt=end)
        .filter(**({"domain__iexact": domain} if domain else {}))
        .order_by("decided_at", "id")
        .values_list(*_FIGURE_COLUMNS)
    )


def reliability(rows: list[tuple[Any, ...]], bins: int = constants.CALIBRATION_ECE_BINS) -> dict[str, Any]:
    """Reliability diagram: per equal-width bin of the machine's confidence, its mean, the share the
    reviewers found SUPPORTED and the count; plus the ECE over the rows."""
    sums = [[0.0, 0, 0] for _ in range(bins)]  # confidence sum, SUPPORTED count, n
    for _at, _domain, _machine, confidence, reviewer in rows:
        b = min(int(float(confidence) * bins), bins - 1)
        sums[b][0] += float(confidence)
        sums[b][1] += reviewer == Label.SUPPORTED
        sums[b][2] += 1
    out: dict[str, Any] = {"bins": [], "n": len(rows), "ece": None}
    total = 0.0
    for b, (conf_sum, supported, n) in enumerate(sums):
        if not n:
            continue
        mean, share = conf_sum / n, supported / n
        total += n / len(rows) * abs(share - mean)
        out["bins"].append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "confidence": round(mean, 4),
                "supported": round(share, 4),
                "n": n,
            }
        )
    if rows:
        out["ece"] = round(total, 4)
    return out


def agreement_by_day(rows: list[tuple[Any, ...]], start: dt.date, end: dt.date) -> dict[str, Any]:
    """Per day of [start, end]: decisions and the share where the reviewer gave the machine's label."""
    by_day: dict[dt.date, list[int]] = defaultdict(lambda: [0, 0])
    for at, _domain, machine, _conf, reviewer in rows:
        cell = by_day[at.date()]
        cell[0] += 1
        cell[1] += machine == reviewer
    days, decisions, agreement = [], [], []
    day = start
    while day <= end:
        n, agreed = by_day.get(day, (0, 0))
        days.append(day.isoformat())
        decisions.append(n)
        agreement.append(round(agreed / n, 4) if n else None)
        day += dt.timedelta(days=1)
    n_all = sum(decisions)
    agreed_all = sum(1 for _at, _d, m, _c, r in rows if m == r)
    return {
        "days": days,
        "decisions": decisions,
        "agreement": agreement,
        "total": n_all,
        "overall": round(agreed_all / n_all, 4) if n_all else None,
    }


def drift_by_domain(
    rows: list[tuple[Any, ...]], now: dt.datetime, window_days: int = constants.REVIEW_DRIFT_WINDOW_DAYS
) -> list[dict[str, Any]]:
    """Per domain: agreement in the last window and in the one before, the commonest relabel, and
    whether it is below ``REVIEW_DRIFT_MIN_AGREEMENT`` with enough decisions to say so: ``low`` (an
    alert) when it did not rise since the window before, ``recovering`` when it did."""
    window = dt.timedelta(days=window_days)
    cells: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"now": [0, 0], "before": [0, 0], "changes": Counter()}
    )
    for at, domain, machine, _conf, reviewer in rows:
        if at >= now or at < now - 2 * window:
            continue
        cell = cells[domain or "(none)"]
        part = cell["now"] if at >= now - window else cell["before"]
        part[0] += 1
        part[1] += machine == reviewer
        if machine != reviewer and at >= now - window:
            cell["changes"][f"{machine} → {reviewer}"] += 1
    out = []
    for domain in sorted(cells):
        cell = cells[domain]
        (n, agreed), (n_before, agreed_before) = cell["now"], cell["before"]
        share = agreed / n if n else None
        rising = bool(n and n_before and share is not None and share > agreed_before / n_before)
        out.append(
            {
                "domain": domain,
                "decisions": n,
                "agreement": round(share, 4) if share is not None else None,
                "decisions_before": n_before,
                "agreement_before": round(agreed_before / n_before, 4) if n_before else None,
                "change": round(share - agreed_before / n_before, 4) if n and n_before else None,
                "top_relabel": cell["changes"].most_common(1)[0] if cell["changes"] else None,
                "low": bool(
                    share is not None
                    and n >= constants.REVIEW_DRIFT_MIN_EXAMPLES
                    and share < constants.REVIEW_DRIFT_MIN_AGREEMENT
                    and not rising
                ),
                # under the bar but agreeing more than the window before: watched, not alerted
                "recovering": bool(
                    share is not None
                    and n >= constants.REVIEW_DRIFT_MIN_EXAMPLES
                    and share < constants.REVIEW_DRIFT_MIN_AGREEMENT
                    and rising
                ),
            }
        )
    return out


def review_drift(*, workspace: Workspace, now: dt.datetime) -> list[dict[str, Any]]:
    """``drift_by_domain`` over the two windows ending at ``now`` (the daily alert reads this)."""
    window = dt.timedelta(days=constants.REVIEW_DRIFT_WINDOW_DAYS)
    return drift_by_domain(_rows(workspace, now - 2 * window, now), now)


def learning_summary(
    *, workspace: Workspace, start: dt.datetime, end: dt.datetime, domain: str = ""
) -> dict[str, Any]:
    """The dashboard's panel: reliability, agreement by day and drift by domain (two windows ending
    at ``end``), from one query of the period (and the window before it, for drift), plus the
    calibration in force."""
    window = dt.timedelta(days=constants.REVIEW_DRIFT_WINDOW_DAYS)
    rows = _rows(workspace, min(start, end - 2 * window), end, domain)
    period = [r for r in rows if r[0] >= start]
    fits = list(calibration_versions(workspace=workspace)[:2])  # the last fit, and the one in force
    active = next((v for v in fits if v.status == CalibrationVersion.Status.ACTIVE), None)
    if active is None and fits and fits[0].status != CalibrationVersion.Status.ACTIVE:
        active = calibration_active(workspace=workspace)
    return {
        "reliability": reliability(period),
        "agreement": agreement_by_day(period, start.date(), (end - dt.timedelta(microseconds=1)).date()),
        "drift": drift_by_domain(rows, end),
        "window_days": constants.REVIEW_DRIFT_WINDOW_DAYS,
        "min_agreement": constants.REVIEW_DRIFT_MIN_AGREEMENT,
        "min_examples": constants.REVIEW_DRIFT_MIN_EXAMPLES,
        "min_bacc_gain": constants.CALIBRATION_MIN_BACC_GAIN,
        "calibration": active,
        "last_fit": fits[0] if fits else None,  # kept or declined, with its reason (metrics.reason)
    }
