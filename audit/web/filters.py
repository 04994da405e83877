"""FilterSets of claim, answer, evidence and run lists: one definition for the API and the pages.

Query parameters: ``q`` (text search, blind to accents and case: PostgreSQL full-text search in
English, websearch syntax; every word as a substring on other databases), ``label`` (SUPPORTED, REFUTED, NEI; repeat or comma-separate for several),
``confidence_min`` / ``confidence_max`` (inclusive, 0..1), ``date_from`` / ``date_to``
(inclusive UTC days of the answer), ``mode``, ``domain``, ``escalation`` (open, resolved, any,
none), ``answer`` (answer id). A bad value is a 400 naming the parameter.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import django_filters as filters
from django import forms
from django.core.exceptions import ValidationError
from django.db import connections
from django.db.models import F, Q

from audit.hooks import claim_escalation_filter
from audit.models import Answer, Claim, Evidence, VerificationRun
from audit.models.choices import Label, Mode, SourceType
from audit.pipeline.text import fold


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

    api = False  # True when the API's filter backend built it (audit/api/filtering.py)

    def __init__(self, data: Any = None, *args: Any, **kwargs: Any) -> None:
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


class _StrictBooleanField(forms.NullBooleanField):
    """true/false (also 1/0, yes/no, any letter case); empty is no filter; anything else is an error."""

    widget = forms.TextInput
    TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")

    def to_python(self, value):
        text = str(value).strip().lower() if value is not None else ""
        if text in self.TRUE:
            return True
        if text in self.FALSE:
            return False
        if text:
            raise forms.ValidationError("Give true or false.", code="invalid")
        return None

    def validate(self, value):
        return None


class _UtcDateTimeField(filters.fields.IsoDateTimeField):
    """An ISO 8601 moment, turned into UTC: PostgreSQL refuses an offset past 15:59 that Python
    reads (``-17:33``), and a moment that leaves the calendar in UTC is an error, not a 500."""

    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None or moment.tzinfo is None:
            return moment
        try:
            return moment.astimezone(dt.UTC)
        except OverflowError:
            raise forms.ValidationError("Is out of range once in UTC.", code="invalid") from None


class UtcDateTimeFilter(filters.IsoDateTimeFilter):
    field_class = _UtcDateTimeField


class StrictBooleanFilter(filters.BooleanFilter):
    """A boolean parameter that refuses what is not a boolean (``relabelled=null`` is a 400)."""

    field_class = _StrictBooleanField


class BoundedNumberFilter(filters.NumberFilter):
    """A number parameter with an inclusive range: the form refuses a value outside it, and the API
    schema declares the same bounds (one definition)."""

    def __init__(self, *args, minimum: float, maximum: float, **kwargs):
        from drf_spectacular.drainage import set_override

        def within(value):
            if value is not None and not minimum <= value <= maximum:
                raise forms.ValidationError(f"Must be between {minimum} and {maximum}.", code="range")

        kwargs.setdefault("validators", [within])
        super().__init__(*args, **kwargs)
        set_override(self, "field", {"type": "number", "minimum": minimum, "maximum": maximum})


def refuse_empty_values(filterset_class, query_params) -> None:
    """Raise a 400 naming each parameter of ``filterset_class`` given as "" that is not text."""
    empty = [
        name
        for name, flt in filterset_class.base_filters.items()
        if not isinstance(flt, filters.CharFilter)
        and name in query_params
        and any(value == "" for value in query_params.getlist(name))
    ]
    if empty:
        raise ValidationError({name: ["May not be empty."] for name in empty})


def text_search(queryset, value: str):
    """Rows whose searched fields (the model's ``SEARCH_SOURCES``) match the words of ``value``,
    blind to accents and case: the query is folded as the stored ``search_text`` is
    (``audit.pipeline.text.fold``), so "lomo" finds "Lømo".

    On PostgreSQL: full-text search (English stemming, web-search syntax: quoted phrases, ``or``,
    ``-word``) over ``search_text``, served by its GIN index (migration 0014). Elsewhere (SQLite):
    every word must occur in ``search_text``.
    """
    value = fold((value or "").strip())
    if not value:
        return queryset
    if connections[queryset.db].vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchVector

        return queryset.annotate(_search=SearchVector("search_text", config="english")).filter(
            _search=SearchQuery(value, search_type="websearch", config="english")
        )
    words = [w.strip("\"'") for w in value.split() if w.strip("\"'")]
    return queryset.filter(*[Q(search_text__contains=word) for word in words])


class _DateRange(CaseInsensitiveChoices):
    date_from = filters.DateFilter(
        field_name="created_at", lookup_expr="date__gte", label="From (UTC day, inclusive)"
    )
    date_to = filters.DateFilter(
        field_name="created_at", lookup_expr="date__lte", label="To (UTC day, inclusive)"
    )


class ClaimFilter(CaseInsensitiveChoices):
    q = filters.CharFilter(method="filter_text", label="Search", max_length=200)
    label = CommaMultipleChoiceFilter(choices=Label.choices)
    machine_label = CommaMultipleChoiceFilter(choices=Label.choices, label="The machine's label")
    confidence_min = BoundedNumberFilter(field_name="confidence", lookup_expr="gte", minimum=0, maximum=1)
    confidence_max = BoundedNumberFilter(field_name="confidence", lookup_expr="lte", minimum=0, maximum=1)
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
    relabelled = StrictBooleanFilter(
        method="filter_relabelled",
        label="Relabelled by a reviewer",
        help_text="The label differs from the machine's.",
    )

    class Meta:
        model = Claim
        fields: list[str] = []

    def filter_text(self, queryset, name, value):
        return text_search(queryset, value)

    def filter_relabelled(self, queryset, name, value):
        if value is None:
            return queryset
        differs = ~Q(label=F("machine_label"))
        return queryset.filter(differs) if value else queryset.exclude(differs)

    def filter_escalation(self, queryset, name, value):
        return queryset.filter(claim_escalation_filter(value)).distinct() if value else queryset

    def is_valid(self):
        valid = super().is_valid()
        data = getattr(self.form, "cleaned_data", {})
        if self.api:  # the API: a range the wrong way round is an empty result
            return valid
        low, high = data.get("confidence_min"), data.get("confidence_max")
        if low is not None and high is not None and low > high:
            self.form.add_error("confidence_min", "Must not exceed confidence_max.")
            valid = False
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.form.add_error("date_from", "Must not be after date_to.")
            valid = False
        return valid


class AnswerFilter(_DateRange):
    q = filters.CharFilter(method="filter_text", label="Search", max_length=200)
    mode = filters.ChoiceFilter(choices=Mode.choices)
    domain = filters.CharFilter()
    conversation_id = filters.CharFilter()
    suppressed = StrictBooleanFilter(label="Suppressed by compliance")

    class Meta:
        model = Answer
        fields: list[str] = []

    def filter_text(self, queryset, name, value):
        return text_search(queryset, value)


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
        if data.get("date_from") and data.get("date_to") and data["date_from"] > data["date_to"]:
            self.form.add_error("date_from", "Must not be after date_to.")
            valid = False
        return valid
