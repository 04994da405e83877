"""Workspaces, profiles and the one answer to "which workspace is this caller in?".

Every read and action is scoped to :func:`workspace_for_user`. A user's workspace is the one of
their profile; a signed-in user without one is refused (:class:`NoWorkspace`, a 403 saying why),
never put in a workspace by default. The Admin role does not widen it. A superuser
works in another workspace only after an explicit switch (:func:`workspace_switch`, applied per
request by ``audit.security.middleware`` for pages and ``X-Theoria-Workspace`` for the API).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction

from audit.models import UserProfile, Workspace
from audit.services.events import AnyUser

DEFAULT_WORKSPACE_SLUG = "default"
SWITCH_SESSION_KEY = "theoria_workspace"
SWITCH_HEADER = "X-Theoria-Workspace"
_SWITCHED = "_theoria_workspace"


@transaction.atomic
def workspace_get_default() -> Workspace:
    """Return the default workspace, creating it on first use."""
    workspace, _ = Workspace.objects.get_or_create(
        slug=DEFAULT_WORKSPACE_SLUG, defaults={"name": "Default workspace"}
    )
    return workspace


class NoWorkspace(PermissionDenied):
    """A user with no profile belongs to no workspace: every page and API call refuses it (403)."""


NO_WORKSPACE = (
    "Your account belongs to no workspace, so there is nothing it may see or change here; "
    "ask an administrator to add it to a workspace."
)


def workspace_of(user: AnyUser | None) -> Workspace | None:
    """The workspace of the user's profile; None for a user without one (or anonymous)."""
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        return None
    profile = UserProfile.objects.select_related("workspace").filter(user=user).first()
    return profile.workspace if profile is not None else None


def workspace_home(user: AnyUser) -> Workspace:
    """Return the user's home workspace; raise :class:`NoWorkspace` when the user has none."""
    home = workspace_of(user)
    if home is None:
        raise NoWorkspace(NO_WORKSPACE)
    return home


def workspace_for_user(user: AnyUser) -> Workspace:
    """Return the workspace the user works in now: the home one, or a superuser's explicit switch."""
    switched: Workspace | None = getattr(user, _SWITCHED, None)
    if switched is not None and getattr(user, "is_superuser", False):
        return switched
    return workspace_home(user)


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
        raise PermissionDenied("only a superuser may switch workspaces")
    workspace = Workspace.objects.get(slug=slug)
    setattr(user, _SWITCHED, workspace)
    return workspace


def workspace_member(workspace: Workspace, username: str) -> User | None:
    """Return the active user called ``username`` whose workspace is ``workspace``, else None.

    Callers answer "not found" the same way for a missing user and a user of another workspace,
    so no response reveals which usernames exist elsewhere.
    """
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    home = workspace_of(user) if user is not None else None
    if home is None or home.pk != workspace.pk:
        return None
    return user
