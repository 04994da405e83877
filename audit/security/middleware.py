"""Request middleware: a superuser's explicit workspace switch (stored in the session), security headers."""

from __future__ import annotations

from django.conf import settings

from audit.models import Workspace
from audit.services.workspaces import SWITCH_SESSION_KEY, workspace_switch


class WorkspaceSwitchMiddleware:
    """Apply the workspace a superuser switched to (``POST /workspace/switch``) to each request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        slug = request.session.get(SWITCH_SESSION_KEY) if hasattr(request, "session") else None
        if slug and user is not None and getattr(user, "is_superuser", False):
            try:
                workspace_switch(user, slug)
            except Workspace.DoesNotExist:
                request.session.pop(SWITCH_SESSION_KEY, None)
        return self.get_response(request)


class SecurityHeadersMiddleware:
    """Add the Content-Security-Policy (``settings.THEORIA_CSP``) to every HTML page."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = getattr(settings, "THEORIA_CSP", "")
        if policy and response.get("Content-Type", "").startswith("text/html"):
            response.headers.setdefault("Content-Security-Policy", policy)
        return response


# Forms with a limit of their own (the answer form counts against THROTTLE_AUDITS) and the
# sign-in pages (their own lockout); signing out is never refused.
_FORMS_LIMITED_ELSEWHERE = frozenset({"answer-new", "login", "logout"})


class FormThrottleMiddleware:
    """Every state-changing HTML form (a POST outside the API) of a signed-in user counts against
    ``THEORIA["THROTTLE_FORMS"]`` per user; over it the form is refused with 429, Retry-After and
    the API's own message ("Request was throttled. Expected available in N seconds.")."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        user = getattr(request, "user", None)
        if (
            request.method in ("GET", "HEAD", "OPTIONS")
            or user is None
            or not user.is_authenticated
            or request.path.startswith("/api/")
            or getattr(request.resolver_match, "url_name", None) in _FORMS_LIMITED_ELSEWHERE
        ):
            return None
        import math

        from django.shortcuts import render
        from rest_framework.exceptions import Throttled

        from audit.security import throttling
        from audit.security.rates import Rate

        wait = throttling.take("forms", f"user:{user.pk}", Rate.parse(settings.THEORIA.get("THROTTLE_FORMS")))
        if wait is None:
            return None
        response = render(
            request,
            "audit/throttled.html",
            {"message": str(Throttled(math.ceil(wait)).detail)},
            status=429,
        )
        response["Retry-After"] = str(math.ceil(wait))
        return response
