"""The one answer to "which workspace is this caller in?" (reads only; ``audit.services.workspaces``
creates the default workspace and applies a superuser's switch).

Every read and action is scoped to :func:`workspace_for_user`. A user's workspace is the one of
their profile; a signed-in user without one is refused (:class:`NoWorkspace`, a 403 saying why),
never put in a workspace by default. The Admin role does not widen it. A superuser
works in another workspace only after an explicit switch (``workspace_switch``, applied per
request by ``audit.security.middleware`` for pages and ``X-Theoria-Workspace`` for the API).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied

from audit.models import UserProfile, Workspace

AnyUser = User | AnonymousUser  # a request's user, signed in or not

SWITCHED_ATTR = "_theoria_workspace"  # the request user's attribute a superuser's switch sets


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
    switched: Workspace | None = getattr(user, SWITCHED_ATTR, None)
    if switched is not None and getattr(user, "is_superuser", False):
        return switched
    return workspace_home(user)


def workspace_member(workspace: Workspace, username: str) -> User | None:
    """Return the active user called ``username`` whose workspace is ``workspace``, else None.

    Callers answer "not found" the same way for a missing user and a user of another workspace,
    so no response reveals which usernames exist elsewhere.
    """
    user: User | None = get_user_model().objects.filter(username=username, is_active=True).first()
    home = workspace_of(user) if user is not None else None
    if home is None or home.pk != workspace.pk:
        return None
    return user
