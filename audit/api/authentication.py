"""DRF authentication that also applies a superuser's explicit workspace switch.

A client names the workspace with the ``X-Theoria-Workspace`` header (a slug). Only a superuser
may name one other than their own (403 otherwise); an unknown slug is 404. Without the header
every caller, superusers included, works in their home workspace.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from drf_spectacular.authentication import SessionScheme, TokenScheme
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from audit.models import Workspace
from audit.services.workspaces import workspace_switch


def _apply_switch(request: Request, result: tuple[Any, Any] | None) -> tuple[Any, Any] | None:
    if result is None:
        return None
    slug = request.headers.get("X-Theoria-Workspace", "")
    if slug:
        try:
            workspace_switch(result[0], slug)
        except PermissionDenied as exc:
            raise exceptions.PermissionDenied(str(exc)) from None
        except Workspace.DoesNotExist:
            raise exceptions.NotFound() from None
    return result


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        return _apply_switch(request, super().authenticate(request))


class SessionAuthentication(authentication.SessionAuthentication):
    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        return _apply_switch(request, super().authenticate(request))


class WorkspaceTokenScheme(TokenScheme):
    """The schema's description of :class:`TokenAuthentication` (the same scheme as DRF's)."""

    target_class = "audit.api.authentication.TokenAuthentication"


class WorkspaceSessionScheme(SessionScheme):
    target_class = "audit.api.authentication.SessionAuthentication"
