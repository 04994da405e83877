"""Refresh the screenshots of every page into docs/screenshots/ (headless Chromium from Debian).

Serves the project from an in-process server on 127.0.0.1 over the configured database (run
``make setup`` first so there are audits, cases and a nightly report to show), signs a user
in by creating a session for them (no password needed), and saves one full-page PNG per page.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}


def _pages(workspace) -> list[tuple[str, str, str]]:
    """Return (file name, path, what to wait for) for every page, using the richest rows stored."""
    from audit.models import Answer, Claim
    from escalation.models import ReviewCase

    answer = (Answer.objects.filter(workspace=workspace).annotate(n=Count("claims")).filter(n__gt=0)
              .order_by("-n", "-created_at").first())
    if answer is None:
        raise CommandError("There is no audited answer to show; run `make setup` (or `manage.py seed_demo`) first.")
    revised = Answer.objects.filter(workspace=workspace, claims__isnull=False).exclude(revisions=[]).first()
    # a claim card with the most to show: a human decision, else evidence
    claim = (Claim.objects.filter(answer__workspace=workspace, review_cases__status="resolved").order_by("-id").first()
             or Claim.objects.filter(answer__workspace=workspace, evidence__isnull=False).order_by("confidence").first()
             or answer.claims.first())
    case = ReviewCase.objects.filter(workspace=workspace).order_by("-risk_score", "id").first()
    pages = [
        ("home", "/", "main"),
        ("dashboard", "/dashboard/", "js:document.querySelectorAll('.plot[data-drawn=true]').length"
                                     " === document.querySelectorAll('.plot').length"),
        ("escalations", "/escalations/", "#queue"),
        ("claims", "/claims/", "#claims"),
        ("answer", f"/answers/{answer.public_id}/", "#answer-text"),
        ("claim-card", f"/claims/{claim.pk}/", "main"),
        ("nightly-report", "/reports/nightly/", "main"),
        ("admin", "/admin/", "#content"),
        ("admin-workspace", f"/admin/audit/workspace/{workspace.pk}/change/", "#content"),
    ]
    if revised is not None and revised.pk != answer.pk:
        pages.append(("answer-revised", f"/answers/{revised.public_id}/", "#revision-diff"))
    if case is not None:
        pages.insert(3, ("case", f"/escalations/{case.ticket}/", "main"))
    return pages


class Command(BaseCommand):
    help = "Save a full-page screenshot of every page into docs/screenshots/ (needs /usr/bin/chromium)."

    def add_arguments(self, parser):
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "docs" / "screenshots"))
        parser.add_argument("--username", default="", help="User to sign in as (default: the first superuser).")

    def handle(self, *args, **options):
        from django.contrib.staticfiles.handlers import StaticFilesHandler  # serves through the finders
        from django.test.testcases import LiveServerThread
        from playwright.sync_api import sync_playwright

        from audit.services.workspaces import workspace_for_user

        if not os.path.exists(CHROMIUM):
            raise CommandError(f"{CHROMIUM} is missing; install Chromium from Debian (`make browser`).")
        user = self._user(options["username"])
        pages = _pages(workspace_for_user(user))
        out = Path(options["out"])
        out.mkdir(parents=True, exist_ok=True)

        server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
        server.daemon = True
        server.start()
        server.is_ready.wait()
        if server.error:
            raise CommandError(f"The local server did not start: {server.error}")
        base = f"http://127.0.0.1:{server.port}"
        os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM is used beside Playwright's loop
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                page.set_default_timeout(20000)
                page.goto(f"{base}/accounts/login/")
                page.screenshot(path=str(out / "login.png"), full_page=True)
                context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": self._session(user),
                                      "url": base}])
                for name, path, ready in pages:
                    self._shoot(page, base + path, ready, out / f"{name}.png")
                answer_path = next(p for n, p, _ in pages if n == "answer")
                page.goto(base + answer_path)
                badge = page.locator("a.badge").first
                badge.hover()
                page.wait_for_selector(".claim-mark:hover .tooltip", state="visible")
                page.screenshot(path=str(out / "answer-tooltip.png"), full_page=False)
                self.stdout.write(f"answer-tooltip.png  {answer_path} (tooltip open)")
                browser.close()
        finally:
            server.terminate()
        self.stdout.write(self.style.SUCCESS(f"Saved {len(pages) + 2} screenshots in {out}"))

    def _shoot(self, page, url: str, ready: str, path: Path) -> None:
        response = page.goto(url)
        if response is None or response.status >= 400:
            raise CommandError(f"{url} answered {response.status if response else 'nothing'}; no screenshot taken.")
        if ready.startswith("js:"):
            page.wait_for_function(ready[3:])
        else:
            page.wait_for_selector(ready)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(path), full_page=True)
        self.stdout.write(f"{path.name:<22} {url}")

    def _user(self, username: str):
        User = get_user_model()
        user = (User.objects.filter(username=username).first() if username
                else User.objects.filter(is_superuser=True, is_active=True).order_by("id").first())
        if user is None:
            raise CommandError(f"No user {username!r}; pass --username, or run `manage.py ensure_admin`."
                               if username else "No superuser; run `manage.py ensure_admin` or pass --username.")
        return user

    def _session(self, user) -> str:
        """Create a signed-in session for ``user`` and return its key."""
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0] if getattr(
            settings, "AUTHENTICATION_BACKENDS", None) else "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        return session.session_key
