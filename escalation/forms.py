"""Forms of the queue page's actions: they check shape; the services decide what is allowed."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from .models import ReviewCase

# Who may own a case, by role: [(role name, [users])] (``selectors.case_owner_choices``).
OwnerChoices = list[tuple[str, list[User]]]


class NoteForm(forms.Form):
    note = forms.CharField(
        max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Note"
    )


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="What are you waiting for (required)",
        error_messages={"required": "Say what you are waiting for: the clock stops until it comes."},
    )


class OpenCaseForm(forms.Form):
    """Ask for a person on a claim (the claim card and the claims list)."""

    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why should a person look at this claim (required)",
        error_messages={"required": "Say why a person should look at this claim."},
    )


class AssignForm(forms.Form):
    """The owner is picked from the users who may own the case (``selectors.case_owner_choices``)."""

    owner = forms.CharField(max_length=150, label="Owner", error_messages={"required": "Pick the new owner."})

    def __init__(self, *args: Any, owners: OwnerChoices | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owners = owners  # [(role, [users])] or None: any active user (the service checks the role)

    def clean_owner(self) -> User:
        username = self.cleaned_data["owner"].strip()
        if self.owners is not None:
            for _, users in self.owners:
                for user in users:
                    if user.get_username() == username:
                        return user
            roles = " or ".join(role for role, _ in self.owners) or "a reviewer role of this tier"
            raise forms.ValidationError(
                f"“{username}” cannot own this case: pick someone holding {roles} in this workspace."
            )
        found = get_user_model().objects.filter(username=username, is_active=True).first()
        if found is None:
            raise forms.ValidationError(f"no active user is called {username!r}.")
        return found


class RequiredNoteForm(forms.Form):
    note = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Note (required)",
        error_messages={"required": "Write the note before adding it."},
    )


class ReopenForm(forms.Form):
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why reopen (required)",
        error_messages={"required": "Say why the case is reopened."},
    )


class EscalateForm(forms.Form):
    note = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why escalate (required)",
        error_messages={"required": "Say why the case goes to the next tier."},
    )


class ResolveForm(forms.Form):
    decision = forms.ChoiceField(choices=ReviewCase.Decision.choices, label="Decision")
    rationale = forms.CharField(
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Rationale (required)",
        error_messages={"required": "Give the rationale for your decision."},
    )
    confirm = forms.BooleanField(
        label="I confirm this resolution; it updates the claim card.",
        error_messages={
            "required": "Tick “I confirm this resolution” to resolve the case: the decision updates the claim card."
        },
    )


class BulkForm(forms.Form):
    """A bulk action on the queue: the ticked tickets, the action, and the new owner of ``assign``."""

    tickets = forms.CharField(
        label="Cases", required=False, error_messages={"required": "Tick at least one case."}
    )
    action = forms.ChoiceField(
        label="Action",
        choices=[("acknowledge", "Acknowledge"), ("assign", "Assign to…"), ("unassign", "Unassign")],
        error_messages={"required": "Pick an action.", "invalid_choice": "Pick an action from the list."},
    )
    owner = forms.CharField(max_length=150, required=False, label="Assign to")

    def __init__(
        self, data: Any = None, *args: Any, owners: OwnerChoices | None = None, **kwargs: Any
    ) -> None:
        super().__init__(data, *args, **kwargs)
        self.owners = owners or []
        self.ticked = [t.strip() for t in (data.getlist("ticket") if data is not None else []) if t.strip()]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        data["tickets"] = list(dict.fromkeys(self.ticked))
        if not data["tickets"]:
            self.add_error("tickets", "Tick at least one case.")
        if data.get("action") == "assign":
            username = (data.get("owner") or "").strip()
            user = next((u for _, users in self.owners for u in users if u.get_username() == username), None)
            if not username:
                self.add_error("owner", "Pick who the cases go to.")
            elif user is None:
                self.add_error("owner", f"“{username}” holds no reviewer role in this workspace.")
            data["owner"] = user
        else:
            data["owner"] = None
        return data
