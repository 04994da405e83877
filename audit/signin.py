"""Sign-in with a lockout: the login page, the admin login and the token endpoint.

After ``SIGNIN_ACCOUNT_LOCKOUT`` failed passwords for one account (user names compared without
case), or ``SIGNIN_ADDRESS_LOCKOUT`` from one client address (``audit.throttling.client_address``),
every sign-in of that account or from that address is refused until the window has passed, the
right password included, with a sentence saying why and for how long (HTTP 429, Retry-After). A
successful sign-in clears its account's failures, never its address's. The counts live in the
shared cache (``audit.throttling``), so every server process refuses alike.

Why not django-axes: it would add two models, a middleware and an authentication backend for
what three cache counters do here, and it has its own client-address rules, where these share
``client_address`` (and ``THEORIA_TRUSTED_PROXIES``) with the API throttles.
"""

from __future__ import annotations

import math

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView

from audit import throttling
from audit.rates import Rate

LOCKED = "locked_out"


def _rates() -> tuple[Rate | None, Rate | None]:
    return (
        Rate.parse(settings.THEORIA.get("SIGNIN_ACCOUNT_LOCKOUT")),
        Rate.parse(settings.THEORIA.get("SIGNIN_ADDRESS_LOCKOUT")),
    )


def _account(username) -> str:
    return str(username or "").strip().lower()


def signin_locked(request, username) -> float | None:
    """Seconds the sign-in of ``username`` from this request's address stays refused; None when it may try."""
    account, address = _rates()
    waits = [
        throttling.over("signin-account", _account(username), account) if _account(username) else None,
        throttling.over("signin-address", throttling.client_address(request), address),
    ]
    waits = [w for w in waits if w is not None]
    return max(waits) if waits else None


def signin_failed(request, username) -> None:
    """Count a wrong password for the account and for the client address."""
    account, address = _rates()
    if _account(username):
        throttling.take("signin-account", _account(username), account)
    throttling.take("signin-address", throttling.client_address(request), address)


def signin_succeeded(username) -> None:
    """Clear the account's failures (its address keeps its count)."""
    throttling.forget("signin-account", _account(username), _rates()[0])


def locked_message(seconds: float) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return (
        "Too many failed sign-in attempts for this account or from this address: sign-in is locked "
        f"for {minutes} more minute{'s' if minutes != 1 else ''}. Try again later, or ask an "
        "administrator to reset the password."
    )


class _LockoutMixin:
    """An AuthenticationForm that refuses while locked and counts wrong passwords."""

    locked_for: float | None = None

    def clean(self):
        username = self.cleaned_data.get("username")
        self.locked_for = signin_locked(self.request, username)
        if self.locked_for is not None:
            raise forms.ValidationError(locked_message(self.locked_for), code=LOCKED)
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            if username and self.cleaned_data.get("password") and self.user_cache is None:
                signin_failed(self.request, username)
            raise
        signin_succeeded(username)
        return cleaned


class LockoutAuthenticationForm(_LockoutMixin, AuthenticationForm):
    """The login page's form."""


class LockoutAdminAuthenticationForm(_LockoutMixin, AdminAuthenticationForm):
    """The admin console's login form."""


def locked_response(response, form):
    """A sign-in page refused by the lockout answers 429 with Retry-After."""
    wait = getattr(form, "locked_for", None)
    if wait is not None:
        response.status_code = 429
        response["Retry-After"] = str(math.ceil(wait))
    return response


class SignInView(LoginView):
    """``/accounts/login/`` with the lockout."""

    authentication_form = LockoutAuthenticationForm

    def form_invalid(self, form):
        return locked_response(super().form_invalid(form), form)
