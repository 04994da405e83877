"""Make every change made in the admin console an audit event.

``AuditedAdminMixin`` wraps ``save_model``, ``delete_model`` and ``delete_queryset`` (the bulk
"delete selected" action): the change and its event are written in one transaction, and the
event names the fields changed with their old and new values, so an auditor can replay who
switched a mode, moved a threshold or dropped an allow-listed domain.
"""

from __future__ import annotations

from django.contrib import admin
from django.db import transaction

from audit.services.events import event_record


def _plain(value):
    """Return a JSON-friendly form of a field value (model instances by primary key)."""
    if hasattr(value, "pk"):
        return value.pk
    if isinstance(value, (str, int, float, bool, list, dict)) or value is None:
        return value
    return str(value)


def _workspace_of(obj):
    from audit.models import Workspace

    if isinstance(obj, Workspace):
        return obj
    for attr in ("workspace", "calendar"):
        related = getattr(obj, attr, None)
        if isinstance(related, Workspace):
            return related
        if related is not None and isinstance(getattr(related, "workspace", None), Workspace):
            return related.workspace
    return None


class AuditedAdminMixin:
    """Record an audit event ``admin.<model>_created|changed|deleted`` for every admin write."""

    def _event_action(self, verb: str) -> str:
        return f"admin.{self.model._meta.model_name}_{verb}"

    def save_model(self, request, obj, form, change):
        fields = [
            f
            for f in (form.changed_data if form is not None else [])
            if f in {x.name for x in obj._meta.concrete_fields}
        ]
        before = {}
        if change and fields:
            before = type(obj)._default_manager.filter(pk=obj.pk).values(*fields).first() or {}
        with transaction.atomic():
            super().save_model(request, obj, form, change)
            if change and not fields:
                return
            event_record(
                action=self._event_action("changed" if change else "created"),
                obj=obj,
                actor=request.user,
                workspace=_workspace_of(obj),
                details={
                    "object": str(obj),
                    "changes": {
                        f: {"from": _plain(before.get(f)), "to": _plain(getattr(obj, f, None))}
                        for f in fields
                    },
                },
            )

    def save_formset(self, request, form, formset, change):
        """Record the rows of inlines (e.g. a calendar's holidays) added, changed or deleted."""
        with transaction.atomic():
            super().save_formset(request, form, formset, change)
            for verb, objs in (
                ("created", formset.new_objects),
                ("changed", [o for o, _ in formset.changed_objects]),
                ("deleted", formset.deleted_objects),
            ):
                for obj in objs:
                    event_record(
                        action=f"admin.{obj._meta.model_name}_{verb}",
                        obj=obj,
                        actor=request.user,
                        workspace=_workspace_of(obj) or _workspace_of(form.instance),
                        details={"object": str(obj)},
                    )

    def delete_model(self, request, obj):
        with transaction.atomic():
            self._record_delete(request, obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for obj in queryset:
                self._record_delete(request, obj)
            super().delete_queryset(request, queryset)

    def _record_delete(self, request, obj):
        event_record(
            action=self._event_action("deleted"),
            obj=obj,
            actor=request.user,
            workspace=_workspace_of(obj),
            details={"object": str(obj)},
        )


class ReadOnlyAdmin(admin.ModelAdmin):
    """An admin page that shows records written by the system and lets nobody add, change or delete them."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
