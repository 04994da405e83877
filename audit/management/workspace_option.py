"""The ``--workspace SLUG`` option shared by the management commands."""

from __future__ import annotations

from django.core.management.base import CommandError

from audit.models import Workspace


def workspace_from_option(slug: str) -> Workspace:
    """Return the workspace a command's ``--workspace`` names; exit with one sentence if there is none."""
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise CommandError(f"There is no workspace with the slug {slug!r}.")
    return workspace
