"""API permissions by role; the matrix itself lives in ``audit.roles``."""

from __future__ import annotations

from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from audit import roles


class _RolePermission(BasePermission):
    check = staticmethod(lambda user: False)
    message = "Your role does not allow this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(request.user and request.user.is_authenticated and self.check(request.user))


class CanRead(_RolePermission):
    """Any Theoria role may read answers, claims, evidence, runs and the knowledge base."""

    check = staticmethod(roles.can_read)
    message = "Reading needs a Theoria role."


class CanSubmit(_RolePermission):
    """Submitters (RAG front ends), reviewers and admins may submit audits."""

    check = staticmethod(roles.can_submit)
    message = "Submitting audits needs the Submitter, reviewer or Admin role."


class CanReview(_RolePermission):
    """Reviewers (L1–L3) and admins may act on escalations."""

    check = staticmethod(roles.can_review)
    message = "Acting on escalations needs a reviewer (L1–L3) or Admin role."


class CanChangeSettings(_RolePermission):
    """Only admins change modes, thresholds and the knowledge base."""

    check = staticmethod(roles.can_change_settings)
    message = "Changing settings needs the Admin role."
