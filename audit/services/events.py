"""Write audit events: the one way every component records what it did."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User

from audit.models import AuditEvent, Workspace
from audit.selectors.workspaces import AnyUser as AnyUser  # re-exported: the services' callers import it here
from audit.services.actors import actor_user as actor_user  # re-exported likewise

# Who acted in a service: a request's user (``AnyUser``: signed in or the anonymous one), or None
# for the system (``actor_label`` then names the component).
Actor = AnyUser | None


def actor_name(actor: Actor) -> str:
    """The acting user's username, or "system"."""
    user = actor_user(actor)
    return user.get_username() if user is not None else "system"


def event_record(
    *,
    action: str,
    obj: Any = None,
    object_type: str = "",
    object_id: str | int = "",
    actor: Actor = None,
    actor_label: str = "",
    workspace: Workspace | None = None,
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event. Pass ``obj`` (a model instance) or ``object_type``/``object_id``.

    ``actor`` is a user or None; ``actor_label`` names a system component when no user acted
    (e.g. ``"nightly_audit"``). Call it inside the service's transaction so the event and the
    change it describes are committed together.
    """
    if obj is not None:
        object_type = object_type or obj._meta.label_lower
        object_id = object_id or obj.pk
    return AuditEvent.objects.create(
        workspace=workspace,
        actor=actor_user(actor),
        actor_label=actor_label or actor_name(actor),
        action=action,
        object_type=object_type,
        object_id=str(object_id),
        details=details or {},
    )


@dataclass(frozen=True)
class Event:
    """An event noted where it happens and written with the others of its request
    (:func:`events_write`): the audit's rows and their events are written in one place.

    ``system`` names the component that acted on its own (the web step, a relabel): the event
    then has no user, whoever made the request."""

    action: str
    obj: Any
    details: dict[str, Any] = field(default_factory=dict)
    system: str = ""


def events_write(
    events: Iterable[Event], *, actor: User | None, workspace: Workspace | None
) -> list[AuditEvent]:
    """Append the noted events, in the order noted, in one insert (call inside the transaction
    that wrote what they describe). ``actor`` (the signed-in user, resolved once by the caller with
    ``actor_user``, or None) acted in each, but where an event names a system."""
    user = actor
    name = user.get_username() if user is not None else "system"
    rows = [
        AuditEvent(
            workspace=workspace,
            actor=None if e.system else user,
            actor_label=e.system or name,
            action=e.action,
            object_type=e.obj._meta.label_lower,
            object_id=str(e.obj.pk),
            details=e.details or {},
        )
        for e in events
    ]
    return AuditEvent.objects.bulk_create(rows)
