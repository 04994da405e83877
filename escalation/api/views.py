"""Escalation queue API (mounted at /api/v1/): list, detail, manual intake and one POST per transition.

Views are thin: validate the input shape, fetch the case through the permission-checking
selector, call one service, serialize. Domain errors become responses in
:meth:`EscalationApi.handle_exception` (409 conflict / not allowed, 403 role, 400 naming the field).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import roles
from audit.api.throttles import CaseActionThrottle
from audit.errors import Missing
from audit.selectors.facade import claim_in_workspace, workspace_for_user
from audit.services.events import Actor, AnyUser
from audit.web.filters import refuse_empty_values
from escalation import policy, selectors, services
from escalation.models import ReviewCase


class EscalationApi(APIView):
    """Base: reads need a Theoria role, writes a reviewer role; domain errors map to HTTP in the
    project's one exception handler (``audit.api.exceptions``)."""

    write = False

    def check_permissions(self, request: Request) -> None:
        super().check_permissions(request)
        allowed = roles.can_review(request.user) if self.write else roles.can_read(request.user)
        if not allowed:
            raise exceptions.PermissionDenied(
                "your role may not " + ("act on" if self.write else "read") + " the escalation queue"
            )

    def get_case(self, ticket: str) -> ReviewCase:
        case = selectors.case_get(user=self.request.user, ticket=ticket)
        if case is None:
            raise Http404()
        return case


# --- output -------------------------------------------------------------------------------------


class CaseClaimSerializer(serializers.Serializer[Any]):
    answer_id = serializers.CharField(source="answer.public_id")
    claim_id = serializers.CharField()
    text = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.label; DRF moves it to _declared_fields
    machine_label = serializers.CharField()
    confidence = serializers.FloatField()
    importance = serializers.CharField()


class CaseOutputSerializer(serializers.Serializer[Any]):
    ticket = serializers.CharField()
    tier = serializers.IntegerField()
    tier_name = serializers.SerializerMethodField()
    status = serializers.CharField()
    sla_state = serializers.CharField()
    trigger = serializers.CharField()
    risk_score = serializers.FloatField()
    owner = serializers.CharField(source="owner.username", default=None)
    domain = serializers.CharField()
    summary = serializers.CharField()
    opened_at = serializers.DateTimeField()
    acknowledged_at = serializers.DateTimeField()
    clock = serializers.SerializerMethodField(
        help_text="The running clock: acknowledge (L1 until acknowledged) or resolve; null when none runs "
        "(paused, resolved). due_at and at_risk_at are its deadlines."
    )
    due_at = serializers.DateTimeField()
    at_risk_at = serializers.DateTimeField()
    paused_at = serializers.DateTimeField()
    resolved_at = serializers.DateTimeField()
    decision = serializers.CharField()
    version = serializers.IntegerField()
    claim = CaseClaimSerializer()

    def get_tier_name(self, case: ReviewCase) -> str:
        return policy.TIER_NAMES[case.tier]

    def get_clock(self, case: ReviewCase) -> str | None:
        return case.clock_phase if case.due_at is not None else None


class CaseEventSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField()
    tier = serializers.IntegerField()
    actor = serializers.CharField(source="actor_label")
    reason = serializers.CharField()
    details = serializers.JSONField()
    at = serializers.DateTimeField()


class CaseEvidenceSerializer(serializers.Serializer[Any]):
    source_type = serializers.CharField()
    source_id = serializers.CharField()
    title = serializers.CharField()
    uri = serializers.CharField()
    snippet = serializers.CharField()
    hash = serializers.CharField()
    relevance = serializers.FloatField()
    entailment = serializers.FloatField()


class CaseAnswerSerializer(serializers.Serializer[Any]):
    public_id = serializers.CharField()
    query = serializers.CharField()
    text = serializers.CharField()
    mode = serializers.CharField()
    domain = serializers.CharField()
    suppressed = serializers.BooleanField()


class CaseDetailOutputSerializer(CaseOutputSerializer):
    rationale = serializers.CharField()
    answer = CaseAnswerSerializer(source="claim.answer")
    evidence = CaseEvidenceSerializer(source="claim.evidence.all", many=True)
    events = CaseEventSerializer(source="events.all", many=True)
    curation_items = serializers.SerializerMethodField()

    def get_curation_items(self, case: ReviewCase) -> list[dict[str, Any]]:
        return [{"id": i.pk, "status": i.status, "reason": i.reason} for i in case.curation_items.all()]


