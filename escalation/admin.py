"""Admin console: business calendars and notification targets are edited here; cases are read-only.

Cases change only through escalation.services (the queue pages and the API); the admin shows
them, their events and their notifications for inspection. Curation items change only through
the services too (closed by an action, reworded or deleted): each change is an audit event.
"""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import transaction
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from audit import hooks
from audit.admin.events import AuditedAdminMixin, ReadOnlyAdmin
from escalation import services
from escalation.errors import EscalationError
from escalation.models import (
    BusinessCalendar,
    CurationItem,
    Holiday,
    Notification,
    NotificationTarget,
    ReviewCase,
    ReviewEvent,
)

WEEKDAYS = [
    (0, "Monday"),
    (1, "Tuesday"),
    (2, "Wednesday"),
    (3, "Thursday"),
    (4, "Friday"),
    (5, "Saturday"),
    (6, "Sunday"),
]


class BusinessCalendarForm(forms.ModelForm):
    """Business hours as a person says them: ticked weekdays and the hours of a working day."""

    working_days = forms.TypedMultipleChoiceField(
        choices=WEEKDAYS,
        coerce=int,
        widget=forms.CheckboxSelectMultiple,
        help_text="The days the L2 and L3 clocks run.",
    )

    class Meta:
        model = BusinessCalendar
        fields = ("workspace", "timezone", "working_days", "day_start", "day_end")
        labels = {
            "timezone": "Time zone",
            "day_start": "Working day starts at",
            "day_end": "Working day ends at",
        }
        help_texts = {
            "timezone": "An IANA name such as Europe/Berlin: the hours below are local to it.",
            "day_start": "Local time, HH:MM (24-hour clock).",
            "day_end": "Local time, HH:MM (24-hour clock), after the start.",
        }
        widgets = {
            "day_start": forms.TimeInput(format="%H:%M", attrs={"type": "time"}),
            "day_end": forms.TimeInput(format="%H:%M", attrs={"type": "time"}),
        }

    def clean_working_days(self) -> list[int]:
        return sorted(set(self.cleaned_data["working_days"]))


class BusinessCalendarInline(admin.StackedInline):
    """The workspace's business hours (holidays are edited on the calendar's own page)."""

    model = BusinessCalendar
    form = BusinessCalendarForm
    extra = 0
    max_num = 1
    show_change_link = True


class NotificationTargetInline(admin.TabularInline):
    """Where the workspace's escalation alerts go, besides the deployment's defaults."""

    model = NotificationTarget
    extra = 0


# the workspace admin page (audit's) shows them, after its users
hooks.register_workspace_admin_inline(BusinessCalendarInline)
hooks.register_workspace_admin_inline(NotificationTargetInline)


class HolidayInline(admin.TabularInline):
    model = Holiday
    extra = 1


@admin.register(BusinessCalendar)
class BusinessCalendarAdmin(AuditedAdminMixin, admin.ModelAdmin):
    form = BusinessCalendarForm
    list_display = ("workspace", "timezone", "weekdays", "day_start", "day_end")

    @admin.display(description="Working days")
    def weekdays(self, obj: BusinessCalendar) -> str:
        names = dict(WEEKDAYS)
        return ", ".join(names.get(d, str(d)) for d in sorted(obj.working_days or []))

    inlines = [HolidayInline]


@admin.register(NotificationTarget)
class NotificationTargetAdmin(AuditedAdminMixin, admin.ModelAdmin):
    list_display = ("workspace", "channel", "address", "tier", "active")
    list_filter = ("channel", "tier", "active", "workspace")


class ReviewEventInline(admin.TabularInline):
    model = ReviewEvent
    fields = ("at", "kind", "tier", "actor_label", "reason")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(ReviewCase)
class ReviewCaseAdmin(ReadOnlyAdmin):
    list_display = (
        "ticket",
        "tier",
        "status",
        "sla_state",
        "risk_score",
        "owner",
        "domain",
        "due_at",
        "opened_at",
    )
    list_filter = ("tier", "status", "sla_state", "trigger", "domain")
    search_fields = ("ticket", "summary")
    list_select_related = ("owner",)
    inlines = [ReviewEventInline]


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    """Alerts about case transitions and about decisions on answers (scoped by their ``workspace``)."""

    list_display = (
        "created_at",
        "event",
        "audit_event",
        "channel",
        "address",
        "status",
        "attempts",
        "sent_at",
    )
    list_filter = ("status", "channel")
    list_select_related = ("event", "audit_event")


@admin.register(CurationItem)
class CurationItemAdmin(admin.ModelAdmin):
    list_display = ("id", "workspace", "source", "status", "case", "document", "created_at")
    list_filter = ("status", "source")
    readonly_fields = (
        "workspace",
        "source",
        "status",
        "case",
        "claim",
        "document",
        "created_by",
        "created_at",
        "closed_at",
    )
    actions = ["mark_done", "mark_dismissed"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: CurationItem, form: Any, change: bool) -> None:
        services.curation_item_update(item=obj, actor=request.user, reason=obj.reason)

    def delete_model(self, request: HttpRequest, obj: CurationItem) -> None:
        services.curation_item_delete(item=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[CurationItem]) -> None:
        with transaction.atomic():
            for item in queryset:
                services.curation_item_delete(item=item, actor=request.user)

    def _close(self, request: HttpRequest, queryset: QuerySet[CurationItem], status: str) -> None:
        closed = 0
        for item in queryset:
            try:
                services.curation_item_close(item=item, actor=request.user, status=status)
                closed += 1
            except EscalationError as exc:
                self.message_user(request, str(exc), level=messages.WARNING)
        self.message_user(request, f"{closed} item(s) marked {status}.")

    @admin.action(description="Mark selected items done")
    def mark_done(self, request: HttpRequest, queryset: QuerySet[CurationItem]) -> None:
        self._close(request, queryset, CurationItem.Status.DONE)

    @admin.action(description="Dismiss selected items")
    def mark_dismissed(self, request: HttpRequest, queryset: QuerySet[CurationItem]) -> None:
        self._close(request, queryset, CurationItem.Status.DISMISSED)
