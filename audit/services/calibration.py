"""A workspace's calibration, learned from its reviewers: fit, keep or decline, version, roll back.

``calibration_run`` reads the workspace's reviewed examples, runs its judge over them once (outside
any transaction: it is the slow part), cross-validates the refit (``audit.pipeline.calibration_fit``)
and then, in one short transaction, stores a ``CalibrationVersion``: ``active`` when it won on the
held-out folds by the stated margins (``Workspace.calibration`` then copies its parameters, which
``thresholds_for`` applies to every audit of the workspace), ``declined`` otherwise. Too few examples
store nothing and say how many more are needed. ``calibration_activate`` is the rollback: an admin
puts an earlier version, or none, back in force. Every change of the parameters in force is an
audit event (``calibration.activated``, ``calibration.rolled_back``); a declined fit records
``calibration.declined``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Max

from audit import constants
from audit.errors import InvalidInput, Missing
from audit.models import CalibrationVersion, ReviewedExample, Workspace
from audit.pipeline import calibration_fit as cf
from audit.pipeline.calibration import Calibration
from audit.pipeline.judges import get_judge
from audit.selectors.api import thresholds_uncalibrated
from audit.selectors.learning import calibration_versions, examples_for_calibration, readiness
from audit.services.events import Actor, actor_name, actor_user, event_record
from audit.services.task_queue import enqueue

logger = logging.getLogger(__name__)

Status = CalibrationVersion.Status


@dataclass
class CalibrationReport:
    """What a calibration run did, in figures and in words."""

    workspace: str
    outcome: str  # "needs_more" | "kept" | "declined" | "failed"
    message: str
    examples: int = 0
    supported: int = 0
    needed: int = 0
    version: CalibrationVersion | None = None
    metrics: dict[str, Any] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """The report as printed by ``manage.py calibrate``."""
        out = [f"workspace {self.workspace}: {self.message}"]
        m = self.metrics
        if not m:
            return out
        out.append(
            f"{m['n']} reviewed examples from {m['groups']} answers, grouped {m['folds']}-fold cross-validation "
            "(after = parameters fitted without the example's answer; before = the judge as shipped):"
        )
        out.append(f"  {'':26s} {'before':>8s} {'after':>8s}")
        rows = [
            ("2-class bAcc", "bacc", "{:.3f}"),
            ("3-class bAcc", "bacc3", "{:.3f}"),
            ("ECE of the confidence", "ece", "{:.3f}"),
            ("agreement with reviewers", "agreement", "{:.3f}"),
            ("cases that would open", "cases", "{:d}"),
            ("  of them SUPPORTED per reviewers", "cases_on_supported", "{:d}"),
            ("SUPPORTED, reviewers disagree", "false_supported", "{:d}"),
        ]
        for title, key, fmt in rows:
            out.append(f"  {title:26s} {fmt.format(m['before'][key]):>8s} {fmt.format(m['after'][key]):>8s}")
        out.append(
            "  per fold (bAcc before -> after): "
            + ", ".join(
                f"{f['fold']}: {f['before']['bacc']:.3f} -> {f['after']['bacc']:.3f}" for f in m["per_fold"]
            )
        )
        out.append(
            f"  bootstrap ({constants.CALIBRATION_BOOTSTRAP_CONFIDENCE:.0%}, over answers) low end of the bAcc gain: "
            f"{m['bootstrap_low']:+.3f}; margins: bAcc +{constants.CALIBRATION_MIN_BACC_GAIN:.3f}, "
            f"ECE no worse than +{constants.CALIBRATION_MAX_ECE_LOSS:.3f}"
        )
        if "params" in m:
            p = m["params"]
            out.append(
                f"  new parameters: threshold {p['threshold']:.2f}, Platt a {p['a']:.3f} b {p['b']:.3f}"
                + (", stacker refitted" if m.get("stacker") else "")
            )
        return out


def calibration_queue(*, workspace: Workspace, actor: Actor = None) -> None:
    """Queue a refit of ``workspace``'s calibration on the task worker, with the caller's write (``audit.services.task_queue``)."""
    user = actor_user(actor)
    actor_id = user.pk if user is not None else None
    enqueue("audit.tasks.calibrate_workspace", workspace.pk, actor_id)


def _needs_more_message(n: int, supported: int, needed: int) -> str:
    per_class = constants.CALIBRATION_MIN_PER_CLASS
    return (
        f"{n} reviewed example{'s' if n != 1 else ''} ({supported} SUPPORTED, {n - supported} not); "
        f"a calibration needs at least {constants.CALIBRATION_MIN_EXAMPLES}, with {per_class} of each: "
        f"{needed} more reviewed decision{'s' if needed != 1 else ''} needed. Nothing was changed."
    )


def as_examples(examples: list[ReviewedExample]) -> cf.Examples:
    return cf.Examples(
        ids=[e.pk for e in examples],
        claims=[e.claim_text for e in examples],
        evidence=[list(e.evidence or []) for e in examples],
        labels=[e.reviewer_label for e in examples],
        groups=[str(e.claim.answer_id) for e in examples],
    )


def calibration_run(
    *,
    workspace: Workspace,
    actor: Actor = None,
    actor_label: str = "",
    progress: Callable[[int], object] | None = None,
) -> CalibrationReport:
    """Fit, cross-validate and version the workspace's calibration; keep it only when it wins."""
    examples = examples_for_calibration(workspace=workspace)
    n, supported, needed = readiness(examples)
    if needed > 0:
        return CalibrationReport(
            workspace.slug, "needs_more", _needs_more_message(n, supported, needed), n, supported, needed
        )
    thresholds = thresholds_uncalibrated(workspace)
    judge = get_judge(thresholds.judge)
    try:
        prep = cf.prepare(as_examples(examples), thresholds, judge, progress=progress)
        outcome = cf.calibrate(prep, version=0)
    except cf.CalibrationError as exc:
        return CalibrationReport(workspace.slug, "failed", f"{exc}. Nothing was changed.", n, supported)
    outcome.metrics["stacker"] = prep.head is not None
    version = _store(
        workspace, prep, outcome, actor=actor, actor_label=actor_label, example_ids=[e.pk for e in examples]
    )
    verb = "kept and now in force" if outcome.kept else "declined; the parameters in force are unchanged"
    return CalibrationReport(
        workspace.slug,
        "kept" if outcome.kept else "declined",
        f"calibration v{version.number} {verb}: {outcome.reason}.",
        n,
        supported,
        0,
        version,
        outcome.metrics,
    )


