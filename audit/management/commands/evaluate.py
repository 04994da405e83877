"""Accuracy of the offline pipeline on the DEV benchmark, by grouped cross-validation (docs/ARCHITECTURE.md)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.constants import (
    JUDGE,
    JUDGES,
    LLM_CONCURRENCY,
    LLM_FIT_MAX_CALLS,
    LLM_JUDGE_PROMPTS,
    STRICTNESS_POINTS,
    VERIFICATION_DEPTHS,
)
from audit.evaluation.cli import run_evaluate
from audit.evaluation.entailment_fit import BENCHMARKS_DIR
from audit.pipeline.llm.client import LLMClient, LLMConfig
from audit.services.llm import DEFAULT_MODEL


class Command(BaseCommand):
    help = (
        "Per dataset: accuracy, macro-F1 and balanced accuracy (2-class; 3-class on scifact) beside the "
        "keyword-overlap baseline, and the answer-level AUROC of (1 - faithfulness). Figures for the "
        "fitted entailment model come from grouped 5-fold cross-validation."
    )
    requires_system_checks = []

    # long: one argparse declaration per option of the command; nothing to split
    def add_arguments(self, parser):
        parser.add_argument("--claims", default=str(BENCHMARKS_DIR / "claims_dev.jsonl"))
        parser.add_argument("--answers", default=str(BENCHMARKS_DIR / "answers_dev.jsonl"))
        parser.add_argument("--folds", type=int, default=5)
        parser.add_argument(
            "--claims-only",
            action="store_true",
            help="skip the answer-level AUROC (the claims take about a quarter of the time)",
        )
        parser.add_argument(
            "--judge",
            choices=JUDGES,
            default=None,
            help=f"entailment judge to measure (default {JUDGE}); compare judges on the same claims",
        )
        parser.add_argument(
            "--every",
            type=int,
            default=None,
            help="keep the claims of every n-th group only (a quicker comparison, same claims "
            "for every judge)",
        )

        parser.add_argument(
            "--contrast",
            action="store_true",
            help="the contrastive suite (hand-written minimal pairs) instead of DEV: accuracy per family, "
            "for --judge or for every offline judge",
        )
        parser.add_argument(
            "--depth",
            nargs="+",
            choices=VERIFICATION_DEPTHS,
            default=None,
            help="--contrast: the verification depth(s) to run the suite at, one column each (default "
            "full); with two columns, the claims each gets right that the other does not",
        )
        parser.add_argument(
            "--workspace",
            default=None,
            metavar="SLUG",
            help="measure every available judge on this workspace's reviewed examples instead of the DEV files",
        )
        parser.add_argument(
            "--llm-url",
            default=None,
            metavar="URL",
            help="--judge llm: the OpenAI-compatible endpoint to measure (default: THEORIA_LLM_BASE_URL)",
        )
        parser.add_argument(
            "--llm-model", default=None, help="--judge llm: the model name (default: THEORIA_LLM_MODEL)"
        )
        parser.add_argument(
            "--llm-judge-prompt",
            choices=LLM_JUDGE_PROMPTS,
            default=None,
            help="--judge llm: batched verdicts or MiniCheck's claim-by-chunk Yes/No "
            "(default: THEORIA_LLM_JUDGE_PROMPT, batched)",
        )
        parser.add_argument(
            "--fit",
            action="store_true",
            help="--judge llm: fit the LLM's weight and margin on a bounded DEV sample (--every, --max-claims, "
            "--max-calls; resumable) and store them for the endpoint and model (docs/LLM.md)",
        )
        parser.add_argument(
            "--max-calls",
            type=int,
            default=LLM_FIT_MAX_CALLS,
            help=f"--fit: LLM calls this run makes at most (default {LLM_FIT_MAX_CALLS}); run again to resume",
        )
        parser.add_argument(
            "--max-claims", type=int, default=None, help="--fit: claims of the sample at most"
        )
        parser.add_argument(
            "--fit-workspace",
            default=None,
            metavar="SLUG",
            help="--fit: the workspace the fit is stored for (default: the default workspace)",
        )
        parser.add_argument("--dry-run", action="store_true", help="--fit: print the fit, store nothing")
        parser.add_argument(
            "--fit-cache",
            default="var/llm-fit",
            metavar="DIR",
            help="--fit: where the LLM's readings are kept between runs (default var/llm-fit)",
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=None,
            help="confidence SUPPORTED needs (default: audit_score_threshold, 0.8)",
        )

        parser.add_argument(
            "--strictness",
            choices=STRICTNESS_POINTS,
            default=None,
            help="the operating point to label at (default: balanced); see --operating-points",
        )
        parser.add_argument(
            "--operating-points",
            action="store_true",
            help="also compute the operating points (strictness) from the out-of-fold P(supported) and "
            "write them beside the judge's artefact (audit/pipeline/artifacts/nli/operating_points.json), "
            "where the settings page reads them",
        )

        parser.add_argument(
            "--stacker-cv",
            action="store_true",
            help="the NLI judge's figures from the stacker's grouped CV over the cached DEV readings "
            "(var/nli, var/entailment_cache) instead of the whole pipeline, with the checks' blocks of the "
            "last `evaluate --claims-only --judge features` run (a busy machine's shortcut)",
        )
        parser.add_argument(
            "--fit-cascade",
            action="store_true",
            help="choose the NLI judge's cascade cuts from the out-of-fold predictions the last "
            "`evaluate --claims-only --judge features` and `evaluate --claims-only` runs kept under var/, "
            "and write audit/pipeline/artifacts/nli/cascade.json (no model runs)",
        )

    def handle(self, *args, **options):
        if options["stacker_cv"]:
            from audit.evaluation.cli import run_stacker_cv_points

            code = run_stacker_cv_points(
                options["claims"],
                out=self.stdout._out,
                err=self.stderr._out,
                operating_points_out=operating_points_path(options),
            )
            if code:
                raise SystemExit(code)
            return
        if options["fit_cascade"]:
            from audit.evaluation.cascade_fit import fit_cascade
            from audit.pipeline.cascade import CASCADE_PATH

            try:
                fit_cascade(self.stdout._out, CASCADE_PATH)
            except (FileNotFoundError, ValueError) as exc:
                raise CommandError(str(exc)) from None
            return
        if options["workspace"]:
            code = self._workspace(options["workspace"])
            if code:
                raise SystemExit(code)
            return
        llm = None
        if options["judge"] == "llm":
            llm = llm_client_from_settings(
                options["llm_url"], options["llm_model"], options["llm_judge_prompt"]
            )
            if llm is None:
                raise CommandError(
                    "--judge llm needs an endpoint: pass --llm-url or set THEORIA_LLM_BASE_URL."
                )
        if options["fit"]:
            self._fit(llm, options)
            return
        if options["contrast"]:
            from audit.evaluation.contrast import run_contrast

            judges = [options["judge"]] if options["judge"] else offline_judges()
            depths = tuple(dict.fromkeys(options["depth"] or ("full",)))
            run_contrast(judges, out=self.stdout._out, err=self.stderr._out, llm=llm, depths=depths)
            return
        if options["depth"]:
            raise CommandError(
                "--depth applies to --contrast only: DEV's claims are measured at the full depth "
                "(the fast depth's reading on DEV: python manage.py fit_nli --fast-head --no-write)."
            )
        code = run_evaluate(
            options["claims"],
            options["answers"],
            out=self.stdout._out,
            err=self.stderr._out,
            n_folds=options["folds"],
            with_answers=not options["claims_only"],
            judge=options["judge"],
            llm=llm,
            limit=options["every"],
            threshold=options["threshold"],
            strictness=options["strictness"],
            operating_points_out=operating_points_path(options),
        )
        if code:
            raise SystemExit(code)

    def _fit(self, llm, options) -> None:
        from audit.evaluation.llm_fit import run_llm_fit
        from audit.management.workspace_option import workspace_from_option
        from audit.services.workspaces import workspace_get_default

        if llm is None:
            raise CommandError("--fit needs --judge llm and an endpoint (--llm-url or THEORIA_LLM_BASE_URL).")
        slug = options["fit_workspace"]
        workspace = workspace_from_option(slug) if slug else workspace_get_default()
        code = run_llm_fit(
            llm,
            workspace=workspace,
            claims_path=options["claims"],
            every=options["every"],
            max_claims=options["max_claims"],
            max_calls=options["max_calls"],
            store=not options["dry_run"],
            cache_dir=Path(options["fit_cache"]),
            out=self.stdout._out,
            err=self.stderr._out,
        )
        if code:
            raise SystemExit(code)

    def _workspace(self, slug: str) -> int:
        from audit.evaluation.workspace_eval import run_evaluate_workspace
        from audit.management.workspace_option import workspace_from_option
        from audit.selectors.api import thresholds_for
        from audit.selectors.learning import benchmark_id, benchmark_rows, calibration_active

        workspace = workspace_from_option(slug)
        active = calibration_active(workspace=workspace)
        fitted_on = {benchmark_id(workspace.slug, pk) for pk in (active.example_ids if active else [])}
        return run_evaluate_workspace(
            list(benchmark_rows(workspace=workspace)),
            slug=workspace.slug,
            thresholds=thresholds_for(workspace, calibrated=False),
            calibrated=thresholds_for(workspace),
            fitted_on=fitted_on,
            llm=llm_client_from_settings(),
            out=self.stdout._out,
            err=self.stderr._out,
        )


def operating_points_path(options):
    """Where ``--operating-points`` writes (the judge's artefact folder), or None."""
    if not options["operating_points"]:
        return None
    from audit.pipeline.operating_points import OPERATING_POINTS_PATH

    if (options["judge"] or JUDGE) != "nli":
        raise CommandError("--operating-points: only the nli judge gives a calibrated P(supported) to cut.")
    return OPERATING_POINTS_PATH


def offline_judges() -> list[str]:
    """The judges that run here without an LLM: the cross-encoder slot only where a model is configured."""
    from audit.constants import CROSS_ENCODER_PATH

    return [j for j in JUDGES if j != "llm" and (j != "cross-encoder" or CROSS_ENCODER_PATH)]


def llm_client_from_settings(
    base_url: str | None = None, model: str | None = None, judge_prompt: str | None = None
):
    """The LLM client of the deployment settings (THEORIA_LLM_*), ``base_url``, ``model`` and
    ``judge_prompt`` replacing theirs where given, or None where no endpoint is configured."""
    from django.conf import settings

    conf = settings.THEORIA
    base_url = (base_url or conf.get("LLM_BASE_URL") or "").strip()
    if not base_url:
        return None
    kwargs = {
        "base_url": base_url,
        "model": model or conf.get("LLM_MODEL") or DEFAULT_MODEL,
        "api_key": conf.get("LLM_API_KEY") or "",
        "timeout_s": float(conf.get("LLM_TIMEOUT_S", 20.0)),
        "max_retries": int(conf.get("LLM_MAX_RETRIES", 2)),
        "concurrency": int(conf.get("LLM_CONCURRENCY", LLM_CONCURRENCY)),
        "structured": conf.get("LLM_STRUCTURED") or "auto",
        "stream": bool(conf.get("LLM_STREAM", True)),
        "judge_prompt": judge_prompt or conf.get("LLM_JUDGE_PROMPT") or "batched",
    }
    return LLMClient(LLMConfig(**kwargs))
