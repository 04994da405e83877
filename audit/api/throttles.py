"""Request throttles of the API (DRF): the token endpoint per client address, audits per token.

Rates come from ``settings.THEORIA`` when a request is checked (``THROTTLE_TOKEN``,
``THROTTLE_AUDITS``, e.g. ``"10/min"``; empty: no limit), so a deployment sets them by
environment. Over the rate DRF answers 429 with ``Retry-After``. Counts live in Django's cache:
with several server processes, point ``CACHES`` at Redis for one count across them.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class _SettingsRateThrottle(SimpleRateThrottle):
    setting = ""

    def __init__(self):  # the rate is read per request, not frozen at import
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)

    def get_rate(self):
        return settings.THEORIA.get(self.setting) or None


class TokenThrottle(_SettingsRateThrottle):
    """``POST /auth/token``: password guesses per client address (authenticated or not)."""

    scope = "token"
    setting = "THROTTLE_TOKEN"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AuditThrottle(_SettingsRateThrottle):
    """``POST /audits``: audits per user (per token), so one front end cannot starve the others."""

    scope = "audits"
    setting = "THROTTLE_AUDITS"

    def get_cache_key(self, request, view):
        ident = request.user.pk if request.user and request.user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
