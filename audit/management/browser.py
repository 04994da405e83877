"""What the browser commands share (``screenshots``, ``bench_dashboard``): the project served in-process
on 127.0.0.1, a signed-in session without a password, and Debian's headless Chromium."""

from __future__ import annotations

import os
from contextlib import contextmanager, nullcontext

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


def _unwrapped(app):
    """No static handler in front of the project: its WhiteNoise middleware serves static files."""
    return app


@contextmanager
def served(collected: bool = False):
    """Serve the project on a free port; yield its base URL.

    Static files come through the finders, uncompressed, as ``runserver`` serves them; with
    ``collected`` they come as production serves them: ``collectstatic`` into a temporary
    STATIC_ROOT (a gzip copy beside every text file), served by WhiteNoise, compressed for a
    browser that accepts it.
    """
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread

    if not os.path.exists(CHROMIUM):
        raise CommandError(f"{CHROMIUM} is missing; install Chromium from Debian (`make browser`).")
    with _collected_static() if collected else nullcontext():
        # the server loads its middleware (WhiteNoise reads STATIC_ROOT then) as it starts
        server = LiveServerThread("127.0.0.1", _unwrapped if collected else StaticFilesHandler, port=0)
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


@contextmanager
def _collected_static():
    """Settings that serve static files from a fresh ``collectstatic`` by WhiteNoise alone."""
    import tempfile

    from django.core.management import call_command
    from django.test import override_settings

    with (
        tempfile.TemporaryDirectory(prefix="theoria-static-") as root,
        # MEDIA_URL: the live server's media handler, which sits in front of the project, would
        # otherwise (MEDIA_URL empty) answer /static/ itself, from the working directory
        override_settings(
            STATIC_ROOT=root,
            WHITENOISE_USE_FINDERS=False,
            WHITENOISE_AUTOREFRESH=False,
            MEDIA_URL="/media/",
            MEDIA_ROOT=os.path.join(root, "media"),
        ),
    ):
        call_command("collectstatic", interactive=False, verbosity=0)
        yield


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
