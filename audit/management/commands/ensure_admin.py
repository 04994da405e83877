"""Create the first admin user if there is none, and say how to log in (at the URL ``make run`` serves:
``HOST`` and ``PORT`` from the environment, which the Makefile exports)."""

from __future__ import annotations

import os

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from audit import roles
from audit.models import UserProfile
from audit.services.workspaces import workspace_get_default


def served_url() -> str:
    """The development server's URL: ``http://$HOST:$PORT/`` (default 127.0.0.1:8000, as ``make run``)."""
    host = os.environ.get("HOST", "").strip() or "127.0.0.1"
    port = os.environ.get("PORT", "").strip() or "8000"
    return f"http://{host}:{port}/"


class Command(BaseCommand):
    help = "Create the admin user (THEORIA_ADMIN_USER / THEORIA_ADMIN_PASSWORD, default admin / theoria-admin) if missing."

    def handle(self, *args, **options):
        username = os.environ.get("THEORIA_ADMIN_USER", "admin")
        password = os.environ.get("THEORIA_ADMIN_PASSWORD", "theoria-admin")
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        created = user is None
        if created:
            user = User.objects.create_superuser(username=username, email="", password=password)
        user.groups.add(Group.objects.get(name=roles.ADMIN))
        UserProfile.objects.get_or_create(user=user, defaults={"workspace": workspace_get_default()})
        if created:
            self.stdout.write(f"Created the admin user. Log in at {served_url()} as {username} / {password}")
        else:
            self.stdout.write(
                f"Admin user {username!r} exists. Log in at {served_url()} "
                "(password unchanged; the default is theoria-admin)."
            )