@transaction.atomic
def _store(
    workspace: Workspace,
    prep: cf.Prepared,
    outcome: cf.Outcome,
    *,
    actor: Actor,
    actor_label: str,
    example_ids: list[int],
) -> CalibrationVersion:
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)  # version numbers in order
    number = (calibration_versions(workspace=workspace).aggregate(m=Max("number"))["m"] or 0) + 1
    calibration = (
        cf.as_calibration(prep, outcome.params, number)
        if outcome.kept and outcome.params is not None
        else None
    )
    who = actor_label or actor_name(actor)
    version = CalibrationVersion(
        workspace=workspace,
        number=number,
        status=Status.ACTIVE if outcome.kept else Status.DECLINED,
        judge=prep.judge.name,
        judge_version=prep.judge.version,
        depth=prep.thresholds.verification_depth,
        params=calibration.as_dict() if calibration else {},
        metrics={**outcome.metrics, "reason": outcome.reason},
        example_ids=example_ids,
        n_examples=len(example_ids),
        fitted_by=who,
    )
    if not outcome.kept:
        version.full_clean()
        version.save()
        event_record(
            action="calibration.declined",
            obj=version,
            actor=actor,
            actor_label=actor_label,
            workspace=workspace,
            details=_figures(version),
        )
        return version
    before = Calibration.from_dict(workspace.calibration)
    calibration_versions(workspace=workspace).filter(status=Status.ACTIVE).update(status=Status.INACTIVE)
    version.full_clean()
    version.save()
    _put_in_force(workspace, calibration)
    event_record(
        action="calibration.activated",
        obj=version,
        actor=actor,
        actor_label=actor_label,
        workspace=workspace,
        details={**_change(before, calibration), **_figures(version)},
    )
    return version


def _figures(version: CalibrationVersion) -> dict[str, Any]:
    m = version.metrics
    return {
        "version": version.number,
        "examples": version.n_examples,
        "reason": m.get("reason", ""),
        "before": {k: m["before"][k] for k in ("bacc", "ece", "cases")} if "before" in m else {},
        "after": {k: m["after"][k] for k in ("bacc", "ece", "cases")} if "after" in m else {},
    }


def _summary(calibration: Calibration | None) -> dict[str, Any] | None:
    if calibration is None:
        return None
    return {
        "version": calibration.version,
        "judge": calibration.judge_version,
        "depth": calibration.depth,
        "threshold": calibration.threshold,
        "a": calibration.a,
        "b": calibration.b,
        "stacker": calibration.stacker is not None,
    }


def _change(before: Calibration | None, after: Calibration | None) -> dict[str, Any]:
    return {"from": _summary(before), "to": _summary(after)}


def _put_in_force(workspace: Workspace, calibration: Calibration | None) -> None:
    workspace.calibration = calibration.as_dict() if calibration else {}
    workspace.save(update_fields=["calibration"])


@transaction.atomic
def calibration_activate(
    *, workspace: Workspace, number: int | None, actor: Actor, actor_label: str = "", reason: str = ""
) -> Workspace:
    """Put calibration ``number`` (an earlier fit that was kept) back in force, or none (``None``).

    Refused (``InvalidInput`` naming ``version``) for a version that does not exist in the workspace,
    was declined, or was fitted for another judge than the workspace's now. Writes
    ``calibration.rolled_back`` with the parameters before and after.
    """
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    before = Calibration.from_dict(workspace.calibration)
    target = None
    if number is not None:
        version = calibration_versions(workspace=workspace).filter(number=number).first()
        if version is None:
            raise Missing("version", f"this workspace has no calibration v{number}.")
        if version.status == Status.DECLINED:
            raise InvalidInput(
                "version", f"calibration v{number} was declined (it did not win); it cannot be put in force."
            )
        target = Calibration.from_dict(version.params)
        judge = get_judge(thresholds_uncalibrated(workspace).judge)
        if target is None or not target.fits(judge):
            raise InvalidInput(
                "version",
                f"calibration v{number} was fitted for the judge {version.judge_version}; "
                f"the workspace's judge is now {judge.version}.",
            )
    if (before.version if before else None) == number:
        return workspace
    calibration_versions(workspace=workspace).filter(status=Status.ACTIVE).update(status=Status.INACTIVE)
    if number is not None:
        calibration_versions(workspace=workspace).filter(number=number).update(status=Status.ACTIVE)
    _put_in_force(workspace, target)
    event_record(
        action="calibration.rolled_back",
        obj=workspace,
        actor=actor,
        actor_label=actor_label,
        workspace=workspace,
        details={**_change(before, target), "reason": (reason or "").strip()},
    )
    return workspace
