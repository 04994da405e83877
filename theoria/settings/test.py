"""Test settings: base plus what the suite needs (synchronous tasks, fast hashing, mail outbox).

The database still comes from DATABASE_URL, so the same suite runs on SQLite (default) and on
PostgreSQL (DATABASE_URL=postgres://postgres@127.0.0.1:5432/theoria).
"""

import os

os.environ.setdefault(
    "DJANGO_SECRET_KEY", "test-only-key-" + "x" * 50
)  # base refuses the dev key without DEBUG

from .base import *  # noqa: F403 — the one place a star import is the point
from .base import DATABASES, Q_CLUSTER, THEORIA

if DATABASES["default"]["ENGINE"] == "theoria.db.sqlite3":
    # in memory, as Django's own SQLite back end tests: pytest-django names a test file after the
    # database for any other engine ("test_<path>_gw0", a folder that does not exist)
    DATABASES["default"].setdefault("TEST", {})["NAME"] = ":memory:"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
Q_CLUSTER = {**Q_CLUSTER, "sync": True}
THEORIA = {**THEORIA, "WEB_ALLOW_PRIVATE_ADDRESSES": False}
DEBUG = False
# The suite talks plain HTTP to the test client and live servers.
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_HSTS_SECONDS = 0
