"""Refresh the screenshots of every page into docs/screenshots/ (headless Chromium from Debian).

Serves the project from an in-process server on 127.0.0.1 over the configured database (run
``make setup`` first so there are audits, cases and a nightly report to show), signs a user
in by creating a session for them (no password needed), and saves one full-page PNG per page.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from audit.management.browser import CHROMIUM, CHROMIUM_ARGS, served, session_cookie, user_named

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


def _pages(workspace) -> list[tuple[str, str, str]]:
    """Return (file name, path, what to wait for) for every page, using the richest rows stored."""
    from audit.models import Answer, Claim
    from escalation.models import ReviewCase

    answer = (
        Answer.objects.filter(workspace=workspace)
        .annotate(n=Count("claims"))
        .filter(n__gt=0)
        .order_by("-n", "-created_at")
        .first()
    )
    if answer is None:
        raise CommandError(
            "There is no audited answer to show; run `make setup` (or `manage.py seed_demo`) first."
        )
    revised = (
        Answer.objects.filter(workspace=workspace, claims__isnull=False)
        .exclude(revisions=[])
        .exclude(revision_status__in=["proposed", "rejected"])
        .first()
    )
    # a claim card with the most to show: a human decision, else evidence
    claim = (
        Claim.objects.filter(answer__workspace=workspace, review_cases__status="resolved")
        .order_by("-id")
        .first()
        or Claim.objects.filter(answer__workspace=workspace, evidence__isnull=False)
        .order_by("confidence")
        .first()
        or answer.claims.first()
    )
    # an open case with the most history (an escalation that kept its owner, its next clock), else any
    case = (
        ReviewCase.objects.filter(workspace=workspace)
        .exclude(status=ReviewCase.Status.RESOLVED)
        .annotate(n_events=Count("events"))
        .order_by("-n_events", "-risk_score", "id")
        .first()
        or ReviewCase.objects.filter(workspace=workspace).order_by("-risk_score", "id").first()
    )
    # a held revision, the one with a finding on its revised sentence first
    proposed = Answer.objects.filter(workspace=workspace, revision_status=Answer.RevisionStatus.PROPOSED)
    proposal = (
        proposed.filter(claims__revision__sentence__findings__0__isnull=False).first()
        or proposed.order_by("-created_at").first()
    )
    pages = [
        ("home", "/", "main"),
        ("dashboard", "/dashboard/", "charts"),
        ("escalations", "/escalations/", "#queue"),
        ("claims", "/claims/", "#claims"),
        ("answer", f"/answers/{answer.public_id}/", "#answer-text"),
        ("claim-card", f"/claims/{claim.pk}/", "main"),
        ("nightly-report", "/reports/nightly/", "main"),
        ("admin", "/admin/", "#content"),
        ("admin-workspace", f"/admin/audit/workspace/{workspace.pk}/change/", "#content"),
        ("admin-settings", f"/admin/audit/workspace/{workspace.pk}/settings/", "#thresholds"),
        ("answers", "/answers/", "#answers"),
        ("answer-new", "/answers/new/", "#answer-form"),
    ]
    if revised is not None and revised.pk != answer.pk and revised.revision_status != "proposed":
        pages.append(("answer-revised", f"/answers/{revised.public_id}/", "#revision-diff"))
    if proposal is not None:
        pages.append(("answer-proposal", f"/answers/{proposal.public_id}/#proposal", "#proposal"))
    if case is not None:
        pages.insert(3, ("case", f"/escalations/{case.ticket}/", "main"))
    return pages


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
        pages = _pages(workspace)
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
