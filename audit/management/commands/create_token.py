"""Print the API token of a user, creating it on first use: ``manage.py create_token USERNAME``."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from audit.services.events import event_record
from audit.services.workspaces import workspace_for_user


class Command(BaseCommand):
    help = "Print the API token of USERNAME (created if the user has none; --rotate replaces it)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--rotate", action="store_true", help="Delete the current token and issue a new one.")

    def handle(self, *args, username: str, rotate: bool = False, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f'There is no user "{username}"; create one first (manage.py createsuperuser).')
        if not user.is_active:
            raise CommandError(f'The user "{username}" is inactive; activate it before issuing a token.')
        if rotate:
            Token.objects.filter(user=user).delete()
        token, created = Token.objects.get_or_create(user=user)
        if created:
            event_record(action="api.token_created", object_type="authtoken.token", object_id=user.pk, actor=None,
                         actor_label="create_token", workspace=workspace_for_user(user),
                         details={"user": username, "rotated": rotate})
        self.stdout.write(token.key)
