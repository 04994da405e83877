"""Cold load of the compliance dashboard in headless Chromium: navigation to the first screen drawn.

Each round opens a fresh browser context (empty cache), so every script and style is fetched
again from the in-process server. Static files are served as production serves them: collected
(``collectstatic`` into a temporary folder, a gzip copy beside each text file) and sent by WhiteNoise,
compressed for the browser; ``--uncompressed`` serves them through the finders as ``runserver`` does.
The page draws a chart only when it scrolls into view (and
fetches Plotly only then, ``static/dashboard.js``), so the figure is ``performance.now()`` when
the page has loaded and every chart in the first screen (1280 x 900) has drawn; the script bytes
are those the browser had fetched by then, both as transferred (the encoded body) and as decoded. Then the page is scrolled through, chart by chart, and
the time until every chart has drawn is reported too, with the script bytes of the whole visit.
``--full-plotly`` serves the full plotly.js bundle (the plotly package's, 4.8 MB) in place of the
partial one the page asks for, to compare.
"""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.management.browser import CHROMIUM, CHROMIUM_ARGS, served, session_cookie, user_named
from audit.selectors.dashboard import DateRange
from audit.services.workspaces import workspace_for_user
from audit.web.dashboard_cache import dashboard_forget

# the page has loaded and every chart that shows in the viewport has drawn
FIRST_SCREEN_DRAWN = """() => document.readyState === "complete" && Array.from(document.querySelectorAll(".plot"))
  .filter((el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; })
  .every((el) => el.dataset.drawn === "true")"""
ALL_DRAWN = (
    "document.querySelectorAll('.plot').length > 0 && "
    "document.querySelectorAll('.plot[data-drawn=true]').length === document.querySelectorAll('.plot').length"
)
# [transferred, decoded]: each script's body as it came over the wire (gzip where served so) and as run
SCRIPT_BYTES = (
    "performance.getEntriesByType('resource').filter(r => r.initiatorType === 'script' || /\\.js(\\?|$)/.test(r.name))"
    ".reduce((n, r) => [n[0] + (r.encodedBodySize || 0), n[1] + (r.decodedBodySize || r.encodedBodySize || 0)], [0, 0])"
)


class Command(BaseCommand):
    help = "Measure the dashboard's cold load (navigation to every chart drawn) in headless Chromium."

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=5)
        parser.add_argument("--username", default="")
        parser.add_argument(
            "--full-plotly",
            action="store_true",
            help="serve the full plotly.js bundle in place of the partial one (the old page)",
        )
        parser.add_argument(
            "--after-change",
            action="store_true",
            help="drop the dashboard's cached figures before each round, as any change to the workspace does",
        )
        parser.add_argument(
            "--uncompressed",
            action="store_true",
            help="serve static files through the finders, uncompressed, as runserver does",
        )

    def handle(self, *args, **options):
        from playwright.sync_api import sync_playwright

        if options["rounds"] < 1:
            raise CommandError("--rounds must be at least 1.")
        user = user_named(options["username"])
        workspace, period = workspace_for_user(user), DateRange.ending_today()
        full = None
        if options["full_plotly"]:
            import plotly

            full = (Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js").read_bytes()
        full_headers = {"Content-Type": "text/javascript"}
        if full is not None and not options["uncompressed"]:  # gzip, as WhiteNoise would send it
            full = gzip.compress(full)
            full_headers["Content-Encoding"] = "gzip"
        times, scripts, served_ms, ready_ms, scroll_ms, all_scripts = [], [], [], [], [], []
        compressed = not options["uncompressed"]
        with served(collected=compressed) as base, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(options["rounds"] + 1):  # the first round warms the server, not the browser
                if options["after_change"]:
                    dashboard_forget(workspace, period)
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_cookies([session_cookie(user, base)])
                if full is not None:
                    context.route(
                        "**/vendor/plotly-basic.min.js",
                        lambda route: route.fulfill(body=full, headers=full_headers),
                    )
                page = context.new_page()
                page.goto(f"{base}/dashboard/")
                page.wait_for_function(FIRST_SCREEN_DRAWN, timeout=60000)
                drawn_ms = page.evaluate("performance.now()")
                scripts.append(page.evaluate(SCRIPT_BYTES))
                nav = page.evaluate(
                    "(() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return [n.responseEnd, n.domContentLoadedEventEnd]; })()"
                )
                served_ms.append(nav[0])
                ready_ms.append(nav[1])
                times.append(drawn_ms)
                # scroll through the page, each chart into view in turn, until every chart has drawn
                started = page.evaluate("performance.now()")
                for n in range(page.locator(".plot").count()):
                    page.locator(".plot").nth(n).scroll_into_view_if_needed()
                page.wait_for_function(ALL_DRAWN, timeout=60000)
                scroll_ms.append(page.evaluate("performance.now()") - started)
                all_scripts.append(page.evaluate(SCRIPT_BYTES))
                context.close()
            browser.close()
        # the first round warmed the server: drop it
        times, served_ms, ready_ms, scroll_ms = times[1:], served_ms[1:], ready_ms[1:], scroll_ms[1:]
        scripts, all_scripts = scripts[1:], all_scripts[1:]
        self._report(
            full is not None, compressed, times, scripts, served_ms, ready_ms, scroll_ms, all_scripts
        )
        if options["after_change"]:
            self.stdout.write(
                "(each round after a change: the dashboard's cached figures were dropped first)"
            )

    def _report(
        self, full: bool, compressed: bool, times, scripts, served_ms, ready_ms, scroll_ms, all_scripts
    ):
        """One sentence for people, then the same figures as one JSON line for scripts."""
        bundle = "full plotly.min.js" if full else "plotly-basic.min.js"
        static = "collected, gzip where accepted" if compressed else "finders, uncompressed"

        def median_kb(pairs: list, which: int) -> str:
            return f"{statistics.median(p[which] for p in pairs) / 1e3:.0f} KB"

        self.stdout.write(
            f"dashboard cold load ({bundle}, static files {static}, {len(times)} rounds, fresh browser cache "
            f"each): first screen drawn median {statistics.median(times):.0f} ms, min {min(times):.0f} ms, "
            f"max {max(times):.0f} ms, with {median_kb(scripts, 0)} of script transferred "
            f"({median_kb(scripts, 1)} decoded); median HTML received {statistics.median(served_ms):.0f} ms, "
            f"DOM ready {statistics.median(ready_ms):.0f} ms; scrolled through to every chart drawn in a further "
            f"median {statistics.median(scroll_ms):.0f} ms, {median_kb(all_scripts, 0)} of script transferred "
            f"in all ({median_kb(all_scripts, 1)} decoded)"
        )
        self.stdout.write(
            json.dumps(
                {
                    "bundle": bundle,
                    "static": "collected" if compressed else "finders",
                    "rounds": len(times),
                    "median_ms": round(statistics.median(times)),
                    "min_ms": round(min(times)),
                    "max_ms": round(max(times)),
                    "script_bytes_first_screen": round(statistics.median(p[1] for p in scripts)),
                    "script_bytes_first_screen_transferred": round(statistics.median(p[0] for p in scripts)),
                    "html_received_ms": round(statistics.median(served_ms)),
                    "dom_ready_ms": round(statistics.median(ready_ms)),
                    "scroll_through_ms": round(statistics.median(scroll_ms)),
                    "script_bytes_all": round(statistics.median(p[1] for p in all_scripts)),
                    "script_bytes_all_transferred": round(statistics.median(p[0] for p in all_scripts)),
                }
            )
        )
