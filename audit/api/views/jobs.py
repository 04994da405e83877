"""GET /api/v1/jobs/<id>: a job a request queued (an audit over the inline cost budget, a document
upload's ingestion), with its status, progress and, when done, what it produced."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.generics import get_object_or_404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.api.permissions import CanRead
from audit.api.views.common import CleanRequestMixin, request_workspace
from audit.models import BackgroundJob
from audit.selectors import api as selectors


def job_body(job: BackgroundJob, request: Request) -> dict[str, Any]:
    """What the 202 of a queued request and every poll of its job answer."""
    url = reverse("api-job-detail", kwargs={"pk": job.pk})
    body: dict[str, Any] = {
        "job": job.pk,
        "kind": job.kind,
        "status": job.status,
        "url": url,
        "progress": job.progress,
        "created_at": job.created_at.isoformat(),
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
        "result": job.result,
        "error": job.error or None,
        "error_status": job.error_status,
        "answer": None,
        "answer_url": None,
    }
    if job.answer_id is not None and job.answer is not None:
        body["answer"] = job.answer.public_id
        body["answer_url"] = reverse("api-answer-detail", kwargs={"answer_id": job.answer.public_id})
    return body


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
        return Response(job_body(job, request))
