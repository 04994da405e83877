"""Smaller hardening: the deep-check webhook goes through the outbound guard, transition addresses
are not public, an account without a profile is refused with a sentence, and a weak secret key
stops a server with DEBUG off."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from audit.pipeline.web.fetch import address_is_public

ROOT = Path(__file__).resolve().parents[2]


class _Hook(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []
    redirect = False

    def do_POST(self):
        type(self).hits.append(self.path)
        self.send_response(302 if type(self).redirect else 200)
        if type(self).redirect:
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def hook():
    _Hook.hits, _Hook.redirect = [], False
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server
    server.shutdown()


@pytest.fixture
def finished_run(db):
    from tests.factories import VerificationRunFactory

    return VerificationRunFactory(deep_checks={"status": "done", "relabels": []})


@pytest.mark.parametrize(
    "url, reason",
    [
        ("http://127.0.0.1:{port}/hook", "private_address"),
        ("http://[::1]:{port}/hook", "private_address"),
        ("http://localhost:{port}/hook", "private_address"),
        ("file:///etc/passwd", "scheme"),
        ("http://user:secret@127.0.0.1:{port}/hook", "invalid_url"),
    ],
)
def test_the_deep_check_webhook_refuses_loopback_and_odd_urls_before_any_byte_is_sent(
    settings, hook, finished_run, url, reason
):
    from audit.services.deep_checks import deep_check_announce

    settings.THEORIA = {**settings.THEORIA, "DEEP_CHECK_WEBHOOK_URL": url.format(port=hook.server_port)}
    deep_check_announce(finished_run)
    finished_run.refresh_from_db()
    assert finished_run.deep_checks["webhook"].startswith(f"refused or failed ({reason})")
    assert _Hook.hits == []


def test_the_deep_check_webhook_follows_no_redirect(settings, hook, finished_run):
    from audit.services.deep_checks import deep_check_announce

    _Hook.redirect = True
    settings.THEORIA = {
        **settings.THEORIA,
        "DEEP_CHECK_WEBHOOK_URL": f"http://127.0.0.1:{hook.server_port}/hook",
        "WEB_ALLOW_PRIVATE_ADDRESSES": True,  # to reach the stand-in on loopback at all
    }
    deep_check_announce(finished_run)
    finished_run.refresh_from_db()
    assert finished_run.deep_checks["webhook"].startswith("refused or failed (redirects)")
    assert _Hook.hits == ["/hook"]


@pytest.mark.parametrize(
    "address",
    [
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b:1::1",
        "::127.0.0.1",  # IPv4-compatible
        "::ffff:10.0.0.1",
        "3ffe::1",
        "2001:db8::1",
        "192.88.99.1",
        "100.64.0.1",
    ],
)
def test_transition_and_special_addresses_are_not_public(address):
    assert address_is_public(address) is False


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111", "2a00:1450:4001:82b::200e"])
def test_ordinary_global_addresses_are_public(address):
    assert address_is_public(address) is True


def test_a_host_resolving_to_a_6to4_address_is_refused():
    from audit.pipeline.web.fetch import FetchPolicy, WebError, safe_fetch

    def resolver(host, port, **kwargs):
        return [(None, None, None, "", ("2002:7f00:1::", port, 0, 0))]

    with pytest.raises(WebError) as refused:
        safe_fetch("http://arxiv.org/abs/1", FetchPolicy(allowed_domains=("arxiv.org",)), resolver=resolver)
    assert refused.value.reason.value == "private_address"


@pytest.mark.django_db
def test_a_signed_in_user_without_a_profile_gets_403_saying_why_never_a_default_workspace(
    client, django_user_model, workspace
):
    from django.contrib.auth.models import Group
    from rest_framework.test import APIClient

    from audit.services.workspaces import NO_WORKSPACE
    from tests.api.conftest import build_answer

    build_answer(workspace)
    stray = django_user_model.objects.create_user("stray", password="pw-stray")
    stray.groups.add(*Group.objects.all())  # every role: still no workspace
    client.force_login(stray)
    for path in ("/", "/answers/", "/escalations/"):
        response = client.get(path)
        assert response.status_code == 403, path
        assert "belongs to no workspace" in response.content.decode()
    api = APIClient()
    api.force_authenticate(stray)
    for path in ("/api/v1/answers", "/api/v1/cases", "/api/v1/settings/workspace"):
        response = api.get(path)
        assert response.status_code == 403 and response.json()["detail"] == NO_WORKSPACE, path


def _check(**env):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "THEORIA_"))}
    base.update({"DJANGO_SETTINGS_MODULE": "theoria.settings.base", "OPENBLAS_NUM_THREADS": "1", **env})
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "key", ["x", "a" * 80, "ab" * 40, "django-insecure-" + "k7#Qp2!vZ9@mX4$wL8^tR1&yN6*bF3(hJ0)"]
)
def test_a_short_or_low_entropy_secret_key_stops_the_server_when_debug_is_off(tmp_path, key):
    result = _check(DJANGO_SECRET_KEY=key, THEORIA_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is too weak for DEBUG off" in result.stderr


def test_a_strong_secret_key_and_the_suites_own_key_start(tmp_path):
    from django.conf import settings

    from theoria.settings.base import SECRET_KEY_MIN_LENGTH, SECRET_KEY_MIN_UNIQUE

    assert (
        len(settings.SECRET_KEY) >= SECRET_KEY_MIN_LENGTH
        and len(set(settings.SECRET_KEY)) >= SECRET_KEY_MIN_UNIQUE
    )
    result = _check(
        DJANGO_SECRET_KEY="k7#Qp2!vZ9@mX4$wL8^tR1&yN6*bF3(hJ0)sD5-gC7+eA2=uK9%oP4",
        THEORIA_VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert _check(DJANGO_DEBUG="1", DJANGO_SECRET_KEY="x", THEORIA_VAR_DIR=str(tmp_path)).returncode == 0
