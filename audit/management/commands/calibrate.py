"""Refit a workspace's calibration from its reviewers' decisions, list its versions, or roll one back."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from audit.errors import InvalidInput
from audit.management.workspace_option import workspace_from_option
from audit.selectors.learning import calibration_versions
from audit.services.calibration import calibration_activate, calibration_run

ACTOR = "manage.py calibrate"


class Command(BaseCommand):
    help = (
        "Refit the workspace's decision threshold, confidence calibration (Platt on the judge's support "
        "logit) and stacker weights from its reviewed examples; print before/after balanced accuracy, ECE "
        "and the cases that would open, by grouped cross-validation; keep the fit only when it wins on the "
        "held-out folds (docs/ARCHITECTURE.md, 'Learning from reviewers'). --list shows the versions, "
        "--rollback N (or none) puts an earlier one back in force."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="workspace slug")
        parser.add_argument("--list", action="store_true", help="list the calibration versions and stop")
        parser.add_argument(
            "--rollback",
            metavar="VERSION",
            default=None,
            help="put calibration VERSION back in force, or 'none' for the judge as shipped",
        )

        parser.add_argument(
            "--llm",
            action="store_true",
            help="--list / --rollback the LLM judge's weight fits (evaluate --judge llm --fit) instead, for "
            "the endpoint and model of --llm-url / --llm-model (default: THEORIA_LLM_BASE_URL, THEORIA_LLM_MODEL)",
        )
        parser.add_argument("--llm-url", default=None, metavar="URL")
        parser.add_argument("--llm-model", default=None)

    def handle(self, *args, **options):
        workspace = workspace_from_option(options["workspace"])
        if options["llm"]:
            self._llm(workspace, options)
            return
        if options["list"]:
            self._list(workspace)
            return
        if options["rollback"] is not None:
            self._rollback(workspace, options["rollback"])
            return
        bar = tqdm(desc="calibrate: judge the examples", unit="claim", file=sys.stderr, disable=None)
        report = calibration_run(workspace=workspace, actor_label=ACTOR, progress=bar.update)
        bar.close()
        for line in report.lines():
            self.stdout.write(line)
        if report.outcome == "failed":
            raise CommandError(report.message)

    def _list(self, workspace) -> None:
        versions = list(calibration_versions(workspace=workspace))
        if not versions:
            self.stdout.write(
                f"workspace {workspace.slug}: no calibration has been fitted; the judge runs as shipped."
            )
            return
        for v in versions:
            m = v.metrics or {}
            figures = (
                f"bAcc {m['before']['bacc']:.3f} -> {m['after']['bacc']:.3f}, ECE {m['before']['ece']:.3f} -> "
                f"{m['after']['ece']:.3f}"
                if "before" in m
                else ""
            )
            threshold = f"threshold {v.params['threshold']:.2f}, " if v.params else ""
            self.stdout.write(
                f"v{v.number} {v.status:8s} {v.fitted_at:%Y-%m-%d %H:%M} by {v.fitted_by}: {v.n_examples} examples, "
                f"{v.judge_version} at {v.depth} depth; {threshold}{figures}"
            )

    def _rollback(self, workspace, value: str) -> None:
        if value.strip().lower() == "none":
            number = None
        else:
            try:
                number = int(value.lstrip("vV"))
            except ValueError:
                raise CommandError(f"--rollback takes a version number or 'none', not {value!r}.") from None
        try:
            calibration_activate(workspace=workspace, number=number, actor=None, actor_label=ACTOR)
        except InvalidInput as exc:
            raise CommandError(exc.message) from None
        now = f"calibration v{number}" if number is not None else "no calibration (the judge as shipped)"
        self.stdout.write(f"workspace {workspace.slug}: {now} is in force.")

    def _llm(self, workspace, options) -> None:
        from django.conf import settings

        from audit.selectors.llm import llm_weighing, llm_weight_versions
        from audit.services.llm_weight import llm_weight_activate

        conf = settings.THEORIA
        endpoint = (options["llm_url"] or conf.get("LLM_BASE_URL") or "").strip()
        model = options["llm_model"] or conf.get("LLM_MODEL") or "default"
        if not endpoint:
            raise CommandError("--llm needs an endpoint: pass --llm-url or set THEORIA_LLM_BASE_URL.")
        if options["rollback"] is not None:
            value = options["rollback"].strip().lower()
            try:
                number = None if value == "none" else int(value.lstrip("v"))
            except ValueError:
                raise CommandError(f"--rollback takes a version number or 'none', not {value!r}.") from None
            try:
                llm_weight_activate(
                    workspace=workspace, endpoint=endpoint, model=model, number=number, actor_label=ACTOR
                )
            except InvalidInput as exc:
                raise CommandError(exc.message) from None
        elif not options["list"]:
            raise CommandError("--llm goes with --list or --rollback; fit with evaluate --judge llm --fit.")
        for v in llm_weight_versions(workspace=workspace, endpoint=endpoint, model=model):
            h = (v.metrics or {}).get("held_out", {})
            figures = (
                f"; held-out bAcc {h['offline']['bacc']:.1f} offline, {h['with_llm']['bacc']:.1f} with the LLM"
                if h
                else ""
            )
            self.stdout.write(
                f"v{v.number} {v.status:8s} {v.fitted_at:%Y-%m-%d %H:%M} by {v.fitted_by}: weight {v.weight:g}, "
                f"margin {v.margin:g}, {v.n_claims} claims ({v.judge_prompt} prompt){figures}"
            )
        w = llm_weighing(workspace=workspace, endpoint=endpoint, model=model)
        self.stdout.write(
            f"workspace {workspace.slug}, {model} at {endpoint}: weight {w['weight']:g}, margin {w['margin']:g} "
            f"in force ({w['source']})."
        )
