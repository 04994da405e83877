"""GET /api/v1/jobs/<id>: a job a request queued (an audit over the inline cost budget, a document
upload's ingestion), with its status, progress and, when done, what it produced. A job not yet
finished answers with ``Retry-After`` (``JOB_POLL_RETRY_AFTER_S``): when to poll again."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import constants
from audit.api.permissions import CanRead
from audit.api.serializers import BackgroundJobSerializer
from audit.api.views.common import CleanRequestMixin, request_workspace
from audit.models import BackgroundJob, BackgroundJobStatus
from audit.selectors import api as selectors


def job_response(job: BackgroundJob, status: int = 200) -> Response:
    """A job's body; a job still queued or running adds ``Retry-After``, and a 202 the job's
    ``Location``."""
    body = BackgroundJobSerializer(job).data
    headers = {"Location": body["url"]} if status == 202 else {}
    if job.status in (BackgroundJobStatus.QUEUED, BackgroundJobStatus.RUNNING):
        headers["Retry-After"] = str(constants.JOB_POLL_RETRY_AFTER_S)
    return Response(body, status=status, headers=headers)


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
        return job_response(job)
