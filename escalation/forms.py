"""Forms of the queue page's actions: they check shape; the services decide what is allowed."""

from __future__ import annotations

from django import forms

from .models import ReviewCase


class NoteForm(forms.Form):
    note = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Note")


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="What are you waiting for (required)")


class AssignForm(forms.Form):
    owner = forms.CharField(max_length=150, label="Owner (username)")

    def clean_owner(self):
        return self.cleaned_data["owner"].strip()  # resolved within the case's workspace by the view


class EscalateForm(forms.Form):
    note = forms.CharField(max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), label="Why escalate (required)")


class ResolveForm(forms.Form):
    decision = forms.ChoiceField(choices=ReviewCase.Decision.choices, label="Decision")
    rationale = forms.CharField(max_length=4000, widget=forms.Textarea(attrs={"rows": 3}), label="Rationale (required)")
    confirm = forms.BooleanField(label="I confirm this resolution; it updates the claim card.")
