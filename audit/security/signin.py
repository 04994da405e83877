"""Sign-in protection of the login page, the admin login and the token endpoint.

Three rules, none of which lets a stranger lock an account's owner out:

- **Per account and address together** (django-axes, ``AXES_LOCKOUT_PARAMETERS =
  [["username", "ip_address"]]``, its database handler): after ``SIGNIN_LOCKOUT`` failed
  passwords for one account from one client address, sign-in of that account from that address
  is refused, the right password included. The cool-off runs from the *last* failure (axes keeps
  one row per account and address, its ``attempt_time`` moved on by each failure), so no window
  edge resets the count. The same account from another address is not affected. A successful
  sign-in clears its own account-and-address failures only.
- **Per address** (``SIGNIN_ADDRESS_LOCKOUT``): one address that fails for many accounts is
  refused for all of them; the cool-off again restarts with each failure.
- **A progressive delay per account** (``SIGNIN_ACCOUNT_DELAY_MAX``): failures of one account from
  any addresses beyond what one address may make (``SIGNIN_LOCKOUT``'s count) make the next try of
  that account wait 1, 2, 4 ... seconds after the last failure, at most ``SIGNIN_ACCOUNT_DELAY_MAX``.
  Guessing spread over many addresses is slowed to one try per delay. The delay never applies
  to an address the account signed in from within ``SIGNIN_KNOWN_ADDRESS_DAYS`` (the owner's own
  addresses, one axes ``AccessLog`` row per account and address, its ``attempt_time`` the last
  success): an attacker failing once a second from rotating addresses kept the owner out 103
  times of 109 while the delay restarted with each of their failures. From a new
  address the owner waits at most ``SIGNIN_ACCOUNT_DELAY_MAX``, never the lockout's minutes.

A refused sign-in answers 429 with ``Retry-After`` and one sentence saying why and for how long.
Client addresses are ``audit.security.throttling.client_address`` (``THEORIA_TRUSTED_PROXIES``) for the
three rules alike. With ``THEORIA_TRUSTED_PROXIES`` set, gunicorn's port must be reachable only
through those proxies: a client that reaches it directly writes its own ``X-Forwarded-For`` and
picks any address it likes (a new one per request dodges the per-address rules). The per-address and per-account counts live in the shared cache.

Why django-axes for the first rule: it is the ecosystem's maintained lockout, with the
username-and-address combination as a setting, a row per attempt that an administrator sees and
clears in the admin (superusers) or with ``manage.py axes_reset_username``, and an authentication
backend that refuses a locked account on every ``authenticate()`` call, not only on these pages.
Its database handler (not its cache handler) because it counts under ``select_for_update``, exact
with several workers on SQLite and PostgreSQL whichever cache is configured.
"""

from __future__ import annotations

import hashlib
import math
import time
from datetime import timedelta

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpResponse, JsonResponse
from django.utils import timezone

from audit.constants import SIGNIN_KNOWN_ADDRESS_DAYS
from audit.security import throttling
from audit.security.rates import Rate

LOCKED = "locked_out"
DISABLED_LIMIT = 10**9  # SIGNIN_LOCKOUT empty: axes never reaches it


# --- the settings, read on each call so a test's override applies -------------------------------


def _pair_rate() -> Rate | None:
    return Rate.parse(settings.THEORIA.get("SIGNIN_LOCKOUT"))


def _address_rate() -> Rate | None:
    return Rate.parse(settings.THEORIA.get("SIGNIN_ADDRESS_LOCKOUT"))


def _delay_max() -> int:
    return int(settings.THEORIA.get("SIGNIN_ACCOUNT_DELAY_MAX") or 0)


def account_of(request, credentials=None) -> str:
    """The account a sign-in names, compared without case (``AXES_USERNAME_CALLABLE``)."""
    username = (credentials or {}).get("username")
    if username is None and request is not None:
        data = getattr(request, "data", None) or getattr(request, "POST", {})
        username = data.get("username") if hasattr(data, "get") else None
    return str(username or "").strip().lower()


def client_address(request) -> str:
    """``AXES_CLIENT_IP_CALLABLE``: the address every throttle counts by."""
    return throttling.client_address(request)


def failure_limit(request=None, credentials=None) -> int:
    """``AXES_FAILURE_LIMIT``: failures per account and address before the lockout."""
    rate = _pair_rate()
    return rate.count if rate else DISABLED_LIMIT


def cool_off(request=None) -> timedelta:
    """``AXES_COOLOFF_TIME``: how long after its last failure an account and address stay locked."""
    rate = _pair_rate()
    return timedelta(seconds=rate.seconds if rate else 1)


# --- failure counts whose cool-off restarts with each failure (shared cache) ---------------------


def _keys(scope: str, ident: str) -> tuple[str, str]:
    digest = hashlib.sha256(f"{scope}\0{ident}".encode()).hexdigest()[:40]
    return f"theoria:signin:{scope}:{digest}:n", f"theoria:signin:{scope}:{digest}:last"


def _fail(scope: str, ident: str, seconds: int, now: float) -> None:
    count, last = _keys(scope, ident)
    timeout = seconds + 1
    if not cache.add(count, 1, timeout=timeout):
        try:
            cache.incr(count)
        except ValueError:  # expired between add and incr
            cache.set(count, 1, timeout=timeout)
        cache.touch(count, timeout=timeout)
    cache.set(last, now, timeout=timeout)


def _failures(scope: str, ident: str, seconds: int, now: float) -> tuple[int, float]:
    count, last = _keys(scope, ident)
    found = cache.get_many([count, last])
    when = float(found.get(last, 0.0))
    if now - when > seconds:  # the cache may keep a key a moment past its timeout
        return 0, when
    return int(found.get(count, 0)), when


