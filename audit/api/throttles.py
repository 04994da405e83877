"""Request throttles of the API (DRF): the token endpoint per client address, audits and the
escalation API's case actions per user.

Thin adapters over ``audit.security.throttling``, whose counts live in the shared cache (one count for
every server process). Rates come from ``settings.THEORIA`` when a request is checked
(``THROTTLE_TOKEN``, ``THROTTLE_AUDITS``, e.g. ``"10/min"``; empty: no limit), so a deployment
sets them by environment. Over the rate DRF answers 429 with ``Retry-After``. The answer form
(``/answers/new/``) counts against the same audit limit (``audit.security.throttling.audit_throttle``).
"""

from __future__ import annotations

import math

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from audit.security import throttling
from audit.security.rates import Rate
from audit.security.throttling import audit_throttle


class _SharedThrottle(BaseThrottle):
    def allow_request(self, request: Request, view: APIView) -> bool:
        self._wait = self.take(request)
        return self._wait is None

    def take(self, request: Request) -> float | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def wait(self) -> float | None:
        return math.ceil(self._wait) if self._wait is not None else None


class TokenThrottle(_SharedThrottle):
    """``POST /auth/token``: requests per client address (authenticated or not)."""

    def take(self, request: Request) -> float | None:
        rate = Rate.parse(settings.THEORIA.get("THROTTLE_TOKEN"))
        return throttling.take("token", throttling.client_address(request), rate)


class CaseActionThrottle(_SharedThrottle):
    """The escalation API's case actions (``POST /cases/open``, ``/cases/<ticket>/<action>``): per user
    (``THROTTLE_CASE_ACTIONS``), so one client cannot flood a case's history and its notifications."""

    def take(self, request: Request) -> float | None:
        user = getattr(request, "user", None)
        ident = (
            f"user:{user.pk}"
            if user is not None and user.is_authenticated
            else throttling.client_address(request)
        )
        return throttling.take(
            "case-actions", ident, Rate.parse(settings.THEORIA.get("THROTTLE_CASE_ACTIONS"))
        )


class AuditThrottle(_SharedThrottle):
    """``POST /audits``: audits per user (per token), so one front end cannot starve the others."""

    def take(self, request: Request) -> float | None:
        return audit_throttle(request)
