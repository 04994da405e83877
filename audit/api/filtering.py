"""The API's list filters: django-filter's backend, strict about what the schema declares.

A query value that is empty for a parameter that is not text (a day, a number, a choice, a
boolean) is refused with a 400 naming it: the schema declares a day or a choice, and "" is
neither. The pages keep taking "" as "any" (their forms send empty fields). A range given the
wrong way round (``confidence_min`` above ``confidence_max``) is an empty result here, not an
error: each value is valid by the schema on its own.
"""

from __future__ import annotations

from django_filters.rest_framework import DjangoFilterBackend

from audit.web.filters import refuse_empty_values


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            refuse_empty_values(filterset_class, request.query_params)
        filterset = super().get_filterset(request, queryset, view)
        if filterset is not None:
            filterset.api = True
        return filterset
