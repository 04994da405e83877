"""What the verifier learns from its reviewers: reviewed examples (list, JSONL export) and the
workspace's calibration (versions, a refit, a rollback). Scoped to the caller's workspace."""

from __future__ import annotations

from typing import Any

import django_filters
from django.db import transaction
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.parsers import StrictJSONParser
from audit.api.permissions import CanChangeSettings, CanRead
from audit.api.views.common import CleanRequestMixin, Pagination, request_workspace
from audit.api.views.exports import IgnoreFormatNegotiation
from audit.models import CalibrationVersion, ReviewedExample
from audit.models.choices import Label
from audit.selectors.learning import (
    benchmark_rows,
    calibration_state,
    examples_for_calibration,
    readiness,
    reviewed_example_list,
)
from audit.services.calibration import calibration_activate, calibration_queue
from audit.web.exports import iter_jsonl
from audit.web.filters import UtcDateTimeFilter


class ReviewedExampleFilter(django_filters.FilterSet):
    """Filters of the reviewed-example list and its export."""

    source = django_filters.ChoiceFilter(choices=ReviewedExample.Source.choices)
    decision = django_filters.ChoiceFilter(choices=ReviewedExample.Decision.choices)
    reviewer_label = django_filters.ChoiceFilter(choices=Label.choices)
    domain = django_filters.CharFilter(lookup_expr="iexact")
    decided_after = UtcDateTimeFilter(field_name="decided_at", lookup_expr="gte")
    decided_before = UtcDateTimeFilter(field_name="decided_at", lookup_expr="lt")

    class Meta:
        model = ReviewedExample
        fields = ["source", "decision", "reviewer_label", "domain"]


class ReviewedExampleSerializer(serializers.ModelSerializer[Any]):
    """A reviewer's decision as a labelled example: what was judged, what the machine said, what the reviewer said."""

    answer_id = serializers.CharField(source="claim.answer.public_id")
    claim_id = serializers.CharField(source="claim.claim_id")
    reviewer = serializers.CharField(source="reviewer_name")

    class Meta:
        model = ReviewedExample
        fields = [
            "id",
            "source",
            "decision",
            "reference",
            "answer_id",
            "claim_id",
            "domain",
            "claim_text",
            "evidence",
            "machine_label",
            "machine_confidence",
            "machine_logit",
            "judge",
            "judge_version",
            "calibration_version",
            "reviewer_label",
            "reviewer",
            "rationale",
            "decided_at",
        ]


class ReviewedExampleListApi(CleanRequestMixin, generics.ListAPIView[ReviewedExample]):
    """List the workspace's reviewed examples (newest first): every case resolution and revision review."""

    permission_classes = [CanRead]
    pagination_class = Pagination
    serializer_class = ReviewedExampleSerializer
    filterset_class = ReviewedExampleFilter
    queryset = ReviewedExample.objects.none()  # names the model; rows come from the selector

    def get_queryset(self) -> QuerySet[ReviewedExample]:
        if getattr(self, "swagger_fake_view", False):
            return ReviewedExample.objects.none()
        return reviewed_example_list(workspace=request_workspace(self.request))


class ReviewedExampleExportApi(CleanRequestMixin, generics.GenericAPIView[ReviewedExample]):
    """Download the reviewed examples (same filters as the list) as JSONL in the benchmark claim format."""

    permission_classes = [CanRead]
    filterset_class = ReviewedExampleFilter
    content_negotiation_class = IgnoreFormatNegotiation
    pagination_class = None
    serializer_class = ReviewedExampleSerializer
    queryset = ReviewedExample.objects.none()

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.STR})
    def get(self, request: Request) -> StreamingHttpResponse:
        workspace = request_workspace(request)
        queryset = self.filter_queryset(reviewed_example_list(workspace=workspace))
        response = StreamingHttpResponse(
            iter_jsonl(benchmark_rows(workspace=workspace, queryset=queryset)),
            content_type="application/x-ndjson; charset=utf-8",
        )
        name = f"reviewed-examples-{workspace.slug}-{timezone.now():%Y%m%dT%H%M%SZ}.jsonl"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


class CalibrationVersionSerializer(serializers.ModelSerializer[Any]):
    class Meta:
        model = CalibrationVersion
        fields = [
            "number",
            "status",
            "judge",
            "judge_version",
            "depth",
            "params",
            "metrics",
            "n_examples",
            "fitted_at",
            "fitted_by",
        ]


class CalibrationApi(CleanRequestMixin, APIView):
    """The workspace's calibration: the one in force, the reviewed examples it can learn from, every version."""

    permission_classes = [CanRead]

    @extend_schema_serializer(component_name="CalibrationState")
    class OutputSerializer(serializers.Serializer[Any]):
        in_force = serializers.DictField(allow_null=True)
        applies = serializers.BooleanField()
        judge = serializers.CharField()
        depth = serializers.CharField()
        examples = serializers.IntegerField()
        examples_supported = serializers.IntegerField()
        examples_needed = serializers.IntegerField()
        versions = CalibrationVersionSerializer(many=True)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(calibration_state(request_workspace(request))).data)


class CalibrationRunApi(CleanRequestMixin, APIView):
    """Queue a refit of the workspace's calibration (``manage.py calibrate``); its version appears in GET /calibration."""

    permission_classes = [CanChangeSettings]

    @extend_schema_serializer(component_name="CalibrationQueued")
    class OutputSerializer(serializers.Serializer[Any]):
        status = serializers.CharField()
        examples = serializers.IntegerField()
        examples_needed = serializers.IntegerField()
        message = serializers.CharField()

    @extend_schema(request=None, responses={202: OutputSerializer, 200: OutputSerializer})
    def post(self, request: Request) -> Response:
        workspace = request_workspace(request)
        n, _supported, needed = readiness(examples_for_calibration(workspace=workspace))
        if needed:
            body = {
                "status": "needs_more",
                "examples": n,
                "examples_needed": needed,
                "message": f"{needed} more reviewed decisions are needed before a calibration can be fitted.",
            }
            return Response(self.OutputSerializer(body).data, status=status.HTTP_200_OK)
        with transaction.atomic():
            calibration_queue(workspace=workspace, actor=request.user)
        body = {
            "status": "queued",
            "examples": n,
            "examples_needed": 0,
            "message": "The refit is queued; GET /api/v1/calibration shows its version when it is done.",
        }
        return Response(self.OutputSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class CalibrationRollbackApi(CleanRequestMixin, APIView):
    """Put an earlier calibration version back in force, or none (``"version": null``)."""

    permission_classes = [CanChangeSettings]
    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="CalibrationRollbackInput")
    class InputSerializer(serializers.Serializer[Any]):
        version = serializers.IntegerField(min_value=1, max_value=2_147_483_647, allow_null=True)
        reason = serializers.CharField(required=False, allow_blank=True, max_length=2000)

    @extend_schema(request=InputSerializer, responses={200: CalibrationApi.OutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = calibration_activate(
            workspace=request_workspace(request),
            number=data.validated_data["version"],
            actor=request.user,
            reason=data.validated_data.get("reason", ""),
        )
        return Response(CalibrationApi.OutputSerializer(calibration_state(workspace)).data)
