from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from django_filters.rest_framework import DjangoFilterBackend, FilterSet
from rest_framework.views import APIView

from audit.web.filters import CaseInsensitiveChoices, refuse_empty_values


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset(self, request: HttpRequest, queryset: QuerySet[Any], view: APIView) -> FilterSet | None:
        # DRF passes its Request, whose ``GET`` is its ``query_params``
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            refuse_empty_values(filterset_class, request.GET)
        filterset = super().get_filterset(request, queryset, view)
        if isinstance(filterset, CaseInsensitiveChoices):
            filterset.api = True
        return filterset