def _paginated(
    item_serializer: type[serializers.Serializer[Any]], component: str
) -> type[serializers.Serializer[Any]]:
    """The page envelope of PageNumberPagination around ``item_serializer`` (for the schema)."""
    envelope: type[serializers.Serializer[Any]] = extend_schema_serializer(component_name=component)(
        type(
            f"{component}Serializer",
            (serializers.Serializer,),
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": item_serializer(many=True),
            },
        )
    )
    return envelope


def _detail(view: EscalationApi, ticket: str, status: int = 200) -> Response:
    return Response(CaseDetailOutputSerializer(view.get_case(ticket)).data, status=status)


# --- reads --------------------------------------------------------------------------------------


class CaseListApi(EscalationApi):
    """The queue in risk order (highest first, then the nearest deadline), filtered and paginated."""

    query_filterset = selectors.CaseFilter  # the schema's parameters (audit.api.schema)

    @extend_schema(
        parameters=[OpenApiParameter("page", int, description="A page number (1 or more).")],
        responses=_paginated(CaseOutputSerializer, "PaginatedCaseList"),
        operation_id="cases_list",
    )
    def get(self, request: Request) -> Response:
        refuse_empty_values(self.query_filterset, request.query_params)
        cases = selectors.case_list(user=request.user, filters=request.query_params, request=request)
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(cases, request, view=self)
        return paginator.get_paginated_response(CaseOutputSerializer(page, many=True).data)


class CaseDetailApi(EscalationApi):
    """One case with its claim, answer context, evidence, events and curation items."""

    @extend_schema(responses=CaseDetailOutputSerializer)
    def get(self, request: Request, ticket: str) -> Response:
        return _detail(self, ticket)


# --- writes -------------------------------------------------------------------------------------


class VersionedInput(serializers.Serializer[Any]):
    version = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**31 - 1,  # the column's range (a PositiveIntegerField)
        help_text="The case version you saw; a changed case answers 409.",
    )


class CaseTransitionApi(EscalationApi):
    """One POST per transition: validate ``InputSerializer``, call ``service``, return the case."""

    write = True
    throttle_classes = [CaseActionThrottle]
    InputSerializer = VersionedInput

    def perform(
        self, case: ReviewCase, actor: Actor, data: dict[str, Any]
    ) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def post(self, request: Request, ticket: str) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        case = self.get_case(ticket)
        version = values.pop("version", None)
        if version is not None:
            case.version = version  # the conditional update then refuses a case changed since
        self.perform(case, request.user, values)
        return _detail(self, ticket)


def _transition_view(
    name: str,
    input_fields: dict[str, Any],
    call: Callable[[ReviewCase, AnyUser, dict[str, Any]], Any],
    doc: str,
) -> type[CaseTransitionApi]:
    """Build the APIView of one transition (its nested InputSerializer and its service call)."""
    input_serializer = type(f"{name}InputSerializer", (VersionedInput,), dict(input_fields))

    @extend_schema(request=input_serializer, responses=CaseDetailOutputSerializer)
    def post(
        self: CaseTransitionApi, request: Request, ticket: str
    ) -> Response:  # its own function, so each view carries its own schema
        return CaseTransitionApi.post(self, request, ticket)

    return type(
        name,
        (CaseTransitionApi,),
        {
            "InputSerializer": input_serializer,
            "perform": lambda self, case, actor, data: call(case, actor, data),
            "post": post,
            "__doc__": doc,
        },
    )


def _reason(required: bool = True, **extra: Any) -> serializers.CharField:
    return serializers.CharField(
        max_length=5000, required=required, allow_blank=not required, trim_whitespace=True, **extra
    )


