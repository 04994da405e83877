"""Workspaces, profiles and mode settings."""

from __future__ import annotations

from django.db import transaction

from audit.models import UserProfile, Workspace

DEFAULT_WORKSPACE_SLUG = "default"


@transaction.atomic
def workspace_get_default() -> Workspace:
    """Return the default workspace, creating it on first use."""
    workspace, _ = Workspace.objects.get_or_create(slug=DEFAULT_WORKSPACE_SLUG, defaults={"name": "Default workspace"})
    return workspace


def workspace_for_user(user) -> Workspace:
    """Return the user's home workspace (the default one for users without a profile)."""
    if getattr(user, "is_authenticated", False):
        profile = UserProfile.objects.select_related("workspace").filter(user=user).first()
        if profile is not None:
            return profile.workspace
    return workspace_get_default()
