"""Request limits that hold across server processes, and the client address they count by.

Counts live in Django's default cache, which the settings point at Redis when
``THEORIA_REDIS_URL`` is set and at the database cache table otherwise
(``createcachetable``), so every gunicorn worker and every machine adds to the same counts.

``take(scope, ident, rate)`` counts one event unless it is over the rate (a sliding window:
this window's count plus the share of the previous window's count that still overlaps, so a
burst at a window boundary cannot pass twice the rate); a refused event is not counted, so a
client that waits the Retry-After it was given gets in. ``over(scope, ident, rate)``
only reads: the sign-in lockout checks it before a password is tried and counts failures only.

``client_address(request)`` is ``REMOTE_ADDR``: the address of whoever opened the connection.
Behind N trusted reverse proxies (``THEORIA_TRUSTED_PROXIES``, README "Production") it is the
address the outermost of them saw, read from the right of ``X-Forwarded-For``; the header is
never trusted otherwise, so a new value per request cannot make a new client.
"""

from __future__ import annotations

import contextlib
import hashlib
import time

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.core.cache.backends.db import DatabaseCache
from django.db import transaction

from audit.security.rates import Rate

__all__ = ["Rate", "audit_throttle", "client_address", "forget", "over", "take"]


def client_address(request) -> str:
    """The client's address: ``REMOTE_ADDR``, or behind ``THEORIA_TRUSTED_PROXIES`` proxies the
    address the outermost trusted proxy received the request from (see the module doc)."""
    remote = request.META.get("REMOTE_ADDR", "") or ""
    proxies = int(settings.THEORIA.get("TRUSTED_PROXIES") or 0)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies <= 0 or not forwarded:
        return remote
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    # each trusted proxy appends the address it received the request from: the last N entries
    # are theirs, and the N-th from the right is what the outermost one saw
    return hops[-min(proxies, len(hops))] if hops else remote


def _clock() -> float:
    """The throttle's clock: seconds since the epoch (the windows align to it; tests move it)."""
    return time.time()


def _key(scope: str, ident: str, window: int) -> str:
    digest = hashlib.sha256(f"{scope}\0{ident}".encode()).hexdigest()[:40]
    return f"theoria:throttle:{scope}:{digest}:{window}"


def _counts(scope: str, ident: str, rate: Rate, now: float) -> tuple[str, int, int, float]:
    window = int(now // rate.seconds)
    current, previous = _key(scope, ident, window), _key(scope, ident, window - 1)
    found = cache.get_many([current, previous])
    elapsed = (now % rate.seconds) / rate.seconds
    return current, int(found.get(current, 0)), int(found.get(previous, 0)), elapsed


def _estimate(this: int, before: int, elapsed: float) -> float:
    return this + before * (1.0 - elapsed)


def over(scope: str, ident: str, rate: Rate | None, *, now: float | None = None) -> float | None:
    """Seconds to wait when ``ident`` already reached ``rate`` in ``scope``; None when it has not."""
    if rate is None:
        return None
    now = _clock() if now is None else now
    _, this, before, elapsed = _counts(scope, ident, rate, now)
    if _estimate(this, before, elapsed) < rate.count:
        return None
    return _wait(this, before, elapsed, rate)


def _wait(this: int, before: int, elapsed: float, rate: Rate) -> float:
    """Seconds until the estimate falls below the rate again when nothing more is counted."""
    rest = (1.0 - elapsed) * rate.seconds
    if this >= rate.count or not before:
        return max(1.0, rest)
    # the previous window's share decays over this window: below the rate at this elapsed share
    below_at = 1.0 - (rate.count - this) / before
    return max(1.0, (below_at - elapsed) * rate.seconds)


def _serialised():
    """One writer at a time for the database cache's read-and-write (``incr``); Redis's is atomic."""
    return (
        transaction.atomic()
        if isinstance(caches[DEFAULT_CACHE_ALIAS], DatabaseCache)
        else contextlib.nullcontext()
    )


def take(scope: str, ident: str, rate: Rate | None, *, now: float | None = None) -> float | None:
    """Count one event of ``ident`` in ``scope`` and return None, or, when that would pass
    ``rate``, count nothing and return the seconds to wait (Retry-After). No rate: always None.

    The count goes up first and comes down again on a refusal, so two processes counting at once
    never both pass the last free place.
    """
    if rate is None:
        return None
    now = _clock() if now is None else now
    current, _, before, elapsed = _counts(scope, ident, rate, now)
    with _serialised():
        cache.add(current, 0, timeout=2 * rate.seconds + 1)
        try:
            this = cache.incr(current)
        except ValueError:  # expired between add and incr
            cache.set(current, 1, timeout=2 * rate.seconds + 1)
            this = 1
        if _estimate(this - 1, before, elapsed) < rate.count:
            return None
        try:
            cache.decr(current)
        except ValueError:
            pass
    return _wait(this - 1, before, elapsed, rate)


def forget(scope: str, ident: str, rate: Rate | None, *, now: float | None = None) -> None:
    """Drop the counts of ``ident`` in ``scope`` (a successful sign-in clears its account's failures)."""
    if rate is None:
        return
    now = _clock() if now is None else now
    window = int(now // rate.seconds)
    cache.delete_many([_key(scope, ident, window), _key(scope, ident, window - 1)])


def audit_throttle(request) -> float | None:
    """Count one audit submission of the caller (the API's ``POST /audits`` and the answer form
    share it); seconds to wait when over ``THROTTLE_AUDITS``."""
    user = getattr(request, "user", None)
    ident = f"user:{user.pk}" if user is not None and user.is_authenticated else client_address(request)
    return take("audits", ident, Rate.parse(settings.THEORIA.get("THROTTLE_AUDITS")))
