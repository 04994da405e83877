"""Forms of the queue page's actions: they check shape; the services decide what is allowed."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from .models import ReviewCase


class NoteForm(forms.Form):
    note = forms.CharField(
        max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Note"
    )


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="What are you waiting for (required)"
    )


class AssignForm(forms.Form):
    """The owner is picked from the users who may own the case (``selectors.case_owner_choices``)."""

    owner = forms.CharField(max_length=150, label="Owner")

    def __init__(self, *args, owners=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.owners = owners  # [(role, [users])] or None: any active user (the service checks the role)

    def clean_owner(self):
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
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(f"no active user is called {username!r}.")
        return user


class RequiredNoteForm(forms.Form):
    note = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Note (required)")


class ReopenForm(forms.Form):
    reason = forms.CharField(
        max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Why reopen (required)"
    )


class EscalateForm(forms.Form):
    note = forms.CharField(
        max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Why escalate (required)"
    )


class ResolveForm(forms.Form):
    decision = forms.ChoiceField(choices=ReviewCase.Decision.choices, label="Decision")
    rationale = forms.CharField(
        max_length=4000, widget=forms.Textarea(attrs={"rows": 3}), label="Rationale (required)"
    )
    confirm = forms.BooleanField(label="I confirm this resolution; it updates the claim card.")
