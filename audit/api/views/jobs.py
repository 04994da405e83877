"""GET /api/v1/jobs/<id>: a job a request queued (an audit over the inline cost budget, a document
upload's ingestion), with its status, progress and, when done, what it produced."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.permissions import CanRead
from audit.api.serializers import BackgroundJobSerializer
from audit.api.views.common import CleanRequestMixin, request_workspace
from audit.selectors import api as selectors


class BackgroundJobDetailApi(CleanRequestMixin, APIView):
    """One queued job of the caller's workspace (another workspace's job: 404)."""

    permission_classes = [CanRead]

    @extend_schema(
        responses={
            200: OpenApiTypes.OBJECT,
            404: OpenApiResponse(description="No such job in your workspace."),
        }
    )
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(selectors.background_job_list(workspace=request_workspace(request)), pk=pk)
        return Response(BackgroundJobSerializer(job).data)
