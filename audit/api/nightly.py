"""API of the nightly batch auditor's reports (read only): latest, by date, history, exports."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.http import HttpResponse
from django.urls import re_path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.permissions import CanRead
from audit.models import NightlyReport
from audit.selectors.nightly import nightly_report_for_date, nightly_report_latest, nightly_report_list
from audit.services.workspaces import workspace_for_user
from audit.web.nightly_export import bundle_filename, bundle_zip, claims_csv

_DATE = OpenApiParameter(
    "date", OpenApiTypes.DATE, OpenApiParameter.PATH, description="The day, YYYY-MM-DD (UTC)"
)
_NOT_FOUND = OpenApiResponse(description="No report for that day in your workspace.")


@extend_schema_serializer(component_name="NightlyReport")
class ReportOutputSerializer(serializers.Serializer[Any]):
    workspace = serializers.CharField(source="workspace.slug")
    date = serializers.DateField()
    status = serializers.ChoiceField(choices=NightlyReport.Status.choices)
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField()
    claims_selected = serializers.IntegerField()
    claims_processed = serializers.IntegerField()
    labels_changed = serializers.IntegerField()
    review_recommended = serializers.IntegerField()
    duration_s = serializers.FloatField()
    claims_per_s = serializers.FloatField()
    report = serializers.JSONField()


def inline_results(item: type[serializers.Serializer[Any]]) -> serializers.Serializer[Any]:
    """The ``{"results": [...]}`` envelope of the history (for the schema)."""
    envelope: type[serializers.Serializer[Any]] = extend_schema_serializer(
        component_name="NightlyReportHistory"
    )(type("NightlyReportHistorySerializer", (serializers.Serializer,), {"results": item(many=True)}))
    return envelope()


def _report_of(request: Request, date: str) -> NightlyReport:
    try:
        day = dt.date.fromisoformat(date)
    except ValueError:
        raise ValidationError({"date": [f"must be a day written YYYY-MM-DD, not {date!r}"]}) from None
    report = nightly_report_for_date(workspace=workspace_for_user(request.user), day=day)
    if report is None:
        raise NotFound(f"There is no nightly report for {day.isoformat()}.")
    return report


class NightlyReportLatestApi(APIView):
    """The latest finished nightly report of the caller's workspace."""

    permission_classes = [CanRead]
    OutputSerializer = ReportOutputSerializer

    @extend_schema(
        operation_id="reports_nightly_latest", responses={200: ReportOutputSerializer, 404: _NOT_FOUND}
    )
    def get(self, request: Request) -> Response:
        report = nightly_report_latest(workspace=workspace_for_user(request.user))
        if report is None:
            raise NotFound("No nightly report has finished yet.")
        return Response(self.OutputSerializer(report).data)


class NightlyReportListApi(APIView):
    """Summaries of the caller's workspace's nightly reports, newest day first."""

    permission_classes = [CanRead]

    @extend_schema_serializer(component_name="NightlyReportSummary")
    class OutputSerializer(serializers.Serializer[Any]):
        date = serializers.DateField()
        status = serializers.CharField()
        claims_selected = serializers.IntegerField()
        claims_processed = serializers.IntegerField()
        labels_changed = serializers.IntegerField()
        review_recommended = serializers.IntegerField()
        claims_per_s = serializers.FloatField()

    @extend_schema(operation_id="reports_nightly_history", responses={200: inline_results(OutputSerializer)})
    def get(self, request: Request) -> Response:
        reports = nightly_report_list(workspace=workspace_for_user(request.user))[:365]
        return Response({"results": self.OutputSerializer(reports, many=True).data})


class NightlyReportDetailApi(APIView):
    """The nightly report of one day (``date`` is YYYY-MM-DD)."""

    permission_classes = [CanRead]
    OutputSerializer = ReportOutputSerializer

    @extend_schema(
        operation_id="reports_nightly_day",
        parameters=[_DATE],
        responses={
            200: ReportOutputSerializer,
            400: OpenApiResponse(description="date is not a day."),
            404: _NOT_FOUND,
        },
    )
    def get(self, request: Request, date: str) -> Response:
        return Response(self.OutputSerializer(_report_of(request, date)).data)


class NightlyReportBundleApi(APIView):
    """The day's report as a zip bundle: report.json and CSV tables."""

    permission_classes = [CanRead]

    @extend_schema(
        operation_id="reports_nightly_bundle",
        parameters=[_DATE],
        responses={(200, "application/zip"): OpenApiTypes.BINARY, 404: _NOT_FOUND},
    )
    def get(self, request: Request, date: str) -> HttpResponse:
        report = _report_of(request, date)
        body = bundle_zip(report, header=ReportOutputSerializer(report).data)
        response = HttpResponse(body, content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{bundle_filename(report)}"'
        return response


class NightlyReportClaimsCsvApi(APIView):
    """Every claim the day's run re-checked, as CSV (old and new label and confidence)."""

    permission_classes = [CanRead]

    @extend_schema(
        operation_id="reports_nightly_claims_csv",
        parameters=[_DATE],
        responses={(200, "text/csv"): OpenApiTypes.STR, 404: _NOT_FOUND},
    )
    def get(self, request: Request, date: str) -> HttpResponse:
        report = _report_of(request, date)
        response = HttpResponse(claims_csv(report), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="theoria-nightly-claims-{report.workspace.slug}-{report.date.isoformat()}.csv"'
        )
        return response


urlpatterns = [  # included by audit/api/urls.py; the trailing slash is optional
    re_path(r"^reports/nightly/?$", NightlyReportLatestApi.as_view(), name="nightly-report-latest"),
    re_path(r"^reports/nightly/history/?$", NightlyReportListApi.as_view(), name="nightly-report-list"),
    re_path(
        r"^reports/nightly/(?P<date>[^/]+)/bundle\.zip$",
        NightlyReportBundleApi.as_view(),
        name="nightly-report-bundle",
    ),
    re_path(
        r"^reports/nightly/(?P<date>[^/]+)/claims\.csv$",
        NightlyReportClaimsCsvApi.as_view(),
        name="nightly-report-claims-csv",
    ),
    re_path(
        r"^reports/nightly/(?P<date>[^/]+)/?$", NightlyReportDetailApi.as_view(), name="nightly-report-detail"
    ),
]
