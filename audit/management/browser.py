"""What the browser commands share (``screenshots``, ``bench_dashboard``): the project served in-process
on 127.0.0.1, a signed-in session without a password, and Debian's headless Chromium."""

from __future__ import annotations

import os
from contextlib import contextmanager

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.management.base import CommandError
from django.utils.module_loading import import_string

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def served():
    """Serve the project (static files through the finders) on a free port; yield its base URL."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    if not os.path.exists(CHROMIUM):
        raise CommandError(f"{CHROMIUM} is missing; install Chromium from Debian (`make browser`).")
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise CommandError(f"The local server did not start: {server.error}")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM is used beside Playwright's loop
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.terminate()


def user_named(username: str):
    """The user to sign in as: ``username``, else the first active superuser; one sentence if none."""
    User = get_user_model()
    user = (
        User.objects.filter(username=username).first()
        if username
        else User.objects.filter(is_superuser=True, is_active=True).order_by("id").first()
    )
    if user is None:
        raise CommandError(
            f"No user {username!r}; pass --username, or run `manage.py ensure_admin`."
            if username
            else "No superuser; run `manage.py ensure_admin` or pass --username."
        )
    return user


def session_cookie(user, base: str) -> dict:
    """A signed-in session for ``user`` as a Playwright cookie for ``base``."""
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    # the backend a real sign-in records: the first that can load a user (django-axes' comes first
    # and only guards sign-in, so it never signs anybody in)
    session[BACKEND_SESSION_KEY] = next(
        (path for path in settings.AUTHENTICATION_BACKENDS if hasattr(import_string(path), "get_user")),
        "django.contrib.auth.backends.ModelBackend",
    )
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return {"name": settings.SESSION_COOKIE_NAME, "value": session.session_key, "url": base}
