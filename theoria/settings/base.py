"""Settings for Theoria Audit.

Layering: this module holds every Django setting and reads deployment values from the
environment through the strict helpers in ``env.py``; ``test.py`` imports it and overrides what
the test suite needs. Domain thresholds (audit score, SLAs, freshness, ...) are *not* Django
settings: their defaults live in ``audit/constants/`` and a workspace may override them in the
database through the admin console.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from audit.constants import (
    DEFAULT_SOFTENING_STYLE,
    DEFAULT_UNSUPPORTED_ACTION,
    EMAIL_TIMEOUT_S,
    LLM_CONCURRENCY,
    LLM_JUDGE_PROMPTS,
    SOFTENING_STYLES,
    UNSUPPORTED_ACTIONS,
)

from .env import envbool, envchoice, envfloat, envint, envlist, envrate, envstr

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(envstr("THEORIA_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# DEBUG is off unless the environment turns it on (`make` does for development, the test
# settings for the suite). With DEBUG off the server refuses to start on the development key.
DEBUG = envbool("DJANGO_DEBUG", False)
DEV_SECRET_KEY = "dev-only-insecure-key-change-me-in-production"
SECRET_KEY = envstr("DJANGO_SECRET_KEY", "") or (DEV_SECRET_KEY if DEBUG else "")
# With DEBUG off the key must be one Django's `check --deploy` accepts (security.W009): at least
# SECRET_KEY_MIN_LENGTH characters, SECRET_KEY_MIN_UNIQUE of them different, not the development
# key and not Django's "django-insecure-" placeholder. A weak key signs sessions and CSRF tokens
# that can be forged, so the server refuses to start rather than warn.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE = 5
if not DEBUG and SECRET_KEY in ("", DEV_SECRET_KEY):
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY must be set to a secret value when DEBUG is off "
        "(set DJANGO_DEBUG=1 for development)."
    )
if not DEBUG and (
    len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH
    or len(set(SECRET_KEY)) < SECRET_KEY_MIN_UNIQUE
    or SECRET_KEY.startswith("django-insecure-")
):
    raise ImproperlyConfigured(
        f"DJANGO_SECRET_KEY is too weak for DEBUG off: use at least {SECRET_KEY_MIN_LENGTH} random "
        f"characters (at least {SECRET_KEY_MIN_UNIQUE} different), e.g. the output of "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'."
    )
ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# HTTPS. Defaults are strict when DEBUG is off; behind a TLS-terminating proxy set
# DJANGO_SECURE_PROXY_SSL_HEADER=HTTP_X_FORWARDED_PROTO,https (the header the proxy sets), or turn
# the redirect off (DJANGO_SECURE_SSL_REDIRECT=0) where the proxy redirects itself.
SECURE_SSL_REDIRECT = envbool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = envbool("DJANGO_SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = envbool("DJANGO_CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = envint("DJANGO_SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = envbool("DJANGO_SECURE_HSTS_PRELOAD", True)
_PROXY_HEADER = envlist("DJANGO_SECURE_PROXY_SSL_HEADER", [])
if _PROXY_HEADER:
    if len(_PROXY_HEADER) != 2:
        raise ImproperlyConfigured(
            "DJANGO_SECURE_PROXY_SSL_HEADER must be HEADER,VALUE, e.g. HTTP_X_FORWARDED_PROTO,https."
        )
    SECURE_PROXY_SSL_HEADER = tuple(_PROXY_HEADER)
SESSION_COOKIE_HTTPONLY = True
# Content-Security-Policy of every page (audit.security.middleware.SecurityHeadersMiddleware): scripts
# and styles from this server only (Plotly adds style rules, hence 'unsafe-inline' for styles).
THEORIA_CSP = envstr(
    "THEORIA_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'",
)

INSTALLED_APPS = [
    "audit.apps.TheoriaAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "django_q",
    "audit",
    "escalation",
    "showcase",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # static files with DEBUG off (gunicorn): what collectstatic gathered under STATIC_ROOT, served
    # gzip-compressed to a browser that accepts it (the .gz files STORAGES' backend writes beside each)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "theoria.errors.ApiNotFoundMiddleware",  # an API path's 404 is JSON with DEBUG on too
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "audit.security.middleware.WorkspaceSwitchMiddleware",
    "audit.security.middleware.SecurityHeadersMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "audit.security.middleware.FormThrottleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # last, as django-axes asks: answers a request its backend locked out (audit.security.signin)
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "theoria.urls"
WSGI_APPLICATION = "theoria.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# DATABASE_URL selects the database: a SQLite file under var/ by default, postgres://... for
# PostgreSQL (psycopg 3).
DATABASE_URL = envstr("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'theoria.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=envint("DB_CONN_MAX_AGE", 0))}


# SQLite's WAL-reset bug (https://sqlite.org/wal.html#walresetbug): in WAL mode, a checkpoint racing
# a commit that restarts the WAL from several connections can skip part of a transaction and corrupt
# the file. It is in SQLite 3.7.0 to 3.51.2, fixed in 3.51.3 and backported to 3.44.6 and 3.50.7.
# The embedded default runs the web workers, the task cluster (ORM broker) and the cache table on
# one file from several processes, which is that bug's ground: rowids out of order and NULL keys in
# theoria_cache and django_q_ormq were seen on SQLite 3.40.1. So WAL only with a fixed
# SQLite; otherwise the rollback journal, where a reader waits the busy timeout while a commit writes.
def sqlite_wal_is_safe(version: tuple[int, int, int]) -> bool:
    return version >= (3, 51, 3) or (3, 50, 7) <= version < (3, 51, 0) or (3, 44, 6) <= version < (3, 45, 0)


if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    import sqlite3

    # Django's SQLite back end with a fair queue for the write lock (theoria/db/sqlite3/base.py)
    DATABASES["default"]["ENGINE"] = "theoria.db.sqlite3"

    SQLITE_JOURNAL_MODE = "WAL" if sqlite_wal_is_safe(sqlite3.sqlite_version_info) else "DELETE"
    DATABASES["default"].setdefault("OPTIONS", {})
    # IMMEDIATE: a transaction takes the write lock when it begins and waits up to `timeout` (the
    # busy timeout, seconds) for it; a deferred one that read first fails at once ("database is
    # locked") when another writer committed in between (two API requests with one Idempotency-Key
    # showed it). synchronous=FULL: a commit is on disk before it returns, in either journal mode.
    DATABASES["default"]["OPTIONS"].update(
        {
            "timeout": 20,
            "init_command": f"PRAGMA journal_mode={SQLITE_JOURNAL_MODE};PRAGMA synchronous=FULL;",
            "transaction_mode": "IMMEDIATE",
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns at start when it is missing (before collectstatic)
# collectstatic writes a gzip copy of every text file beside it (and a brotli one where the brotli
# package is installed), which WhiteNoise serves: the Plotly bundle travels as 0.40 MB, not 1.19 MB.
# Not the manifest variant: pages would then fail to render until collectstatic has run.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# `make run` (THEORIA_COMPRESSED_STATIC=1, runserver --nostatic): WhiteNoise serves the collected
# files and their .gz copies even with DEBUG on, not the uncompressed sources through the finders
if os.environ.get("THEORIA_COMPRESSED_STATIC") == "1":
    WHITENOISE_USE_FINDERS = False
    WHITENOISE_AUTOREFRESH = False
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "audit.web.staticfinders.PlotlyFinder",  # vendor/plotly.min.js from the installed plotly package
]

LOGIN_URL = "/accounts/login/"

# django-axes (audit/security/signin.py): failed passwords counted per account and client address together,
# in the database (exact under concurrent workers), the cool-off running from the last failure.
# Its backend comes first so every authenticate() refuses a locked account and address.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_FAILURE_LIMIT = "audit.security.signin.failure_limit"
AXES_COOLOFF_TIME = "audit.security.signin.cool_off"
AXES_USERNAME_CALLABLE = "audit.security.signin.account_of"
AXES_CLIENT_IP_CALLABLE = "audit.security.signin.client_address"  # THEORIA_TRUSTED_PROXIES, as every throttle
AXES_LOCKOUT_CALLABLE = "audit.security.signin.lockout_response"
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = (
    True  # axes logs no sign-in; audit.security.signin keeps a row per account and address that signed in
)
AXES_VERBOSE = False
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Reverse proxies in front of the server that append the client's address to X-Forwarded-For
# (nginx: proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for). 0: none, the client address
# is REMOTE_ADDR and X-Forwarded-For is ignored; N: the address the outermost of N proxies saw
# (audit.security.throttling.client_address). Set it only when every request passes through those proxies.
TRUSTED_PROXIES = envint("THEORIA_TRUSTED_PROXIES", 0, minimum=0)

REST_FRAMEWORK = {
    # every JSON body goes through the one strict parser (size, depth, integer size, UTF-8)
    "DEFAULT_PARSER_CLASSES": [
        "audit.api.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "NUM_PROXIES": TRUSTED_PROXIES,
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "audit.api.authentication.TokenAuthentication",
        "audit.api.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "audit.api.schema.TheoriaAutoSchema",  # error responses declared
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "DEFAULT_FILTER_BACKENDS": ["audit.api.filtering.StrictFilterBackend"],
    "EXCEPTION_HANDLER": "audit.api.exceptions.api_exception_handler",
    "PAGE_SIZE": envint("THEORIA_API_PAGE_SIZE", 50, minimum=1),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Theoria Audit API",
    "DESCRIPTION": "Claim-level verification of RAG answers, claim cards and the escalation queue.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI assets are served from this server (drf-spectacular-sidecar), no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "ModeEnum": "audit.models.choices.Mode",
        "LabelEnum": "audit.models.choices.Label",
        "RevisionStatusEnum": "audit.models.choices.RevisionStatus",
    },
}

# django-q2: the ORM broker by default (no extra service, one worker); set THEORIA_REDIS_URL to use
# Redis, where the cluster runs one worker per core by default (THEORIA_Q_WORKERS) and more
# clusters on more machines share the queue. Each worker process loads its own embedding model
# and is recycled after THEORIA_Q_RECYCLE tasks, or sooner past THEORIA_Q_MAX_RSS_MB, so memory
# stays bounded.
REDIS_URL = envstr("THEORIA_REDIS_URL", "")

Q_CLUSTER: dict[str, Any] = {
    "name": "theoria",
    "workers": envint("THEORIA_Q_WORKERS", (os.cpu_count() or 1) if REDIS_URL else 1, minimum=1),
    "recycle": envint("THEORIA_Q_RECYCLE", 200, minimum=1),
    "max_rss": envint("THEORIA_Q_MAX_RSS_MB", 3000, minimum=100) * 1024,  # django-q2 counts KB
    "timeout": envint("THEORIA_Q_TIMEOUT", 1800, minimum=1),
    "retry": envint("THEORIA_Q_RETRY", 2000, minimum=2),
    "catch_up": False,
    "max_attempts": 1,
    "label": "Task queue",
}
# The task cluster's workers run the audits over the inline cost budget (seconds of CPU each) on the
# cores the web workers use: each worker process lowers its own priority by THEORIA_Q_NICE as it
# starts and runs torch on THEORIA_Q_TORCH_THREADS threads (audit.apps, django-q2's post_spawn), so
# a web request gets the cores first and a queued audit takes what the web leaves.
Q_WORKER_NICE = envint("THEORIA_Q_NICE", 10, minimum=0)
Q_WORKER_TORCH_THREADS = envint("THEORIA_Q_TORCH_THREADS", 1, minimum=1)
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"

# The shared cache: throttle and sign-in lockout counts (audit.security.throttling) must be one count for
# every server process, so never a per-process memory cache. Redis when THEORIA_REDIS_URL is set,
# else a database table (created by `manage.py createcachetable`, which `make setup` runs).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "theoria",
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "theoria_cache",
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }

EMAIL_BACKEND = envstr("THEORIA_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = envstr("THEORIA_FROM_EMAIL", "theoria-audit@localhost")
EMAIL_TIMEOUT = envint(
    "THEORIA_EMAIL_TIMEOUT_S", EMAIL_TIMEOUT_S, minimum=1
)  # every outbound call has a timeout

# --- Theoria deployment settings (not domain thresholds: those are in audit/constants/) ---
# Any: the values are of many kinds (rates, URLs, numbers, flags), read by key where used.
THEORIA: dict[str, Any] = {
    "EMBEDDING_MODEL_PATH": envstr("THEORIA_EMBEDDING_MODEL_PATH", ""),
    "CHUNK_SIZE": envint("THEORIA_CHUNK_SIZE", 0),  # 0: audit.constants default
    "CHUNK_OVERLAP": envint("THEORIA_CHUNK_OVERLAP", -1),  # -1: audit.constants default
    # LLM (docs/LLM.md): any OpenAI-compatible endpoint; empty base URL = offline methods only.
    "LLM_BASE_URL": envstr("THEORIA_LLM_BASE_URL", ""),
    "LLM_API_KEY": envstr("THEORIA_LLM_API_KEY", ""),
    "LLM_MODEL": envstr("THEORIA_LLM_MODEL", ""),
    "LLM_TIMEOUT_S": envfloat("THEORIA_LLM_TIMEOUT_S", 20.0),
    "LLM_MAX_RETRIES": envint("THEORIA_LLM_MAX_RETRIES", 2, minimum=0),
    "LLM_CONCURRENCY": envint("THEORIA_LLM_CONCURRENCY", LLM_CONCURRENCY, minimum=1),
    # docs/LLM.md: the LLM time of an audit's synchronous part (0: audit.constants.LLM_TIME_BUDGET_S),
    # and the structured-output form ("auto" probes the endpoint once; "prompt" never asks for one)
    "LLM_TIME_BUDGET_S": envfloat("THEORIA_LLM_TIME_BUDGET_S", 0.0),
    "LLM_STRUCTURED": envstr("THEORIA_LLM_STRUCTURED", "auto"),
    # how the LLM judge reads a claim: "batched" (default) or "minicheck" (claim x chunk, Yes/No, logprobs)
    "LLM_JUDGE_PROMPT": envchoice("THEORIA_LLM_JUDGE_PROMPT", "batched", LLM_JUDGE_PROMPTS),
    # streamed calls are closed when given up (the server stops generating); 0 for a server that
    # reports no token usage on a stream (the budget then estimates it)
    "LLM_STREAM": envbool("THEORIA_LLM_STREAM", True),
    # announced when an asynchronous deep check finishes (POST JSON); empty: no announcement
    "DEEP_CHECK_WEBHOOK_URL": envstr("THEORIA_DEEP_CHECK_WEBHOOK_URL", ""),
    # The endpoint runs inside the data-residency boundary (a loopback address always does), so
    # workspaces with allow_external_calls off may still use it.
    "LLM_INSIDE_RESIDENCY": envbool("THEORIA_LLM_INSIDE_RESIDENCY", False),
    # Web verification (docs/SPEC_NOTES.md#escalation-to-audit-web): private addresses are refused unless a test allows them.
    "WEB_ALLOW_PRIVATE_ADDRESSES": envbool("THEORIA_WEB_ALLOW_PRIVATE_ADDRESSES", False),
    "PUBMED_BASE_URL": envstr("THEORIA_PUBMED_BASE_URL", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"),
    "ARXIV_BASE_URL": envstr("THEORIA_ARXIV_BASE_URL", "https://export.arxiv.org/api/query"),
    "WEB_TIMEOUT_S": envfloat("THEORIA_WEB_TIMEOUT_S", 0.0),  # 0: audit.constants.WEB_TIMEOUT_S
    "WEB_MAX_RESPONSE_BYTES": envint("THEORIA_WEB_MAX_RESPONSE_BYTES", 0, minimum=0),  # 0: constants default
    # Notifications (docs/SPEC_NOTES.md#human-escalation).
    "ONCALL_EMAIL": envstr("THEORIA_ONCALL_EMAIL", "compliance-oncall@theoria.ai"),
    "SLACK_WEBHOOK_URL": envstr("THEORIA_SLACK_WEBHOOK_URL", ""),
    "SLACK_CHANNEL": envstr("THEORIA_SLACK_CHANNEL", "#compliance-alerts"),
    # Absolute base of links in alerts (e.g. https://theoria.example.com); empty: relative links.
    "PUBLIC_URL": envstr("THEORIA_PUBLIC_URL", ""),
    # Answer revision (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): how unverified facts are softened (hedge | qualify | parenthetical)
    # and what happens to a material claim nothing supports (remove | qualify).
    "REVISION_SOFTENING": envchoice("THEORIA_REVISION_SOFTENING", DEFAULT_SOFTENING_STYLE, SOFTENING_STYLES),
    "REVISION_UNSUPPORTED": envchoice(
        "THEORIA_REVISION_UNSUPPORTED", DEFAULT_UNSUPPORTED_ACTION, UNSUPPORTED_ACTIONS
    ),
    # API request limits (docs/API.md).
    "API_MAX_BODY_BYTES": envint("THEORIA_API_MAX_BODY_BYTES", 1_000_000, minimum=1),
    "API_MAX_CONTEXTS": envint("THEORIA_API_MAX_CONTEXTS", 200, minimum=1),
    # Throttles (audit/security/throttling.py): "N/unit" or "N/<k>unit" (s, min, hour, day); empty: no limit.
    # The token endpoint per client address; audits per user (the API and the answer form share it).
    "THROTTLE_TOKEN": envrate("THEORIA_THROTTLE_TOKEN", "10/min"),
    "THROTTLE_AUDITS": envrate("THEORIA_THROTTLE_AUDITS", "120/min"),
    # Every other state-changing HTML form (a POST outside the API), per user.
    "THROTTLE_FORMS": envrate("THEORIA_THROTTLE_FORMS", "30/min"),
    # The escalation API's case actions (open, acknowledge, assign, note, escalate, pause, resume,
    # resolve, reopen ...), per user.
    "THROTTLE_CASE_ACTIONS": envrate("THEORIA_THROTTLE_CASE_ACTIONS", "60/min"),
    # Sign-in (the login page, the admin login, the token endpoint; audit/security/signin.py): this many
    # failed passwords for one account from one client address lock that pair (django-axes) until
    # the window has passed since the last failure; this many from one address lock the address;
    # past one address's allowance, an account's failures from anywhere make its next try wait
    # 1, 2, 4 ... seconds, at most SIGNIN_ACCOUNT_DELAY_MAX (0: no delay).
    "SIGNIN_LOCKOUT": envrate("THEORIA_SIGNIN_LOCKOUT", "5/15min"),
    "SIGNIN_ADDRESS_LOCKOUT": envrate("THEORIA_SIGNIN_ADDRESS_LOCKOUT", "30/15min"),
    "SIGNIN_ACCOUNT_DELAY_MAX": envint("THEORIA_SIGNIN_ACCOUNT_DELAY_MAX", 60, minimum=0),
    "TRUSTED_PROXIES": TRUSTED_PROXIES,
}
DATA_UPLOAD_MAX_MEMORY_SIZE = max(THEORIA["API_MAX_BODY_BYTES"] * 2, 2_621_440)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "theoria": {"handlers": ["console"], "level": envstr("THEORIA_LOG_LEVEL", "INFO")},
        "audit": {"handlers": ["console"], "level": envstr("THEORIA_LOG_LEVEL", "INFO")},
        "escalation": {"handlers": ["console"], "level": envstr("THEORIA_LOG_LEVEL", "INFO")},
        # unhandled errors of requests (500s) with their traceback: with DEBUG off nothing else shows them
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
    },
}
