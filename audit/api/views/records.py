"""Reads of answers, claims (Claim Cards), evidence and runs, scoped to the caller's workspace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    extend_schema,
)
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import hooks
from audit.api.parsers import StrictJSONParser
from audit.api.permissions import CanRead, CanReview
from audit.api.serializers import (
    AnswerSerializer,
    AnswerSummarySerializer,
    EvidenceSerializer,
    RunSerializer,
    StrictCharField,
    StrictInputSerializer,
)
from audit.api.views.common import CleanRequestMixin, Pagination, request_workspace
from audit.cards import ClaimCardSerializer
from audit.models import Answer, Claim, Evidence, VerificationRun
from audit.selectors import api as selectors
from audit.services.revision import answer_revision_decide
from audit.web.filters import AnswerFilter, ClaimFilter, EvidenceFilter, RunFilter

# --- Reads --------------------------------------------------------------------------------------


class _WorkspaceListApi(CleanRequestMixin, generics.ListAPIView[Any]):
    """A paginated, filtered list of the caller's workspace rows, read through ``selector``."""

    permission_classes = [CanRead]
    pagination_class = Pagination
    selector: ClassVar[Callable[..., QuerySet[Any]]]  # each list names its selector

    def get_queryset(self) -> QuerySet[Any]:
        if getattr(self, "swagger_fake_view", False):  # schema generation: the model, no query
            return super().get_queryset()
        return type(self).selector(workspace=request_workspace(self.request))


class AnswerListApi(_WorkspaceListApi):
    """List answers (newest first), filtered by mode, domain, conversation and date range."""

    queryset = Answer.objects.none()  # names the model for the schema; rows come from the selector
    serializer_class = AnswerSummarySerializer
    filterset_class = AnswerFilter
    selector = staticmethod(selectors.answer_list)


def with_escalations(
    serializer_class: type[serializers.Serializer[Any]], items: Any, *, many: bool = False, **context: Any
) -> Any:
    """Serialize answers or claims with their review cases loaded in one query."""
    rows = items if many else [items]
    claims = [claim for row in rows for claim in (row.claims.all() if isinstance(row, Answer) else [row])]
    context["escalations"] = hooks.claim_escalations(claim.pk for claim in claims)
    return serializer_class(items, many=many, context=context).data


class AnswerDetailApi(CleanRequestMixin, APIView):
    """One answer with its Claim Cards, audit metrics and escalations."""

    permission_classes = [CanRead]

    @extend_schema(responses={200: AnswerSerializer})
    def get(self, request: Request, answer_id: str) -> Response:
        answer = get_object_or_404(
            selectors.answer_detail_list(workspace=request_workspace(request)), public_id=answer_id
        )
        return Response(with_escalations(AnswerSerializer, answer))


class AnswerRevisionDecisionApi(CleanRequestMixin, APIView):
    """Accept or reject an answer's revision held for approval (a reviewer, with a reason).

    Accepting serves the proposed text; rejecting keeps the answer as received. The response is
    the answer (its ``revision.status`` accepted or rejected); 409 when the revision was already
    decided (``already_done`` when by the caller: a repeated request changes nothing).
    """

    permission_classes = [CanReview]
    parser_classes = [StrictJSONParser]

    class InputSerializer(StrictInputSerializer):
        decision = serializers.ChoiceField(choices=[("accept", "accept"), ("reject", "reject")])
        reason = StrictCharField(max_length=2000)

    @extend_schema(request=InputSerializer, responses={200: AnswerSerializer})
    def post(self, request: Request, answer_id: str) -> Response:
        answer = get_object_or_404(
            selectors.answer_detail_list(workspace=request_workspace(request)), public_id=answer_id
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        answer_revision_decide(answer=answer, actor=request.user, **data.validated_data)
        answer = selectors.answer_detail_list(workspace=request_workspace(request)).get(pk=answer.pk)
        return Response(with_escalations(AnswerSerializer, answer))


class ClaimListApi(_WorkspaceListApi):
    """List Claim Cards, filtered by label, confidence, date range, mode, domain, escalation state."""

    queryset = Claim.objects.none()  # names the model for the schema; rows come from the selector
    serializer_class = ClaimCardSerializer
    filterset_class = ClaimFilter
    selector = staticmethod(selectors.claim_card_list)

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(with_escalations(ClaimCardSerializer, page, many=True))


class ClaimDetailApi(CleanRequestMixin, APIView):
    """One Claim Card, by answer id and claim id (``c1``)."""

    permission_classes = [CanRead]

    @extend_schema(responses={200: ClaimCardSerializer})
    def get(self, request: Request, answer_id: str, claim_id: str) -> Response:
        claim = get_object_or_404(
            selectors.claim_card_list(workspace=request_workspace(request)),
            answer__public_id=answer_id,
            claim_id=claim_id,
        )
        return Response(with_escalations(ClaimCardSerializer, claim))


class EvidenceListApi(_WorkspaceListApi):
    """List evidence rows with full provenance, filtered by source type, answer and claim."""

    queryset = Evidence.objects.none()  # names the model for the schema; rows come from the selector
    serializer_class = EvidenceSerializer
    filterset_class = EvidenceFilter
    selector = staticmethod(selectors.evidence_list)


class RunListApi(_WorkspaceListApi):
    """List verification runs (interactive, nightly, re-runs) with their cost accounting."""

    queryset = VerificationRun.objects.none()  # names the model for the schema; rows come from the selector
    serializer_class = RunSerializer
    filterset_class = RunFilter
    selector = staticmethod(selectors.run_list)


class RunDetailApi(CleanRequestMixin, generics.RetrieveAPIView[VerificationRun]):
    """One verification run of the caller's workspace; ``deep_checks`` shows an asynchronous deep
    check's progress (queued, running with methods done of total, done with its relabels, failed)."""

    permission_classes = [CanRead]
    serializer_class = RunSerializer

    def get_queryset(self) -> QuerySet[VerificationRun]:
        return selectors.run_list(workspace=request_workspace(self.request))