CaseAcknowledgeApi = _transition_view(
    "CaseAcknowledgeApi",
    {},
    lambda case, actor, data: services.case_acknowledge(case=case, actor=actor),
    "Acknowledge an open case (you become its owner unless it has one).",
)
CaseAssignApi = _transition_view(
    "CaseAssignApi",
    {"owner": serializers.CharField(max_length=150), "reason": _reason(required=False)},
    lambda case, actor, data: services.case_assign(
        case=case,
        actor=actor,
        owner=selectors.case_owner_candidate(case=case, username=data["owner"]),
        reason=data.get("reason", ""),
    ),
    "Assign or reassign a case to a reviewer (by username).",
)
CaseNoteApi = _transition_view(
    "CaseNoteApi",
    {"note": _reason()},
    lambda case, actor, data: services.case_note(case=case, actor=actor, note=data["note"]),
    "Add a note to a case.",
)
CaseEscalateApi = _transition_view(
    "CaseEscalateApi",
    {"reason": _reason()},
    lambda case, actor, data: services.case_escalate(case=case, actor=actor, reason=data["reason"]),
    "Escalate a case to the next tier (a note is required).",
)
CasePauseApi = _transition_view(
    "CasePauseApi",
    {"reason": _reason()},
    lambda case, actor, data: services.case_pause(case=case, actor=actor, reason=data["reason"]),
    "Pause the SLA clock while waiting on information.",
)
CaseResumeApi = _transition_view(
    "CaseResumeApi",
    {"reason": _reason(required=False)},
    lambda case, actor, data: services.case_resume(case=case, actor=actor, reason=data.get("reason", "")),
    "Resume a paused case's SLA clock.",
)
CaseResolveApi = _transition_view(
    "CaseResolveApi",
    {"decision": serializers.ChoiceField(choices=ReviewCase.Decision.choices), "rationale": _reason()},
    lambda case, actor, data: services.case_resolve(
        case=case, actor=actor, decision=data["decision"], rationale=data["rationale"]
    ),
    "Resolve a case with a decision and a rationale (the decision flows back to the claim).",
)
CaseReopenApi = _transition_view(
    "CaseReopenApi",
    {"reason": _reason()},
    lambda case, actor, data: services.case_reopen(case=case, actor=actor, reason=data["reason"]),
    "Reopen a resolved case.",
)


class CaseOpenApi(EscalationApi):
    """Escalate a claim by hand (a moderator): opens a tier-1 case."""

    write = True
    throttle_classes = [CaseActionThrottle]

    @extend_schema_serializer(component_name="CaseOpenInput")
    class InputSerializer(serializers.Serializer[Any]):
        answer_id = serializers.CharField(max_length=40)
        claim_id = serializers.CharField(max_length=16)
        reason = _reason()

    @extend_schema(request=InputSerializer, responses={201: CaseDetailOutputSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        claim = claim_in_workspace(
            workspace=workspace_for_user(request.user),
            answer_id=values["answer_id"],
            claim_id=values["claim_id"],
        )
        if claim is None:  # a row that does not exist (in this workspace): 404, as for a path
            raise Missing("claim_id", f"no claim {values['claim_id']} in answer {values['answer_id']}")
        case = services.case_open(claim=claim, actor=request.user, reason=values["reason"])
        return _detail(self, case.ticket, status=201)


class CurationListApi(EscalationApi):
    """Knowledge-base correction items (from review decisions and the nightly auditor), newest first."""

    @extend_schema_serializer(component_name="CurationItem")
    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.IntegerField()
        source = serializers.CharField()  # type: ignore[assignment]  # a field named like Field.source; DRF moves it to _declared_fields
        status = serializers.CharField()
        reason = serializers.CharField()
        ticket = serializers.CharField(source="case.ticket", default=None)
        claim_id = serializers.CharField(source="claim.claim_id", default=None)
        document = serializers.CharField(source="document.title", default=None)
        created_at = serializers.DateTimeField()
        closed_at = serializers.DateTimeField()

    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=["open", "done", "dismissed"])],
        responses=_paginated(OutputSerializer, "PaginatedCurationItemList"),
    )
    def get(self, request: Request) -> Response:
        status = request.query_params.get("status")  # an empty value is not one of the choices
        if status is not None and status not in ("open", "done", "dismissed"):
            raise exceptions.ValidationError({"status": ["status must be open, done or dismissed"]})
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(
            selectors.curation_list(user=request.user, status=status), request, view=self
        )
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
