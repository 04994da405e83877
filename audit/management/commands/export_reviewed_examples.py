"""Write a workspace's reviewed examples as JSONL in the claim format of the shared benchmarks."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from audit.management.workspace_option import workspace_from_option
from audit.selectors.learning import benchmark_rows
from audit.web.exports import iter_jsonl


class Command(BaseCommand):
    help = (
        "Write the workspace's reviewed examples (every case resolution and revision review) as JSONL, one "
        "claim a line in the benchmark claim format ({id, dataset, claim, evidence, label, fine_label, "
        "domain, meta}), so `evaluate --claims FILE` reads it like a dataset. The reviewer's label is "
        "`label`; what the machine said is in `meta`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--workspace", required=True, help="workspace slug")
        parser.add_argument("--output", default="-", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        workspace = workspace_from_option(options["workspace"])
        path = options["output"]
        if path == "-":
            n = self._write(self.stdout, workspace)
        else:
            try:
                with open(path, "w", encoding="utf-8") as out:
                    n = self._write(out, workspace)
            except OSError as exc:
                raise CommandError(f"cannot write {path}: {exc.strerror}.") from None
        self.stderr.write(f"export_reviewed_examples: {n} example{'s' if n != 1 else ''} of {workspace.slug}")

    @staticmethod
    def _write(out, workspace) -> int:
        n = 0
        for line in iter_jsonl(benchmark_rows(workspace=workspace)):
            out.write(line)
            n += 1
        return n
