"""Sign-in protection (``audit.security.signin``: django-axes per account and address, a per-address
lockout, a progressive delay per account) on the login page, the admin login and the token
endpoint, and the client address every throttle counts by (``audit.security.throttling.client_address``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from audit import roles

pytestmark = pytest.mark.django_db

LOCKOUT = {
    "SIGNIN_LOCKOUT": "3/15min",
    "SIGNIN_ADDRESS_LOCKOUT": "6/15min",
    "SIGNIN_ACCOUNT_DELAY_MAX": 60,
    "THROTTLE_TOKEN": "",
}
PATHS = ["/accounts/login/", "/admin/login/"]
START = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


@pytest.fixture
def lockout(settings):
    settings.THEORIA = {**settings.THEORIA, **LOCKOUT}


def _login(client, path, username, password, address="10.0.0.1", **extra):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address, **extra)


def _signed_in(client, response) -> bool:
    return response.status_code == 302 and bool(client.session.get("_auth_user_id"))


@pytest.mark.parametrize("path", PATHS)
def test_a_stranger_who_fails_for_an_account_does_not_lock_its_owner_out_elsewhere(
    client, make_user, lockout, path
):
    make_user("ann", roles.ADMIN, is_staff=True)
    for n in range(5):
        _login(client, path, "ann", f"guess-{n}", address="203.0.113.9")
    assert _signed_in(client, _login(client, path, "ann", "pw-ann", address="10.0.0.1"))


@pytest.mark.parametrize("path", PATHS)
def test_the_failing_address_is_refused_for_the_account_even_with_the_right_password(
    client, make_user, lockout, path
):
    make_user("ann", roles.ADMIN, is_staff=True)
    statuses = [_login(client, path, "ann", f"guess-{n}").status_code for n in range(3)]
    assert statuses == [200, 200, 429]  # the failure that reaches the limit answers the lockout
    response = _login(client, path, "ann", "pw-ann")
    assert response.status_code == 429
    assert 14 * 60 < int(response["Retry-After"]) <= 15 * 60
    page = response.content.decode()
    assert "Too many failed sign-in attempts for this account from this address" in page
    assert "refused for 15 more minutes" in page
    assert "_auth_user_id" not in client.session


def test_the_lockout_of_an_account_and_address_ignores_the_letter_case(client, make_user, lockout):
    make_user("ann", roles.L1_ANALYST)
    for n in range(3):
        _login(client, "/accounts/login/", ["ann", "Ann", "ANN"][n], f"guess-{n}")
    assert _login(client, "/accounts/login/", "ann", "pw-ann").status_code == 429


def test_failures_just_before_a_window_would_end_still_lock_until_the_cool_off_after_the_last(
    client, make_user, lockout
):
    make_user("ann", roles.L1_ANALYST)
    with time_machine.travel(START, tick=False) as clock:
        _login(client, "/accounts/login/", "ann", "guess-0")
        clock.shift(14 * 60 + 50)  # the first failure's 15 minutes are nearly over
        _login(client, "/accounts/login/", "ann", "guess-1")
        _login(client, "/accounts/login/", "ann", "guess-2")
        clock.shift(20)  # past 15 minutes after the first failure
        assert _login(client, "/accounts/login/", "ann", "pw-ann").status_code == 429
        clock.shift(14 * 60)  # 14 min 20 s after the last failure
        response = _login(client, "/accounts/login/", "ann", "pw-ann")
        assert response.status_code == 429 and int(response["Retry-After"]) == 40
        clock.shift(41)
        assert _signed_in(client, _login(client, "/accounts/login/", "ann", "pw-ann"))


def test_one_address_that_fails_for_many_accounts_is_refused_for_every_account(client, make_user, lockout):
    make_user("bob", roles.L1_ANALYST)
    for n in range(6):  # two wrong passwords each for three made-up accounts: no pair reaches 3
        _login(client, "/accounts/login/", f"someone{n % 3}", "guess", address="10.0.0.7")
    response = _login(client, "/accounts/login/", "bob", "pw-bob", address="10.0.0.7")
    assert response.status_code == 429
    assert "Too many failed sign-in attempts from this address" in response.content.decode()
    assert _signed_in(client, _login(client, "/accounts/login/", "bob", "pw-bob", address="10.0.0.8"))


def test_failures_of_an_account_from_many_addresses_slow_its_sign_in_by_a_growing_bounded_delay(
    client, make_user, settings, lockout
):
    settings.THEORIA = {**settings.THEORIA, "SIGNIN_ACCOUNT_DELAY_MAX": 3}
    make_user("ann", roles.L1_ANALYST)
    owner = "192.0.2.50"
    with time_machine.travel(START, tick=False) as clock:
        for n in range(3):  # one address's allowance, spread over three: no delay yet
            _login(client, "/accounts/login/", "ann", "guess", address=f"198.51.100.{n}")
        assert _login(client, "/accounts/login/", "nobody", "x", address=owner).status_code == 200
        waits = []
        for n in range(3, 7):
            _login(client, "/accounts/login/", "ann", "guess", address=f"198.51.100.{n}")
            response = _login(client, "/accounts/login/", "ann", "pw-ann", address=owner)
            assert response.status_code == 429
            assert "Too many failed sign-in attempts for this account:" in response.content.decode()
            waits.append(int(response["Retry-After"]))
            clock.shift(waits[-1])
        assert waits == [1, 2, 3, 3]  # 1, 2, 4, 8 seconds, at most SIGNIN_ACCOUNT_DELAY_MAX
        assert _signed_in(client, _login(client, "/accounts/login/", "ann", "pw-ann", address=owner))


def test_the_owner_signs_in_at_the_first_try_from_their_own_address_while_an_attacker_rotates_addresses(
    client, make_user, lockout
):
    """Issue 46: the account's delay restarted with every failure of an attacker trying once a second
    from a new address each time, and kept the owner out 103 times of 109."""
    make_user("ann", roles.L1_ANALYST)
    owner = "192.0.2.50"
    with time_machine.travel(START, tick=False) as clock:
        assert _signed_in(client, _login(client, "/accounts/login/", "ann", "pw-ann", address=owner))
        client.logout()
        firsts = []
        for second in range(75):
            _login(
                client,
                "/accounts/login/",
                "ann",
                f"guess-{second}",
                address=f"198.51.{second // 250}.{second % 250}",
            )
            if second % 5 == 4:
                firsts.append(
                    _signed_in(client, _login(client, "/accounts/login/", "ann", "pw-ann", address=owner))
                )
                client.logout()
            clock.shift(1)
        assert firsts == [True] * 15
        # a new address still waits for the account's delay: the guessing stays slowed
        response = _login(client, "/accounts/login/", "ann", "pw-ann", address="203.0.113.77")
        assert response.status_code == 429 and "for this account:" in response.content.decode()


def test_a_successful_sign_in_clears_its_own_failures_only(client, make_user, settings, lockout):
    settings.THEORIA = {**settings.THEORIA, "SIGNIN_ACCOUNT_DELAY_MAX": 0}  # the pairs alone
    make_user("ann", roles.L1_ANALYST)
    for n in range(2):
        _login(client, "/accounts/login/", "ann", f"guess-{n}", address="10.0.0.1")
        _login(client, "/accounts/login/", "ann", f"guess-{n}", address="10.0.0.2")
    assert _signed_in(client, _login(client, "/accounts/login/", "ann", "pw-ann", address="10.0.0.1"))
    client.logout()
    for n in range(2):
        _login(client, "/accounts/login/", "ann", f"again-{n}", address="10.0.0.1")
    assert _signed_in(client, _login(client, "/accounts/login/", "ann", "pw-ann", address="10.0.0.1"))
    client.logout()
    _login(client, "/accounts/login/", "ann", "again", address="10.0.0.2")  # its third: locked
    assert _login(client, "/accounts/login/", "ann", "pw-ann", address="10.0.0.2").status_code == 429


def test_the_token_endpoint_shares_the_sign_in_rules(make_user, lockout):
    from rest_framework.test import APIClient

    make_user("frontend", roles.SUBMITTER)
    client = APIClient()

    def token(password, address="10.0.0.1"):
        return client.post(
            "/api/v1/auth/token", {"username": "frontend", "password": password}, REMOTE_ADDR=address
        )

    assert [token(f"g{n}").status_code for n in range(3)] == [400, 400, 429]
    response = token("pw-frontend")
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "Too many failed sign-in attempts for this account from this address" in response.json()["detail"]
    assert token("pw-frontend", address="10.0.0.2").status_code == 200


def test_behind_a_trusted_proxy_the_lockout_counts_the_address_the_proxy_saw(client, make_user, settings):
    settings.THEORIA = {**settings.THEORIA, **LOCKOUT, "TRUSTED_PROXIES": 1}
    make_user("ann", roles.L1_ANALYST)
    proxy = {"address": "127.0.0.1"}
    for n in range(3):
        _login(client, "/accounts/login/", "ann", f"g{n}", HTTP_X_FORWARDED_FOR="203.0.113.9", **proxy)
    locked = _login(client, "/accounts/login/", "ann", "pw-ann", HTTP_X_FORWARDED_FOR="203.0.113.9", **proxy)
    assert locked.status_code == 429
    response = _login(client, "/accounts/login/", "ann", "pw-ann", HTTP_X_FORWARDED_FOR="192.0.2.1", **proxy)
    assert _signed_in(client, response)


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
    from audit.security.throttling import client_address

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

    monkeypatch.setenv("THEORIA_SIGNIN_LOCKOUT", "five per minute")
    with pytest.raises(ImproperlyConfigured, match="THEORIA_SIGNIN_LOCKOUT: 'five per minute' is not a rate"):
        envrate("THEORIA_SIGNIN_LOCKOUT", "5/15min")
    monkeypatch.setenv("THEORIA_SIGNIN_LOCKOUT", "5/15min")
    assert envrate("THEORIA_SIGNIN_LOCKOUT", "") == "5/15min"
