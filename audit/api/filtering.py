"""The API's list filters: django-filter's backend, strict about what the schema declares.

A query value that is empty for a parameter that is not text (a day, a number, a choice, a
boolean) is refused with a 400 naming it: the schema declares a day or a choice, and "" is
neither. The pages keep taking "" as "any" (their forms send empty fields). A range given the
wrong way round (``confidence_min`` above ``confidence_max``) is an empty result here, not an
error: each value is valid by the schema on its own. The filters themselves are the pages' (one
definition, ``audit.web.filters``); the backend marks those it builds as the API's.

May import: ``audit.web.filters`` (the FilterSets shared with the pages) and the shared
foundations; never a service or a model directly (the views hand it their querysets).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django_filters.rest_framework import DjangoFilterBackend, FilterSet
from rest_framework.request import Request
from rest_framework.views import APIView

from audit.web.filters import CaseInsensitiveChoices, refuse_empty_values


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset(self, request: HttpRequest, queryset: QuerySet[Any], view: APIView) -> FilterSet | None:
        # django-filter's stubs type the request as Django's; DRF hands every backend its own Request
        assert isinstance(request, Request), "the API's filter backend runs only inside DRF views"
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            refuse_empty_values(filterset_class, request.query_params)
        filterset = super().get_filterset(request, queryset, view)
        if isinstance(filterset, CaseInsensitiveChoices):
            filterset.api = True
        return filterset
