"""FilterSets of claim, answer, evidence and run lists: one definition for the API and the pages.

Query parameters: ``label`` (SUPPORTED, REFUTED, NEI; repeat or comma-separate for several),
``confidence_min`` / ``confidence_max`` (inclusive, 0..1), ``date_from`` / ``date_to``
(inclusive UTC days of the answer), ``mode``, ``domain``, ``escalation`` (open, resolved, any,
none), ``answer`` (answer id). A bad value is a 400 naming the parameter.
"""

from __future__ import annotations

import django_filters as filters
from django import forms
from django.db.models import Q

from audit.hooks import claim_escalation_filter
from audit.models import Answer, Claim, Evidence, VerificationRun
from audit.models.choices import Label, Mode, SourceType


def _canonical_choice(value, choices):
    """Return the choice whose value matches ``value`` in any letter case (else ``value`` unchanged)."""
    if not isinstance(value, str):
        return value
    for key, _ in choices:
        if str(key).lower() == value.strip().lower():
            return str(key)
    return value


class CaseInsensitiveChoices(filters.FilterSet):
    """A FilterSet whose choice parameters accept any letter case (``?label=nei``, ``?mode=Audit-Local``)."""

    def __init__(self, data=None, *args, **kwargs):
        if data is not None:
            data = data.copy()
            for name, flt in self.base_filters.items():
                choices = flt.extra.get("choices")
                if not choices or name not in data or callable(choices):
                    continue
                values = data.getlist(name) if hasattr(data, "getlist") else [data[name]]
                fixed = [
                    ",".join(_canonical_choice(part, choices) for part in str(v).split(",")) for v in values
                ]
                if hasattr(data, "setlist"):
                    data.setlist(name, fixed)
                else:
                    data[name] = fixed[0] if len(fixed) == 1 else fixed
        super().__init__(data, *args, **kwargs)


class CommaMultipleChoiceFilter(filters.MultipleChoiceFilter):
    """A multiple choice that also accepts ``label=REFUTED,NEI``."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", _CommaSeparated)
        super().__init__(*args, **kwargs)


class _CommaSeparated(forms.SelectMultiple):
    def value_from_datadict(self, data, files, name):
        values = data.getlist(name) if hasattr(data, "getlist") else [data.get(name)]
        return [part.strip() for value in values if value for part in str(value).split(",") if part.strip()]


class _DateRange(CaseInsensitiveChoices):
    date_from = filters.DateFilter(
        field_name="created_at", lookup_expr="date__gte", label="From (UTC day, inclusive)"
    )
    date_to = filters.DateFilter(
        field_name="created_at", lookup_expr="date__lte", label="To (UTC day, inclusive)"
    )


class ClaimFilter(CaseInsensitiveChoices):
    label = CommaMultipleChoiceFilter(choices=Label.choices)
    confidence_min = filters.NumberFilter(field_name="confidence", lookup_expr="gte")
    confidence_max = filters.NumberFilter(field_name="confidence", lookup_expr="lte")
    date_from = filters.DateFilter(field_name="answer__created_at", lookup_expr="date__gte")
    date_to = filters.DateFilter(field_name="answer__created_at", lookup_expr="date__lte")
    mode = filters.ChoiceFilter(field_name="answer__mode", choices=Mode.choices)
    domain = filters.CharFilter(field_name="answer__domain")
    escalation = filters.ChoiceFilter(
        choices=[
            ("open", "Open case"),
            ("resolved", "Resolved case"),
            ("any", "Ever escalated"),
            ("none", "Never escalated"),
        ],
        method="filter_escalation",
    )
    answer = filters.CharFilter(field_name="answer__public_id")

    class Meta:
        model = Claim
        fields: list[str] = []

    def filter_escalation(self, queryset, name, value):
        return queryset.filter(claim_escalation_filter(value)).distinct() if value else queryset

    def is_valid(self):
        valid = super().is_valid()
        data = getattr(self.form, "cleaned_data", {})
        for name in ("confidence_min", "confidence_max"):
            value = data.get(name)
            if value is not None and not 0 <= value <= 1:
                self.form.add_error(name, "Must be between 0 and 1.")
                valid = False
        low, high = data.get("confidence_min"), data.get("confidence_max")
        if valid and low is not None and high is not None and low > high:
            self.form.add_error("confidence_min", "Must not exceed confidence_max.")
            valid = False
        if valid and data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.form.add_error("date_from", "Must not be after date_to.")
            valid = False
        return valid


class AnswerFilter(_DateRange):
    mode = filters.ChoiceFilter(choices=Mode.choices)
    domain = filters.CharFilter()
    conversation_id = filters.CharFilter()

    class Meta:
        model = Answer
        fields: list[str] = []


class EvidenceFilter(CaseInsensitiveChoices):
    source_type = filters.ChoiceFilter(choices=SourceType.choices)
    answer = filters.CharFilter(field_name="claim__answer__public_id")
    claim_id = filters.CharFilter(field_name="claim__claim_id")

    class Meta:
        model = Evidence
        fields: list[str] = []


class RunFilter(CaseInsensitiveChoices):
    mode = filters.ChoiceFilter(choices=Mode.choices)
    kind = filters.ChoiceFilter(choices=VerificationRun.Kind.choices)
    status = filters.ChoiceFilter(choices=VerificationRun.Status.choices)
    answer = filters.CharFilter(field_name="answer__public_id")
    date_from = filters.DateFilter(field_name="started_at", lookup_expr="date__gte")
    date_to = filters.DateFilter(field_name="started_at", lookup_expr="date__lte")

    class Meta:
        model = VerificationRun
        fields: list[str] = []


class AnswerPageFilter(AnswerFilter):
    """The answer list page: the API's answer filters plus ``flagged`` and ``refuted`` (yes/no).

    Needs the annotations of ``audit.selectors.claims.answer_rows``. Flagged: a claim is not
    SUPPORTED or was escalated (what needs a person's eyes); refuted: a claim is REFUTED.
    """

    domain = filters.CharFilter(lookup_expr="iexact")
    flagged = filters.BooleanFilter(method="filter_flagged", label="Flagged")
    refuted = filters.BooleanFilter(method="filter_refuted", label="Has refuted claims")

    def filter_flagged(self, queryset, name, value):
        if value is None:
            return queryset
        needs_eyes = Q(has_doubt=True) | Q(escalated=True)
        return queryset.filter(needs_eyes) if value else queryset.exclude(needs_eyes)

    def filter_refuted(self, queryset, name, value):
        if value is None:
            return queryset
        return queryset.filter(has_refuted=value)

    def is_valid(self):
        valid = super().is_valid()
        data = getattr(self.form, "cleaned_data", {})
        if valid and data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.form.add_error("date_from", "Must not be after date_to.")
            valid = False
        return valid
