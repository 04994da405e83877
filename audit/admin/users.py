"""The admin console's users, scoped to the caller's workspace.

A workspace Admin given ``auth.view_user``/``auth.change_user`` (a deployment may grant them)
manages the people of its own workspace and nothing above it:

- the list, the change page, the password page and deletion reach only users whose profile is in
  the caller's workspace and who are not superusers (``WorkspaceScopedAdmin``, which scopes every
  user field's choices alike); anyone else answers as a user that does not exist (users without a
  profile belong to no workspace);
- the form never offers ``is_superuser``, ``is_staff`` or ``user_permissions``, and its groups
  are Theoria's roles (``audit.roles``) only, so no deployment-made group with wider permissions
  can be handed out; a posted value for a field not offered is ignored;
- a user added there gets, in the same form, a role and a profile in the caller's workspace (a
  superuser chooses the workspace), so it can sign in and work at once and stays visible to its
  Admin: no separate User profile to add, no 403 "belongs to no workspace".

A superuser sees the console unchanged (the workspace switch still scopes the list).
"""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm
from django.contrib.auth.models import Group
from django.db import transaction

from audit import roles
from audit.admin.site import WorkspaceScopedAdmin

ESCALATING_FIELDS = ("is_superuser", "is_staff", "user_permissions")


def _workspaces():
    from audit.models import Workspace

    return Workspace.objects.order_by("name")


class UserAddForm(AdminUserCreationForm):
    """Django's new-user form with the user's workspace and role: one form sets a user up."""

    workspace = forms.ModelChoiceField(
        queryset=_workspaces(),
        help_text="The workspace the user works in (everything they see and do is scoped to it).",
    )
    role = forms.ChoiceField(
        choices=[(r, r) for r in roles.ALL_ROLES],
        help_text="What the user may do: L1/L2/L3 review cases at their tier, the Auditor reads, the "
        "Submitter sends answers (a RAG front end), the Admin sets the workspace up. More roles can "
        "be given on the user's page.",
    )


class WorkspaceUserAdmin(WorkspaceScopedAdmin, UserAdmin):
    """Django's user admin, scoped for anyone but a superuser (module doc)."""

    add_form = UserAddForm
    add_fieldsets = (
        *UserAdmin.add_fieldsets,
        ("Workspace and role", {"classes": ("wide",), "fields": ("workspace", "role")}),
    )

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if request.user.is_superuser:
            return fieldsets
        hidden = (*ESCALATING_FIELDS, "workspace")  # a workspace Admin adds to its own workspace
        return [
            (name, {**options, "fields": [f for f in options["fields"] if f not in hidden]})
            for name, options in fieldsets
        ]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if obj is None and not request.user.is_superuser:  # a form class of its own, made per request
            form.base_fields.pop("workspace", None)
        return form

    def get_changeform_initial_data(self, request):
        from audit.services.workspaces import workspace_for_user

        return {**super().get_changeform_initial_data(request), "workspace": workspace_for_user(request.user)}

    def get_list_filter(self, request):
        filters = super().get_list_filter(request)
        return filters if request.user.is_superuser else [f for f in filters if f not in ESCALATING_FIELDS]

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = Group.objects.filter(name__in=roles.ALL_ROLES)
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def save_model(self, request, obj, form, change):
        from audit.models import UserProfile
        from audit.services.workspaces import workspace_for_user

        with transaction.atomic():
            super().save_model(request, obj, form, change)
            if change:
                return
            chosen = form.cleaned_data.get("workspace") if request.user.is_superuser else None
            UserProfile.objects.get_or_create(
                user=obj, defaults={"workspace": chosen or workspace_for_user(request.user)}
            )
            role = form.cleaned_data.get("role")
            if role in roles.ALL_ROLES:
                obj.groups.add(Group.objects.get_or_create(name=role)[0])


def register(site) -> None:
    """Put :class:`WorkspaceUserAdmin` in place of django.contrib.auth's user admin."""
    user = get_user_model()
    if site.is_registered(user):
        site.unregister(user)
    site.register(user, WorkspaceUserAdmin)
