"""The sign-in lockout (``audit.signin``) on the login page, the admin login and the token
endpoint, and the client address every throttle counts by (``audit.throttling.client_address``)."""

from __future__ import annotations

import pytest

from audit import roles

pytestmark = pytest.mark.django_db

LOCKOUT = {"SIGNIN_ACCOUNT_LOCKOUT": "3/15min", "SIGNIN_ADDRESS_LOCKOUT": "6/15min", "THROTTLE_TOKEN": ""}


@pytest.fixture
def lockout(settings):
    settings.THEORIA = {**settings.THEORIA, **LOCKOUT}


def _login(client, path, username, password, address="10.0.0.1", **extra):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address, **extra)


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_wrong_passwords_lock_the_account_out_even_for_the_right_password(client, make_user, lockout, path):
    make_user("ann", roles.ADMIN, is_staff=True)
    for n in range(3):
        response = _login(client, path, "ann", f"guess-{n}")
        assert response.status_code == 200 and "_auth_user_id" not in client.session
    response = _login(client, path, "ann", "pw-ann")
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    page = response.content.decode()
    assert "Too many failed sign-in attempts for this account or from this address" in page
    assert "_auth_user_id" not in client.session


def test_the_lockout_of_an_account_holds_whatever_the_address_and_the_letter_case(client, make_user, lockout):
    make_user("ann", roles.L1_ANALYST)
    for n in range(3):
        _login(client, "/accounts/login/", "ann", f"guess-{n}", address=f"10.0.1.{n}")
    assert _login(client, "/accounts/login/", "ANN", "pw-ann", address="10.9.9.9").status_code == 429


def test_the_lockout_of_an_address_holds_for_every_account_it_tries(client, make_user, lockout):
    make_user("bob", roles.L1_ANALYST)
    for n in range(6):  # two wrong passwords each for three made-up accounts: no account reaches 3
        _login(client, "/accounts/login/", f"someone{n % 3}", "guess", address="10.0.0.7")
    assert _login(client, "/accounts/login/", "bob", "pw-bob", address="10.0.0.7").status_code == 429
    response = _login(client, "/accounts/login/", "bob", "pw-bob", address="10.0.0.8")
    assert response.status_code == 302 and client.session["_auth_user_id"]


def test_a_successful_sign_in_clears_its_accounts_failures(client, make_user, lockout):
    make_user("ann", roles.L1_ANALYST)
    for n in range(2):
        _login(client, "/accounts/login/", "ann", f"guess-{n}")
    assert _login(client, "/accounts/login/", "ann", "pw-ann").status_code == 302
    client.logout()
    for n in range(2):
        _login(client, "/accounts/login/", "ann", f"again-{n}")
    assert _login(client, "/accounts/login/", "ann", "pw-ann").status_code == 302


def test_the_token_endpoint_shares_the_sign_in_lockout(make_user, lockout):
    from rest_framework.test import APIClient

    make_user("frontend", roles.SUBMITTER)
    client = APIClient()
    for n in range(3):
        response = client.post("/api/v1/auth/token", {"username": "frontend", "password": f"g{n}"})
        assert response.status_code == 400
    response = client.post("/api/v1/auth/token", {"username": "frontend", "password": "pw-frontend"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "Too many failed sign-in attempts" in response.json()["detail"]


def test_a_new_x_forwarded_for_per_request_does_not_make_a_new_client(settings):
    from rest_framework.test import APIClient

    settings.THEORIA = {**settings.THEORIA, "THROTTLE_TOKEN": "3/min", "SIGNIN_ADDRESS_LOCKOUT": ""}
    client = APIClient()
    statuses = [
        client.post(
            "/api/v1/auth/token",
            {"username": f"nobody{n}", "password": "x"},
            HTTP_X_FORWARDED_FOR=f"203.0.113.{n}",
        ).status_code
        for n in range(5)
    ]
    assert statuses == [400, 400, 400, 429, 429]


def test_behind_trusted_proxies_the_address_the_outermost_proxy_saw_is_the_client(rf, settings):
    from audit.throttling import client_address

    request = rf.get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.7, 10.0.0.1")
    settings.THEORIA = {**settings.THEORIA, "TRUSTED_PROXIES": 0}
    assert client_address(request) == "10.0.0.2"
    settings.THEORIA = {**settings.THEORIA, "TRUSTED_PROXIES": 1}
    assert client_address(request) == "10.0.0.1"
    settings.THEORIA = {**settings.THEORIA, "TRUSTED_PROXIES": 2}
    assert client_address(request) == "198.51.100.7"  # the forged first entry is never read
    settings.THEORIA = {**settings.THEORIA, "TRUSTED_PROXIES": 9}
    assert client_address(request) == "1.2.3.4"


def test_a_rate_setting_that_is_no_rate_stops_the_start_with_a_sentence(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from theoria.settings.env import envrate

    monkeypatch.setenv("THEORIA_SIGNIN_ACCOUNT_LOCKOUT", "five per minute")
    with pytest.raises(
        ImproperlyConfigured, match="THEORIA_SIGNIN_ACCOUNT_LOCKOUT: 'five per minute' is not a rate"
    ):
        envrate("THEORIA_SIGNIN_ACCOUNT_LOCKOUT", "5/15min")
    monkeypatch.setenv("THEORIA_SIGNIN_ACCOUNT_LOCKOUT", "5/15min")
    assert envrate("THEORIA_SIGNIN_ACCOUNT_LOCKOUT", "") == "5/15min"
