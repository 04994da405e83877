"""Who acted in a request: its signed-in user, resolved once (``actor_user``) and then carried by
the request's job and its one write (``audit.services.events.events_write`` takes it resolved)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from audit.selectors.workspaces import AnyUser


def actor_user(actor: AnyUser | None) -> User | None:
    """The signed-in user who acted, or None (the system, or an anonymous request)."""
    if actor is None or isinstance(actor, AnonymousUser) or not actor.is_authenticated:
        return None
    return actor
