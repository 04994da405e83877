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
