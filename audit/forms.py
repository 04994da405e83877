"""Forms of the analyst pages: they check shape only (business rules live in services)."""

from __future__ import annotations

from django import forms


class DateRangeForm(forms.Form):
    """The date range of the dashboard (both ends inclusive; defaults applied by the view)."""

    date_from = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.add_error("date_to", "date_to must not be before date_from.")
        return data


def form_errors_text(form: forms.Form) -> str:
    """Return the form's errors as one sentence per field, naming the field."""
    return " ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
