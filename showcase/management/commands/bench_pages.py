"""Time every demo page as the server answers it: the first request, then the median of the next ones.

    python manage.py bench_pages                 # after `make setup` (the demo data)
    python manage.py bench_pages --rounds 5 --username demo-analyst

Each page of ``showcase.pages.demo_pages`` (the pages ``screenshots`` shoots, each at its richest
stored row) and the new-user form is requested through Django's test client in this process, signed
in as ``--username`` (default: the first superuser), after the warm-up ``make run`` does before it says
it is ready (``audit.services.warmup.warm_pages``: the URL configuration and the templates). For each
page it prints the first request's seconds, then the median of ``--rounds`` more, each with the CPU
seconds this process spent, and the number of database queries of a warm request. The dashboard is
also timed cold: its cached figures dropped before each request (``dashboard_forget``), as the first
request after any change to the workspace finds them. Requests only read (GET); nothing is written
but the cache. The load average is printed before and after: on a busy machine read the CPU seconds.
"""

from __future__ import annotations

import os
import statistics
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from audit.management.browser import user_named


class Command(BaseCommand):
    help = "Time every demo page (first request, then the median of --rounds), and the dashboard cold."

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--username", default="", help="who signs in (default: the first superuser)")

    def handle(self, *args, **options):
        from audit.selectors.dashboard import DateRange
        from audit.services.warmup import warm_pages
        from audit.services.workspaces import workspace_for_user
        from audit.web.dashboard_cache import dashboard_forget
        from showcase.pages import demo_pages

        if options["rounds"] < 1:
            raise CommandError("--rounds must be at least 1.")
        user = user_named(options["username"])
        workspace = workspace_for_user(user)
        pages = [(name, path) for name, path, _ in demo_pages(workspace)]
        pages.append(("admin-user-add", "/admin/auth/user/add/"))
        warm_pages()
        client = Client(HTTP_HOST="127.0.0.1")
        client.force_login(user)
        load = os.getloadavg()
        self.stdout.write(
            f"{len(pages)} pages as {user.get_username()}, first request then the median of {options['rounds']} "
            f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores)"
        )
        self.stdout.write(
            f"{'page':<18} {'first s':>8} {'cpu':>6} {'median s':>9} {'cpu':>6} {'queries':>8}  path"
        )
        slowest = 0.0
        for name, path in pages:
            first = self._timed(client, path)
            rounds = [self._timed(client, path) for _ in range(options["rounds"])]
            with CaptureQueriesContext(connection) as queries:
                client.get(path)
            median = statistics.median(r[0] for r in rounds)
            slowest = max(slowest, median)
            self.stdout.write(
                f"{name:<18} {first[0]:>8.2f} {first[1]:>6.2f} {median:>9.2f} "
                f"{statistics.median(r[1] for r in rounds):>6.2f} {len(queries):>8}  {path}"
            )
        period = DateRange.ending_today()
        cold = []
        for _ in range(options["rounds"]):
            dashboard_forget(workspace, period)
            cold.append(self._timed(client, "/dashboard/"))
        self.stdout.write(
            f"{'dashboard (cold)':<18} {'':>8} {'':>6} {statistics.median(c[0] for c in cold):>9.2f} "
            f"{statistics.median(c[1] for c in cold):>6.2f} {'':>8}  /dashboard/ with its cached figures dropped"
        )
        load = os.getloadavg()
        self.stdout.write(
            f"slowest warm median {slowest:.2f} s; load average after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
        )

    @staticmethod
    def _timed(client: Client, path: str) -> tuple[float, float]:
        """(wall seconds, CPU seconds of this process) of one GET of ``path``; a page that fails stops."""
        wall, cpu = time.perf_counter(), time.process_time()
        response = client.get(path)
        if response.status_code != 200:
            raise CommandError(f"{path} answered {response.status_code}.")
        return time.perf_counter() - wall, time.process_time() - cpu
