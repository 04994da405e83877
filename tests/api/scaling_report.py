"""Print the seconds of every HTTP path over a planted answer of each probe family (issue 34).

    DJANGO_DEBUG=1 .venv/bin/python -m tests.api.scaling_report [--size 100000] [--family "number pairs"]

The flow of ``tests/api/test_linear_http.py`` (``tests/api/http_paths.py``) at one size, on a
throwaway test database, as the suite runs it: the API audit, the answer page, the queue, case and
export pages, the revision decision, the nightly re-check, the document upload and the answer form.
Each cell is "wall s (CPU s)"; the figures in docs/ARCHITECTURE.md come from this command.
"""

from __future__ import annotations

import argparse
import os


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "theoria.settings.test")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="characters of planted text (100000)")
    parser.add_argument(
        "--family", action="append", help="a family of tests/pipeline/scaling.py (repeatable)"
    )
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment

    from audit import roles
    from audit.services.workspaces import workspace_get_default
    from tests.api.http_paths import planted_answer_paths
    from tests.factories import UserFactory
    from tests.pipeline import scaling

    families = args.family or list(scaling.PROBE_FAMILIES)
    setup_test_environment()
    test_db = connection.creation.create_test_db(verbosity=0)
    try:
        call_command("createcachetable", verbosity=0)
        workspace = workspace_get_default()
        users = {
            name: UserFactory(username=name, role=role, workspace=workspace, is_staff=name == "admin1")
            for name, role in (
                ("frontend", roles.SUBMITTER),
                ("lead1", roles.L3_LEAD),
                ("admin1", roles.ADMIN),
            )
        }
        settings.THEORIA = {**settings.THEORIA, "API_MAX_BODY_BYTES": 4 * args.size + 10_000}
        timers: list[scaling.StepTimer] = []
        run = planted_answer_paths(
            workspace=workspace,
            submitter=users["frontend"],
            lead=users["lead1"],
            admin=users["admin1"],
            with_form=True,
            timers=timers,
        )
        print(f"{args.size:,} characters of each family; wall seconds (CPU seconds) per path")
        for family in families:
            run(scaling.ADVERSARIAL[family](args.size))
            timer = timers[-1]
            cells = ", ".join(
                f"{step} {timer.walls[step]:.2f} ({cost:.2f})" for step, cost in timer.costs.items()
            )
            print(f"{family}: {cells}", flush=True)
    finally:
        connection.creation.destroy_test_db(test_db, verbosity=0)


if __name__ == "__main__":
    main()
