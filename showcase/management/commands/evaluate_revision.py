"""Run the revision loop offline on benchmark answers and report before/after figures (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from audit.constants import SOFTENING_STYLES, UNSUPPORTED_ACTIONS, Thresholds
from audit.evaluation.bench_data import BENCHMARKS_DIR, read_jsonl
from audit.evaluation.revision_eval import evaluate_answers
from audit.pipeline.audit import verify_claims
from audit.pipeline.revision import RevisionOptions, revise_audit
from audit.services.revision import revision_options
from escalation.policy import review_reasons

DEFAULT_ANSWERS = BENCHMARKS_DIR / "answers_dev.jsonl"


class Command(BaseCommand):
    help = (
        "Audit and revise every answer of a benchmark answers file offline (no LLM, no web) and print, "
        "before and after revision, the unsupported rate among material claims, the supported claims "
        "removed, the edits per strategy and whether every edit is traceable to a claim and a strategy."
    )

    def add_arguments(self, parser):
        parser.add_argument("--answers", default=str(DEFAULT_ANSWERS), help="answers JSONL file")
        parser.add_argument("--limit", type=int, default=None, help="only the first N answers")
        defaults = revision_options()  # THEORIA_REVISION_SOFTENING / THEORIA_REVISION_UNSUPPORTED
        parser.add_argument("--softening", default=defaults.softening, choices=SOFTENING_STYLES)
        parser.add_argument(
            "--unsupported-action", default=defaults.unsupported_action, choices=UNSUPPORTED_ACTIONS
        )
        parser.add_argument("--max-revisions", type=int, default=None, help="override MAX_REVISIONS")
        parser.add_argument("--json", default="", help="also write the figures as JSON to this file")

    def handle(self, *args, **options):
        path = Path(options["answers"])
        if not path.is_file():
            raise CommandError(f"The answers file {path} does not exist.")
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be at least 1.")
        thresholds = Thresholds()
        if options["max_revisions"] is not None:
            if options["max_revisions"] < 0:
                raise CommandError("--max-revisions must be 0 or more.")
            thresholds = thresholds.updated({"max_revisions": options["max_revisions"]})
        good, bad = read_jsonl(path, ("query", "answer", "contexts"))
        for line in bad:
            self.stderr.write(f"{path.name}:{line.line_no}: skipped: {line.reason}.")
        records = [rec for _, rec in good][: options["limit"]]
        if not records:
            raise CommandError(f"{path} holds no usable answer.")
        revision_options = RevisionOptions(
            softening=options["softening"], unsupported_action=options["unsupported_action"]
        )

        def revise(query, answer, passages):
            return revise_audit(
                query=query, answer=answer, contexts=passages, thresholds=thresholds, options=revision_options
            )

        def judge(text, passage):  # the claim judge on one passage, at these thresholds
            return verify_claims([(text, [passage])], thresholds=thresholds)[0]

        def needs_case(verdict, revision) -> bool:  # the escalation intake on the claim as received
            return bool(
                review_reasons(
                    label=verdict.label,
                    confidence=verdict.confidence,
                    domain="",
                    regulated_domains=(),
                    revision=revision,
                    importance=verdict.claim.importance,
                    low_confidence_threshold=thresholds.low_confidence_threshold,
                    auto_corrected_review=thresholds.auto_corrected_review,
                )
            )

        bar = tqdm(
            total=len(records),
            desc="answers",
            unit="answer",
            file=sys.stderr,
            disable=options["verbosity"] == 0,
        )
        try:
            ev = evaluate_answers(records, revise, progress=bar.update, judge=judge, needs_case=needs_case)
        finally:
            bar.close()
        self.stdout.write(
            f"{path.name}: {len(records)} answers, softening {options['softening']}, "
            f"unsupported claims: {options['unsupported_action']}, "
            f"max revisions {thresholds.max_revisions}"
        )
        self.stdout.write(ev.report(thresholds.unsupported_rate_threshold))
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(ev.as_json(), indent=2))
        failed = (
            ev.untraceable
            or ev.invalid_markers
            or ev.supported_claims_removed
            or ev.unsupported_edits
            or ev.subject_changed
            or ev.refuted_without_case
            or ev.unbacked_markers
            or ev.unsupported_rate_after > thresholds.unsupported_rate_threshold
        )
        if failed:
            raise CommandError("At least one revision target was missed (see the report above).")
