"""Workspaces: the default one and a superuser's switch (the reads are ``audit.selectors.workspaces``,
re-exported here for the callers that import them from this module).

Every read and action is scoped to :func:`workspace_for_user`. A user's workspace is the one of
their profile; a signed-in user without one is refused (:class:`NoWorkspace`, a 403 saying why),
never put in a workspace by default. The Admin role does not widen it. A superuser
works in another workspace only after an explicit switch (:func:`workspace_switch`, applied per
request by ``audit.security.middleware`` for pages and ``X-Theoria-Workspace`` for the API).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction

from audit.models import Workspace
from audit.selectors.workspaces import NO_WORKSPACE as NO_WORKSPACE
from audit.selectors.workspaces import SWITCHED_ATTR, workspace_home
from audit.selectors.workspaces import NoWorkspace as NoWorkspace
from audit.selectors.workspaces import workspace_for_user as workspace_for_user
from audit.selectors.workspaces import workspace_member as workspace_member
from audit.selectors.workspaces import workspace_of as workspace_of
from audit.services.events import AnyUser

DEFAULT_WORKSPACE_SLUG = "default"
SWITCH_SESSION_KEY = "theoria_workspace"
SWITCH_HEADER = "X-Theoria-Workspace"


@transaction.atomic
def workspace_get_default() -> Workspace:
    """Return the default workspace, creating it on first use."""
    workspace, _ = Workspace.objects.get_or_create(
        slug=DEFAULT_WORKSPACE_SLUG, defaults={"name": "Default workspace"}
    )
    return workspace


def workspace_switch(user: AnyUser, slug: str) -> Workspace:
    """Put ``user`` in workspace ``slug`` for this request (superusers only; "" is the home one).

    Raises ``PermissionDenied`` for anyone else naming a workspace other than their own, and
    ``Workspace.DoesNotExist`` for an unknown slug.
    """
    slug = (slug or "").strip()
    if not slug:
        return workspace_for_user(user)
    if not getattr(user, "is_superuser", False):
        if workspace_home(user).slug == slug:
            return workspace_home(user)
        raise PermissionDenied("Only a superuser may switch workspaces.")
    workspace = Workspace.objects.get(slug=slug)
    setattr(user, SWITCHED_ATTR, workspace)
    return workspace
