"""Print the API token of a user, creating it on first use: ``manage.py create_token USERNAME``.

``--role ROLE`` also creates the user when missing (no password: it signs in with its token only)
and adds it to that role, e.g. ``create_token frontend --role Submitter`` for a RAG front end.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

from audit import roles
from audit.models import UserProfile
from audit.services.events import event_record
from audit.services.workspaces import workspace_for_user, workspace_get_default, workspace_of


class Command(BaseCommand):
    help = "Print the API token of USERNAME (created if the user has none; --rotate replaces it)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--rotate", action="store_true", help="Delete the current token and issue a new one."
        )
        parser.add_argument(
            "--role",
            choices=roles.ALL_ROLES,
            help="Create the user if missing and give it this role (e.g. Submitter).",
        )

    @transaction.atomic
    def handle(self, *args, username: str, rotate: bool = False, role: str | None = None, **options):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None and role is None:
            raise CommandError(f'There is no user "{username}"; pass --role ROLE to create it.')
        if user is None:
            user = User.objects.create_user(username=username)  # unusable password: token only
            UserProfile.objects.create(user=user, workspace=workspace_get_default())
        if not user.is_active:
            raise CommandError(f'The user "{username}" is inactive; activate it before issuing a token.')
        if workspace_of(user) is None:
            raise CommandError(
                f'The user "{username}" belongs to no workspace; give it a profile (admin console) first.'
            )
        if role is not None:
            user.groups.add(Group.objects.get(name=role))
        if rotate:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
        if created:
            event_record(
                action="api.token_created",
                object_type="authtoken.token",
                object_id=user.pk,
                actor_label="create_token",
                workspace=workspace_for_user(user),
                details={"user": username, "rotated": rotate, "role": role or ""},
            )
        self.stdout.write(token.key)
