"""Refresh the screenshots of every page into docs/screenshots/ (headless Chromium from Debian).

Serves the project from an in-process server on 127.0.0.1 over the configured database (run
``make setup`` first so there are audits, cases and a nightly report to show), signs a user
in by creating a session for them (no password needed), and saves one full-page PNG per page.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from audit.management.browser import CHROMIUM, CHROMIUM_ARGS, served, session_cookie, user_named
from showcase.pages import demo_pages

VIEWPORT = {"width": 1366, "height": 900}
PHONE_PAGES = (
    "home",
    "dashboard",
    "escalations",
    "case",
    "answers",
    "answer",
    "answer-proposal",
    "claim-card",
    "claims",
    "answer-new",
    "nightly-report",
    "admin",
    "admin-settings",
)
PHONE = {
    "width": 390,
    "height": 844,
}  # an iPhone 12-14 in portrait: every page must fit it without sideways scrolling


class Command(BaseCommand):
    help = "Save a full-page screenshot of every page into docs/screenshots/ (needs /usr/bin/chromium)."

    def add_arguments(self, parser):
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "docs" / "screenshots"))
        parser.add_argument(
            "--username", default="", help="User to sign in as (default: the first superuser)."
        )

    def handle(self, *args, **options):
        from playwright.sync_api import sync_playwright

        from audit.services.workspaces import workspace_for_user

        user = user_named(options["username"])
        workspace = workspace_for_user(user)
        pages = demo_pages(workspace)
        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)
        saved = 0
        with served() as base, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(20000)
            page.goto(f"{base}/accounts/login/")
            page.screenshot(path=str(out / "login.png"), full_page=True)
            context.add_cookies([session_cookie(user, base)])
            for name, path, ready in pages:
                self._shoot(page, base + path, ready, out / f"{name}.png")
            answer_path = next(p for n, p, _ in pages if n == "answer")
            page.goto(base + answer_path)
            page.locator("a.badge").first.hover()
            page.wait_for_selector(".claim-mark:hover .tooltip", state="visible")
            page.screenshot(path=str(out / "answer-tooltip.png"), full_page=False)
            self.stdout.write(f"answer-tooltip.png  {answer_path} (tooltip open)")
            self._shoot_calibration_panel(page, base, out / "calibration.png")
            saved = len(pages) + 3
            # phone width: the pages an analyst opens on the move
            phone = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
            phone.add_cookies([session_cookie(user, base)])
            mobile = phone.new_page()
            mobile.set_default_timeout(20000)
            for name, path, ready in pages:
                if name in PHONE_PAGES:
                    self._shoot(mobile, base + path, ready, out / f"phone-{name}.png")
                    saved += 1
            browser.close()
        self.stdout.write(self.style.SUCCESS(f"Saved {saved} screenshots in {out}"))

    def _shoot_calibration_panel(self, page, base: str, path: Path) -> None:
        """The dashboard's calibration and reviewer-agreement panel alone, its charts drawn."""
        page.goto(f"{base}/dashboard/")
        panel = page.locator("#review-panel")
        for plot_id in panel.locator(".plot").evaluate_all("plots => plots.map(p => p.id)"):
            page.locator(f"#{plot_id}").scroll_into_view_if_needed()
            page.wait_for_selector(f"#{plot_id}[data-drawn=true]")
        page.wait_for_load_state("networkidle")
        panel.screenshot(path=str(path))
        self.stdout.write(f"{path.name:<22} {base}/dashboard/#review-panel")

    def _shoot(self, page, url: str, ready: str, path: Path) -> None:
        response = page.goto(url)
        if response is None or response.status >= 400:
            raise CommandError(
                f"{url} answered {response.status if response else 'nothing'}; no screenshot taken."
            )
        if ready == "charts":  # charts draw as they scroll into view (static/dashboard.js)
            for plot_id in page.eval_on_selector_all(".plot", "plots => plots.map(p => p.id)"):
                page.locator(f"#{plot_id}").scroll_into_view_if_needed()
                page.wait_for_selector(f"#{plot_id}[data-drawn=true]")
            page.evaluate("window.scrollTo(0, 0)")
        else:
            page.wait_for_selector(ready)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(path), full_page=True)
        self.stdout.write(f"{path.name:<22} {url}")