def account_delay(failures: int) -> int:
    """Seconds the next try of an account waits after its last failure: none up to one address's
    allowance, then 1, 2, 4 ... up to ``SIGNIN_ACCOUNT_DELAY_MAX``."""
    allowance = failure_limit()
    if failures <= allowance or _delay_max() <= 0:
        return 0
    return min(_delay_max(), 2 ** min(failures - allowance - 1, 30))


# --- the three rules -----------------------------------------------------------------------------


def _pair_wait(request, account: str) -> float | None:
    from axes.handlers.proxy import AxesProxyHandler
    from axes.models import AccessAttempt
    from django.db.models import Max

    if _pair_rate() is None or not account:
        return None
    if not AxesProxyHandler.is_locked(request, {"username": account}):
        return None
    last = AccessAttempt.objects.filter(username=account, ip_address=client_address(request)).aggregate(
        last=Max("attempt_time")
    )["last"]
    if last is None:
        return cool_off().total_seconds()
    return (last + cool_off() - timezone.now()).total_seconds()


def signin_wait(request, username) -> tuple[float, str] | None:
    """(seconds, sentence) while this sign-in of ``username`` is refused; None when it may try."""
    account, address, now = account_of(request, {"username": username}), client_address(request), time.time()
    waits: list[tuple[float, str]] = []
    pair = _pair_wait(request, account)
    if pair is not None:
        waits.append((pair, "for this account from this address"))
    rate = _address_rate()
    if rate is not None:
        failures, last = _failures("address", address, rate.seconds, now)
        if failures >= rate.count:
            waits.append((last + rate.seconds - now, "from this address"))
    if account and not known_address(account, address):
        failures, last = _failures("account", account, cool_off().total_seconds(), now)
        delay = account_delay(failures)
        if delay and last + delay > now:
            waits.append((last + delay - now, "for this account"))
    if not waits:
        return None
    wait, why = max(waits)
    return max(1.0, wait), why


def signin_locked(request, username) -> float | None:
    """Seconds the sign-in of ``username`` from this request's address stays refused; None when it may try."""
    found = signin_wait(request, username)
    return found[0] if found else None


@receiver(user_login_failed, dispatch_uid="audit.security.signin.count_failure")
def count_failure(sender, credentials=None, request=None, **kwargs) -> None:
    """Every failed ``authenticate()`` counts for the address and the account (axes counts the
    pair through the same signal)."""
    if request is None:
        return
    now = time.time()
    rate = _address_rate()
    if rate is not None:
        _fail("address", client_address(request), rate.seconds, now)
    account = account_of(request, credentials)
    if account and _delay_max() > 0:
        _fail("account", account, int(cool_off().total_seconds()), now)


def known_address(account: str, address: str) -> bool:
    """Whether ``account`` signed in from ``address`` within ``SIGNIN_KNOWN_ADDRESS_DAYS``."""
    from axes.models import AccessLog

    since = timezone.now() - timedelta(days=SIGNIN_KNOWN_ADDRESS_DAYS)
    return AccessLog.objects.filter(username=account, ip_address=address, attempt_time__gte=since).exists()


def _remember_address(request, account: str, address: str) -> None:
    from axes.models import AccessLog

    if AccessLog.objects.filter(username=account, ip_address=address).update(attempt_time=timezone.now()):
        return
    AccessLog.objects.create(
        username=account,
        ip_address=address,
        user_agent=request.META.get("HTTP_USER_AGENT", "")[:255],
        http_accept=request.META.get("HTTP_ACCEPT", "")[:1025],
        path_info=request.path[:255],
    )


def signin_succeeded(request, username) -> None:
    """Clear this account's failures from this address (other addresses keep theirs), and remember
    the address as the account's own."""
    from axes.handlers.proxy import AxesProxyHandler

    account = account_of(request, {"username": username})
    if account:
        address = client_address(request)
        AxesProxyHandler.reset_attempts(username=account, ip_address=address)
        if address:
            _remember_address(request, account, address)


def locked_message(seconds: float, why: str = "for this account or from this address") -> str:
    if seconds < 120:
        wait = f"{math.ceil(seconds)} more second{'s' if math.ceil(seconds) != 1 else ''}"
    else:
        minutes = math.ceil(seconds / 60)
        wait = f"{minutes} more minutes"
    return (
        f"Too many failed sign-in attempts {why}: sign-in is refused for {wait}. Try again later, "
        "or ask an administrator to reset the password."
    )


def lockout_response(request, original_response=None, credentials=None):
    """``AXES_LOCKOUT_CALLABLE``: axes' middleware answers a request it locked out with this (a
    page or endpoint of ours has already answered 429 with its own sentence)."""
    if original_response is not None and original_response.status_code == 429:
        return original_response
    found = signin_wait(request, account_of(request, credentials)) or (cool_off().total_seconds(), "")
    message = locked_message(*found) if found[1] else locked_message(found[0])
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(math.ceil(found[0]))
    return response


# --- the forms and the login page ----------------------------------------------------------------


class _LockoutMixin:
    """An AuthenticationForm that refuses while locked; a failure that reaches the lockout answers
    with the lockout at once."""

    locked_for: float | None = None

    def _refuse(self, found: tuple[float, str]):
        self.locked_for = found[0]
        return forms.ValidationError(locked_message(*found), code=LOCKED)

    def clean(self):
        username = self.cleaned_data.get("username")
        found = signin_wait(self.request, username)
        if found is not None:
            raise self._refuse(found)
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            if getattr(self.request, "axes_locked_out", False):
                found = signin_wait(self.request, username)
                if found is not None:
                    raise self._refuse(found) from None
            raise
        signin_succeeded(self.request, username)
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
