"""Claim Card exports: the filtered list and the daily bundle, streamed as CSV or JSON."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import generics, serializers
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from audit.api.permissions import CanRead
from audit.api.views.common import EXPORT_BATCH, CleanRequestMixin, QueryInputSerializer, request_workspace
from audit.api.views.records import with_escalations
from audit.cards import ClaimCardSerializer
from audit.errors import InvalidInput
from audit.models import Claim
from audit.selectors import api as selectors
from audit.web import exports
from audit.web.filters import ClaimFilter

# --- Exports ------------------------------------------------------------------------------------


class IgnoreFormatNegotiation(BaseContentNegotiation):
    """Exports read ``?format=`` themselves; errors are always JSON."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def _card_stream(queryset: QuerySet[Claim]) -> Iterator[dict[str, Any]]:
    """Yield Claim Card dicts in batches (one escalation query per batch)."""
    iterator = queryset.iterator(chunk_size=EXPORT_BATCH)
    while batch := list(itertools.islice(iterator, EXPORT_BATCH)):
        yield from with_escalations(ClaimCardSerializer, batch, many=True)


def _export_response(queryset: QuerySet[Claim], fmt: str, filename: str) -> StreamingHttpResponse:
    if fmt == "csv":
        response = StreamingHttpResponse(
            exports.iter_csv(_card_stream(queryset)), content_type="text/csv; charset=utf-8"
        )
    else:
        response = StreamingHttpResponse(
            exports.iter_json(_card_stream(queryset)), content_type="application/json"
        )
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


def _export_format(request: Request) -> str:
    fmt = request.query_params.get("format", "csv")
    if fmt not in ("csv", "json"):
        raise InvalidInput("format", f'"{fmt}" is not an export format; use csv or json.')
    return fmt


_FORMAT_PARAM = OpenApiParameter(
    "format", OpenApiTypes.STR, enum=["csv", "json"], description="csv (default) or json"
)


class ClaimCardExportApi(CleanRequestMixin, generics.GenericAPIView[Claim]):
    """Stream any filtered set of Claim Cards as CSV or JSON (same filters as /claims)."""

    permission_classes = [CanRead]
    filterset_class = ClaimFilter
    content_negotiation_class = IgnoreFormatNegotiation
    pagination_class = None  # the whole filtered set, streamed (the schema must not promise a page envelope)
    serializer_class = ClaimCardSerializer
    queryset = Claim.objects.none()  # the real one comes from the selector; this names the model

    @extend_schema(
        parameters=[_FORMAT_PARAM],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/json"): ClaimCardSerializer(many=True),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        fmt = _export_format(request)
        queryset = self.filter_queryset(selectors.claim_card_list(workspace=request_workspace(request)))
        return _export_response(queryset, fmt, f"claim-cards-{timezone.now():%Y%m%dT%H%M%SZ}")


class ClaimCardDailyBundleApi(CleanRequestMixin, APIView):
    """The day's bundle of low-confidence claims (docs/SPEC_NOTES.md#nightly-auditor): REFUTED / NEI below 0.60."""

    permission_classes = [CanRead]
    content_negotiation_class = IgnoreFormatNegotiation

    @extend_schema_serializer(component_name="ClaimCardDailyBundleInput")
    class InputSerializer(QueryInputSerializer):
        date = serializers.DateField(required=False, help_text="UTC day (default: today)")
        threshold = serializers.FloatField(
            required=False,
            min_value=0.0,
            max_value=1.0,
            help_text="default: the workspace's low_confidence_threshold",
        )

    @extend_schema(
        parameters=[_FORMAT_PARAM, InputSerializer],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/json"): ClaimCardSerializer(many=True),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        fmt = _export_format(request)
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        day = data.validated_data.get("date") or timezone.now().date()
        queryset = selectors.low_confidence_claims(
            workspace=request_workspace(request), day=day, threshold=data.validated_data.get("threshold")
        )
        return _export_response(queryset, fmt, f"low-confidence-claims-{day:%Y-%m-%d}")
