"""The append-only audit log."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone


class AppendOnlyError(Exception):
    """Raised on an attempt to change or delete an audit event."""


class AuditEventQuerySet(models.QuerySet["AuditEvent"]):
    def update(self, **kwargs: Any) -> int:  # noqa: D401 — guard, not behaviour
        raise AppendOnlyError("Audit events are append-only.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Audit events are append-only; retention purges use purge_expired().")

    def purge_expired(self) -> tuple[int, dict[str, int]]:
        """Delete events past retention: the one sanctioned deletion (see the retention service)."""
        return models.QuerySet.delete(self)


class AuditEvent(models.Model):
    """Something that happened, for the regulator: who did what to which object, when, and why.

    Rows are never updated; deleting is reserved to retention (``purge_expired``).
    ``action`` is a dotted verb such as ``answer.audited``, ``kb.document_ingested``,
    ``settings.mode_changed`` or ``case.resolved``.
    """

    workspace = models.ForeignKey(
        "audit.Workspace", null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="audit_events",
    )
    actor_label = models.CharField(
        max_length=150, blank=True, help_text="Username, or the system component that acted."
    )
    action = models.CharField(max_length=64, db_index=True)
    object_type = models.CharField(max_length=64)
    object_id = models.CharField(max_length=64)
    at = models.DateTimeField(default=timezone.now, db_index=True)
    details = models.JSONField(default=dict, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_event_object")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.actor_label or 'system'} {self.action} {self.object_type}:{self.object_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise AppendOnlyError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Audit events are append-only.")
