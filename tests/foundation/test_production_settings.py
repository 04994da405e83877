"""Production-safe defaults: DEBUG off, no start on the development key, `check --deploy` clean with
only the secret key and the allowed hosts set, JSON errors from the API, a CSP on every page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import include, path

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k7#Qp2!vZ9@mX4$wL8^tR1&yN6*bF3(hJ0)sD5-gC7+eA2=uK9%oP4"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "THEORIA_"))}
    base.update({"DJANGO_SETTINGS_MODULE": "theoria.settings.base", "OPENBLAS_NUM_THREADS": "1", **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=300
    )


def test_check_deploy_is_clean_with_only_the_key_and_the_hosts_set(tmp_path):
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_SECRET_KEY=STRONG_KEY,
        DJANGO_ALLOWED_HOSTS="audit.example.com",
        THEORIA_VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_the_server_refuses_to_start_without_a_secret_key_when_debug_is_off(tmp_path):
    result = _manage("check", THEORIA_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr
    result = _manage(
        "check",
        DJANGO_SECRET_KEY="dev-only-insecure-key-change-me-in-production",
        THEORIA_VAR_DIR=str(tmp_path),
    )
    assert result.returncode != 0 and "DJANGO_SECRET_KEY" in result.stderr
    assert _manage("check", DJANGO_DEBUG="1", THEORIA_VAR_DIR=str(tmp_path)).returncode == 0


def _boom(request):
    raise RuntimeError("a bug")


urlpatterns = [path("api/v1/boom", _boom), path("boom", _boom), path("", include("theoria.urls"))]
handler404 = "theoria.errors.page_not_found"
handler500 = "theoria.errors.server_error"


@pytest.mark.urls(__name__)
def test_api_errors_are_json_even_outside_the_views(client, db):
    client.raise_request_exception = False
    for url, status in (("/api/v1/no-such-endpoint", 404), ("/api/v1/boom", 500)):
        response = client.get(url)
        assert response.status_code == status
        assert response["Content-Type"] == "application/json"
        assert set(response.json()) == {"detail", "errors"}
        assert "Traceback" not in response.content.decode() and "a bug" not in response.content.decode()
    page = client.get("/boom")
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")


def test_every_page_carries_a_content_security_policy_and_a_favicon(client, db):
    for url in ("/accounts/login/", "/api/v1/docs/"):
        response = client.get(url)
        assert response.status_code == 200
        policy = response["Content-Security-Policy"]
        assert (
            "script-src 'self'" in policy
            and "'unsafe-eval'" not in policy
            and "frame-ancestors 'none'" in policy
        )
    assert 'rel="icon"' in client.get("/accounts/login/").content.decode()
    assert client.get("/favicon.ico").status_code in (200, 301, 302)


def test_the_docs_page_runs_no_inline_script(client, db):
    html = client.get("/api/v1/docs/").content.decode()
    assert "<script>" not in html.replace(" ", "")
