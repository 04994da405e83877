"""POST /api/v1/audits: one answer audited (or generated and audited), idempotent by key."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import constants
from audit.api.parsers import StrictJSONParser
from audit.api.permissions import CanSubmit
from audit.api.serializers import (
    AnswerSerializer,
    BackgroundJobSerializer,
    DayField,
    IdentifierField,
    NonBlankTextField,
    StrictCharField,
    StrictInputSerializer,
)
from audit.api.throttles import AuditThrottle
from audit.api.views.common import (
    IDEMPOTENCY_KEY_RE,
    CleanRequestMixin,
    request_fingerprint,
    request_workspace,
)
from audit.errors import InvalidInput
from audit.models import BackgroundJob
from audit.models.choices import Mode
from audit.selectors import api as selectors
from audit.services.submissions import AuditRequest, audit_submit_or_queue

# --- Audits -------------------------------------------------------------------------------------


class ContextInput(StrictInputSerializer):
    """A passage sent with an audit request."""

    id = IdentifierField(max_length=200)
    title = StrictCharField(required=False, allow_blank=True, max_length=500)
    uri = StrictCharField(required=False, allow_blank=True, max_length=2000)
    text = StrictCharField(trim_whitespace=False)
    published_at = DayField(required=False, allow_null=True)

    def validate_text(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("May not be blank.")
        return value


def audit_request_from(values: dict[str, Any]) -> AuditRequest:
    """Return the service's request of a validated ``AuditCreateApi.InputSerializer`` (API and answer form)."""
    contexts = [
        {**c, "published_at": c["published_at"].isoformat() if c.get("published_at") else None}
        for c in values.get("contexts", [])
    ]
    return AuditRequest(
        query=values["query"],
        answer=values.get("answer"),
        contexts=contexts,
        mode=values.get("mode", ""),
        conversation_id=values.get("conversation_id", ""),
        domain=values.get("domain", ""),
        reference=values.get("reference"),
        generation_mode=values.get("generation_mode", ""),
        verification_profile=values.get("verification_profile", ""),
        answer_json=values.get("answer_json"),
        deep=values.get("deep", ""),
    )


class AuditCreateApi(CleanRequestMixin, APIView):
    """Submit an answer of the RAG front end; verify it in the resolved mode."""

    permission_classes = [CanSubmit]
    throttle_classes = [AuditThrottle]
    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="AuditCreateInput")
    class InputSerializer(StrictInputSerializer):
        query = StrictCharField()
        answer = NonBlankTextField(required=False)
        contexts = serializers.ListField(child=ContextInput(), required=False, default=list)
        mode = serializers.ChoiceField(choices=Mode.choices, required=False)
        conversation_id = StrictCharField(required=False, allow_blank=True, max_length=200)
        domain = StrictCharField(required=False, allow_blank=True, max_length=64)
        reference = StrictCharField(required=False, allow_blank=True)
        generation_mode = serializers.ChoiceField(choices=constants.GENERATION_MODES, required=False)
        verification_profile = serializers.ChoiceField(
            choices=tuple(constants.VERIFICATION_PROFILES), required=False
        )
        deep = serializers.ChoiceField(
            choices=constants.DEEP_CHECKS,
            required=False,
            help_text="async: answer with the offline result now, run the LLM methods "
            "in a background deep check (GET /api/v1/runs/<id> shows it)",
        )
        answer_json = serializers.DictField(required=False)
        schema_extra = {"not": {"required": ["answer", "answer_json"]}}  # one of them (validate)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if "answer_json" in attrs and "answer" in attrs:
                raise serializers.ValidationError(
                    {"answer_json": ["Send either answer or answer_json (one of them)."]}
                )
            return attrs

        def validate_contexts(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
            limit = settings.THEORIA["API_MAX_CONTEXTS"]
            if len(value) > limit:
                raise serializers.ValidationError(f"At most {limit} contexts are allowed; got {len(value)}.")
            return value

    @extend_schema(
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="A retry with the same key and body returns the first result; "
                "the same key with another body is 409.",
            )
        ],
        responses={
            201: AnswerSerializer,
            202: OpenApiResponse(
                description="The audit's estimated cost is over the inline budget: it runs on the task "
                "queue; GET the job's url (also in Location) until its status is done, waiting as Retry-After says."
            ),
            400: OpenApiResponse(description="Bad input; the message names the field."),
            409: OpenApiResponse(description="Idempotency-Key reused with a different body."),
        },
    )
    def post(self, request: Request) -> Response:
        key = request.headers.get("Idempotency-Key", "")
        if key and not IDEMPOTENCY_KEY_RE.match(key):
            raise InvalidInput(
                "Idempotency-Key", "must be 1 to 255 printable ASCII characters without spaces."
            )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        audit_request = audit_request_from(data.validated_data)
        fingerprint = request_fingerprint(request.data) if key else ""  # a retry sends the same body
        workspace = request_workspace(request)
        submission = audit_submit_or_queue(
            workspace=workspace,
            user=request.user,
            idempotency_key=key,
            fingerprint=fingerprint,
            request=audit_request,
        )
        if isinstance(submission, BackgroundJob):  # over the inline cost budget: queued, poll its url
            body = BackgroundJobSerializer(submission).data  # a job just queued: poll it after Retry-After
            headers = {"Location": body["url"], "Retry-After": str(constants.JOB_POLL_RETRY_AFTER_S)}
            return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)
        answer = selectors.answer_detail_list(workspace=workspace).get(pk=submission.answer.pk)
        context = {  # what the request wrote: the cases its intake opened, how the mode was decided
            "escalations": submission.escalations,
            "mode_decision": submission.decision,
            "web": submission.web,
            "drafted": submission.drafted,
        }
        body = AnswerSerializer(answer, context=context).data
        headers = {"Idempotent-Replayed": "true"} if submission.replayed else {}
        return Response(body, status=status.HTTP_201_CREATED, headers=headers)
