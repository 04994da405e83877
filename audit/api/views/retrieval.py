"""POST /api/v1/retrieve: the knowledge-base search with the pipeline's scoring (docs/SPEC_NOTES.md#evidence-and-retrieval)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import constants
from audit.api.parsers import StrictJSONParser
from audit.api.permissions import CanRead
from audit.api.serializers import (
    DayField,
    StrictCharField,
    StrictFloatField,
    StrictInputSerializer,
    StrictIntegerField,
)
from audit.api.views.common import CleanRequestMixin, request_workspace
from audit.selectors import api as selectors
from audit.selectors.retrieval import RetrievalFilters, kb_retrieve

# --- Retrieval (docs/SPEC_NOTES.md#evidence-and-retrieval) --------------------------------------------------------------------


class RetrieveApi(CleanRequestMixin, APIView):
    """Claim-focused retrieval from the workspace knowledge base, with freshness filters."""

    permission_classes = [CanRead]
    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="RetrieveInput")
    class InputSerializer(StrictInputSerializer):
        claim = StrictCharField(required=False, max_length=4000)
        query = StrictCharField(required=False, max_length=4000)
        domain = StrictCharField(required=False, allow_blank=True, max_length=64)
        top_k = StrictIntegerField(required=False, min_value=1, max_value=constants.RETRIEVE_MAX_TOP_K)
        max_age_months = StrictFloatField(
            required=False, min_value=0, max_value=constants.FRESHNESS_MONTHS_RANGE[1]
        )
        published_after = DayField(required=False)

        schema_extra = {"oneOf": [{"required": ["claim"]}, {"required": ["query"]}]}  # as validate

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("claim" in attrs) == ("query" in attrs):
                raise serializers.ValidationError({"claim": ["Send either claim or query (one of them)."]})
            return attrs

    @extend_schema_serializer(component_name="RetrievedPassage")
    class PassageSerializer(serializers.Serializer[Any]):
        id = serializers.CharField()
        document_id = serializers.IntegerField()
        title = serializers.CharField()
        uri = serializers.CharField()
        domain = serializers.CharField()
        published_at = serializers.DateField(allow_null=True)
        age_months = serializers.FloatField(allow_null=True)
        stale = serializers.BooleanField(allow_null=True)
        freshness_limit_months = serializers.IntegerField()
        score = serializers.FloatField()
        text = serializers.CharField()

    @extend_schema(
        request=InputSerializer,
        responses={
            200: inline_serializer(
                "RetrieveOutput",
                {
                    "kind": serializers.CharField(),
                    "text": serializers.CharField(),
                    "domain": serializers.CharField(),
                    "top_k": serializers.IntegerField(),
                    "results": PassageSerializer(many=True),
                },
            )
        },
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        workspace = request_workspace(request)
        kind = "claim" if "claim" in values else "query"
        top_k = values.get("top_k") or selectors.thresholds_for(workspace).retrieval_top_k
        filters = RetrievalFilters(
            domain=values.get("domain", "").strip(),
            max_age_months=values.get("max_age_months"),
            published_after=values.get("published_after"),
        )
        results = kb_retrieve(
            workspace=workspace,
            text=values[kind],
            is_claim=kind == "claim",
            top_k=top_k,
            filters=filters,
            now=timezone.now(),
        )
        return Response(
            {
                "kind": kind,
                "text": values[kind],
                "domain": filters.domain,
                "top_k": top_k,
                "results": self.PassageSerializer(results, many=True).data,
            }
        )
