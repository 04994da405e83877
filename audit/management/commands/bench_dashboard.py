"""Cold load of the compliance dashboard in headless Chromium: navigation to every chart drawn.

Each round opens a fresh browser context (empty cache), so every script and style is fetched
again from the in-process server; the figure is ``performance.now()`` when the last chart has
drawn. ``--full-plotly`` serves the full plotly.js bundle (the plotly package's, 4.8 MB) in place
of the partial one the page asks for, to compare.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from audit.management.browser import CHROMIUM, CHROMIUM_ARGS, served, session_cookie, user_named

DRAWN = (
    "document.querySelectorAll('.plot').length > 0 && "
    "document.querySelectorAll('.plot[data-drawn=true]').length === document.querySelectorAll('.plot').length"
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

    def handle(self, *args, **options):
        from playwright.sync_api import sync_playwright

        if options["rounds"] < 1:
            raise CommandError("--rounds must be at least 1.")
        user = user_named(options["username"])
        full = None
        if options["full_plotly"]:
            import plotly

            full = (Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js").read_bytes()
        times, scripts, served_ms, ready_ms = [], [], [], []
        with served() as base, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(options["rounds"] + 1):  # the first round warms the server, not the browser
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_cookies([session_cookie(user, base)])
                if full is not None:
                    context.route(
                        "**/vendor/plotly-basic.min.js",
                        lambda route: route.fulfill(body=full, content_type="text/javascript"),
                    )
                page = context.new_page()
                page.goto(f"{base}/dashboard/")
                page.wait_for_function(DRAWN, timeout=60000)
                drawn_ms = page.evaluate("performance.now()")
                nav = page.evaluate(
                    "(() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return [n.responseEnd, n.domContentLoadedEventEnd]; })()"
                )
                served_ms.append(nav[0])
                ready_ms.append(nav[1])
                size = page.evaluate(
                    "performance.getEntriesByType('resource').filter(r => r.name.includes('plotly'))"
                    ".map(r => r.decodedBodySize || r.encodedBodySize)[0] || 0"
                )
                times.append(drawn_ms)
                scripts.append(size or (len(full) if full else 0))
                context.close()
            browser.close()
        times, served_ms, ready_ms = times[1:], served_ms[1:], ready_ms[1:]
        bundle = "full plotly.min.js" if full else "plotly-basic.min.js"
        self.stdout.write(
            f"dashboard cold load ({bundle}, {len(times)} rounds, fresh browser cache each): "
            f"median {statistics.median(times):.0f} ms, min {min(times):.0f} ms, max {max(times):.0f} ms; "
            f"plotly bundle {scripts[-1] / 1e6:.2f} MB; median HTML received {statistics.median(served_ms):.0f} ms, "
            f"DOM ready {statistics.median(ready_ms):.0f} ms"
        )
        self.stdout.write(
            json.dumps(
                {
                    "bundle": bundle,
                    "rounds": len(times),
                    "median_ms": round(statistics.median(times)),
                    "min_ms": round(min(times)),
                    "max_ms": round(max(times)),
                    "plotly_bytes": scripts[-1],
                    "html_received_ms": round(statistics.median(served_ms)),
                    "dom_ready_ms": round(statistics.median(ready_ms)),
                }
            )
        )
