"""The admin console's site: every registered model is scoped to the caller's workspace.

``TheoriaAdminSite.register`` gives each ModelAdmin the ``WorkspaceScopedAdmin`` mixin, so a model
added later is scoped without anyone remembering to. A model's rows are filtered by the first
foreign-key path that reaches ``Workspace`` (``answer__workspace``, ``claim__answer__workspace``,
...); users by their profile's workspace (for anyone but a superuser: only users with a profile
there, never a superuser, also as the choices of a user field); models with no such path (the task queue, the shared
web cache, groups) are shown to superusers only. A superuser works in another workspace only
after the explicit switch on the home page.
"""

from __future__ import annotations

from functools import lru_cache

from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import models
from django.forms.fields import InvalidJSONInput, JSONString

from audit.pipeline import json_limits

MAX_DEPTH = 4


@lru_cache(maxsize=None)
def workspace_path(model) -> str | None:
    """The lookup from ``model`` to its workspace ("" for Workspace itself; None when there is none)."""
    from audit.models import Workspace

    if model is Workspace:
        return ""
    if model is get_user_model():
        return "theoria_profile__workspace"
    frontier = [(model, "")]
    through_user = None
    for _ in range(MAX_DEPTH):
        following = []
        for current, prefix in frontier:
            for field in current._meta.get_fields():
                if not (field.is_relation and field.concrete and (field.many_to_one or field.one_to_one)):
                    continue
                path = f"{prefix}{field.name}"
                if field.related_model is Workspace:
                    return path
                if field.related_model is get_user_model():
                    # a user is not a tenant row (actor, owner): only a row with no path of its own (an API
                    # token) goes through its user's profile
                    through_user = through_user or f"{path}__theoria_profile__workspace"
                    continue
                following.append((field.related_model, path + "__"))
        frontier = following
    return through_user


class LimitedJSONFormField(forms.JSONField):
    """The admin's JSON fields read through ``audit.pipeline.json_limits``: nesting past
    ``JSON_MAX_DEPTH`` or a 400-digit integer is a form error naming the problem, never a
    RecursionError or an overflow (also when the page is shown again with the error)."""

    def to_python(self, value):
        if self.disabled or isinstance(value, (list, dict, int, float, JSONString)):
            return value
        if value in self.empty_values:
            return None
        try:
            converted = json_limits.loads(value)
        except json_limits.JSONLimitError as exc:
            where = f"{exc.path}: " if exc.path else "The value "
            raise forms.ValidationError(f"{where}{exc.message}", code="limits") from None
        except ValueError:
            raise forms.ValidationError(
                self.error_messages["invalid"], code="invalid", params={"value": value}
            ) from None
        return JSONString(converted) if isinstance(converted, str) else converted

    def bound_data(self, data, initial):
        if self.disabled:
            return initial
        if data is None:
            return None
        try:
            return json_limits.loads(data)
        except ValueError:
            return InvalidJSONInput(data)


class LimitedJSONAdmin:
    """Every JSON field of a ModelAdmin or inline uses :class:`LimitedJSONFormField`."""

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if isinstance(db_field, models.JSONField):
            kwargs.setdefault("form_class", LimitedJSONFormField)
        return super().formfield_for_dbfield(db_field, request, **kwargs)


class WorkspaceScopedAdmin(LimitedJSONAdmin):
    """Filter a ModelAdmin's rows and foreign-key choices to the caller's workspace."""

    def _workspace(self, request):
        from audit.services.workspaces import workspace_for_user

        return workspace_for_user(request.user)

    def _scoped(self, request, queryset):
        path = workspace_path(queryset.model)
        if path is None:
            return queryset if request.user.is_superuser else queryset.none()
        workspace = self._workspace(request)
        if path == "":
            return queryset.filter(pk=workspace.pk)
        if path.endswith("theoria_profile__workspace"):
            from audit.services.workspaces import DEFAULT_WORKSPACE_SLUG

            if not request.user.is_superuser:  # no one outside the workspace, and no superuser
                users = queryset.filter(**{path: workspace})
                return users.filter(is_superuser=False) if path == "theoria_profile__workspace" else users
            if (
                workspace.slug == DEFAULT_WORKSPACE_SLUG
            ):  # users without a profile are in the default workspace
                profile = path.removesuffix("__workspace")
                return queryset.filter(
                    models.Q(**{path: workspace}) | models.Q(**{f"{profile}__isnull": True})
                )
        rows = models.Q(**{path: workspace})
        if request.user.is_superuser:  # deployment-level rows (an event of a command) belong to no workspace
            rows |= models.Q(**{f"{path}__isnull": True})
        return queryset.filter(rows)

    def get_queryset(self, request):
        return self._scoped(request, super().get_queryset(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None and hasattr(field, "queryset"):
            field.queryset = self._scoped(request, field.queryset)
        return field

    def has_module_permission(self, request):
        if workspace_path(self.model) is None and not request.user.is_superuser:
            return False
        return super().has_module_permission(request)


class TheoriaAdminSite(admin.AdminSite):
    @property
    def login_form(self):
        from audit.security.signin import LockoutAdminAuthenticationForm

        return LockoutAdminAuthenticationForm  # failed passwords lock the account and the address out

    def login(self, request, extra_context=None):
        from audit.security.signin import locked_response

        response = super().login(request, extra_context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        return locked_response(response, form) if form is not None else response

    def register(self, model_or_iterable, admin_class=None, **options):
        base = admin_class or admin.ModelAdmin
        if not issubclass(base, WorkspaceScopedAdmin):
            base = type(base.__name__, (WorkspaceScopedAdmin, base), {"__module__": base.__module__})
        base.inlines = [
            inline
            if issubclass(inline, LimitedJSONAdmin)
            else type(inline.__name__, (LimitedJSONAdmin, inline), {"__module__": inline.__module__})
            for inline in base.inlines
        ]
        return super().register(model_or_iterable, base, **options)
