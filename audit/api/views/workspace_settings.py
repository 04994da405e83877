"""Settings: the workspace's mode toggles and thresholds, a user's or a conversation's mode, the mode preview."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.contrib.auth.models import User
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import constants, roles
from audit.api.parsers import StrictJSONParser
from audit.api.permissions import CanChangeSettings, CanRead
from audit.api.schema import threshold_overrides_schema
from audit.api.serializers import (
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
)
from audit.api.views.common import CleanRequestMixin, QueryInputSerializer, request_workspace
from audit.models import Conversation, UserProfile, Workspace
from audit.models.choices import CitationOnlyRevisions, Mode, RevisionApproval
from audit.pipeline.web.fetch import ALLOWED_DOMAIN_PATTERN
from audit.selectors import api as selectors
from audit.selectors.llm import llm_status
from audit.services import modes
from audit.services.workspaces import workspace_member

# --- Settings (mode toggles and thresholds) --------------------------------------------------------


def _read_or_admin(request: Request) -> list[BasePermission]:
    return [CanRead()] if request.method in ("GET", "HEAD", "OPTIONS") else [CanChangeSettings()]


@extend_schema_field({"type": "string", "maxLength": 253, "pattern": ALLOWED_DOMAIN_PATTERN})
class AllowedDomainField(StrictCharField):
    """A web allow-list entry: checked by ``modes.workspace_settings_check``
    (``allowed_domain_problem``), its shape declared from ``ALLOWED_DOMAIN_PATTERN``."""


class WorkspaceSettingsApi(CleanRequestMixin, APIView):
    """The workspace's default mode, automatic triggers and web switch; admins change them."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="WorkspaceSettingsOutput")
    class OutputSerializer(serializers.Serializer[Any]):
        slug = serializers.CharField()
        name = serializers.CharField()
        default_mode = serializers.CharField()
        regulated_domains = serializers.ListField(child=serializers.CharField())
        auto_audit_roles = serializers.ListField(child=serializers.CharField())
        allow_external_calls = serializers.BooleanField()
        web_allowed_domains = serializers.ListField(child=serializers.CharField())
        freshness_policy = serializers.DictField(child=serializers.IntegerField())
        retention_days = serializers.IntegerField()
        llm_token_budget = serializers.IntegerField()
        revision_approval = serializers.ChoiceField(choices=RevisionApproval.choices)
        revision_approval_domains = serializers.ListField(child=serializers.CharField())
        citation_only_revisions = serializers.ChoiceField(choices=CitationOnlyRevisions.choices)
        threshold_overrides = serializers.DictField()
        llm = serializers.SerializerMethodField(
            help_text="The LLM endpoint and its circuit breaker in this process (docs/LLM.md)."
        )

        def get_llm(self, workspace: Workspace) -> dict[str, Any]:
            return llm_status(workspace=workspace)

    @extend_schema_serializer(component_name="WorkspaceSettingsInput")
    class InputSerializer(StrictInputSerializer):
        default_mode = serializers.ChoiceField(choices=Mode.choices, required=False)
        regulated_domains = serializers.ListField(child=StrictCharField(max_length=64), required=False)
        auto_audit_roles = serializers.ListField(
            child=serializers.ChoiceField(choices=roles.ALL_ROLES), required=False
        )
        allow_external_calls = StrictBooleanField(required=False)
        web_allowed_domains = serializers.ListField(child=AllowedDomainField(max_length=253), required=False)
        freshness_policy = serializers.DictField(
            child=serializers.IntegerField(
                min_value=constants.FRESHNESS_MONTHS_RANGE[0], max_value=constants.FRESHNESS_MONTHS_RANGE[1]
            ),
            required=False,
        )
        retention_days = serializers.IntegerField(
            min_value=constants.RETENTION_DAYS_RANGE[0],
            max_value=constants.RETENTION_DAYS_RANGE[1],
            required=False,
        )
        llm_token_budget = serializers.IntegerField(
            min_value=0, max_value=constants.LLM_TOKEN_BUDGET_MAX, required=False
        )
        revision_approval = serializers.ChoiceField(
            choices=RevisionApproval.choices,
            required=False,
            help_text="serve: revisions are served at once; regulated: held for approval in regulated "
            "domains (or those of revision_approval_domains); all: every revision is held.",
        )
        revision_approval_domains = serializers.ListField(
            child=StrictCharField(max_length=64), required=False
        )
        citation_only_revisions = serializers.ChoiceField(
            choices=CitationOnlyRevisions.choices,
            required=False,
            help_text="Where revisions are held, one that changes only citations is: hold: held too; "
            "unregulated (default): served at once outside regulated domains; serve: served at once.",
        )

    def get_permissions(self) -> list[BasePermission]:
        return _read_or_admin(self.request)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(request_workspace(request)).data)

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def patch(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        for key in ("regulated_domains", "web_allowed_domains", "revision_approval_domains"):
            if key in values:
                values[key] = sorted({v.strip().lower() for v in values[key] if v.strip()})
        workspace = modes.workspace_settings_update(
            workspace=request_workspace(request), actor=request.user, **values
        )
        return Response(self.OutputSerializer(workspace).data)


@extend_schema_field(threshold_overrides_schema())
class ThresholdOverridesField(serializers.DictField):
    """Threshold overrides: checked by ``modes.thresholds_check``, declared from the same ranges."""


class ThresholdsApi(CleanRequestMixin, APIView):
    """The workspace's verification thresholds: seed defaults, overrides and what is in force."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="ThresholdsInput")
    class InputSerializer(StrictInputSerializer):
        threshold_overrides = ThresholdOverridesField()

    @extend_schema_serializer(component_name="ThresholdsOutput")
    class OutputSerializer(serializers.Serializer[Any]):
        defaults = serializers.DictField()
        overrides = serializers.DictField()
        effective = serializers.DictField()

    def get_permissions(self) -> list[BasePermission]:
        return _read_or_admin(self.request)

    def _body(self, workspace: Workspace) -> dict[str, Any]:
        return {
            "defaults": asdict(constants.Thresholds()),
            "overrides": workspace.threshold_overrides or {},
            "effective": asdict(selectors.thresholds_for(workspace)),
        }

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request) -> Response:
        return Response(self._body(request_workspace(request)))

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def put(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = modes.thresholds_set(
            workspace=request_workspace(request),
            actor=request.user,
            overrides=data.validated_data["threshold_overrides"],
        )
        return Response(self._body(workspace))


class _ModeInput(StrictInputSerializer):
    default_mode = serializers.ChoiceField(choices=[("", "Inherit"), *Mode.choices], allow_blank=True)


class UserModeApi(CleanRequestMixin, APIView):
    """A user's default mode ("" inherits the workspace's)."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="UserModeOutput")
    class OutputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField()
        default_mode = serializers.CharField(allow_blank=True)

    def get_permissions(self) -> list[BasePermission]:
        return _read_or_admin(self.request)

    def _user(self, request: Request, username: str) -> User:
        """The user, when in the caller's workspace (users without a profile are in the default one)."""
        user = workspace_member(request_workspace(request), username)
        if user is None:
            raise Http404  # the same answer for a missing user and one of another workspace
        return user

    def _body(self, user: User) -> dict[str, Any]:
        profile = UserProfile.objects.filter(user=user).first()
        return {"username": user.get_username(), "default_mode": profile.default_mode if profile else ""}

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request, username: str) -> Response:
        return Response(self.OutputSerializer(self._body(self._user(request, username))).data)

    @extend_schema(request=_ModeInput, responses={200: OutputSerializer})
    def put(self, request: Request, username: str) -> Response:
        user = self._user(request, username)
        data = _ModeInput(data=request.data)
        data.is_valid(raise_exception=True)
        modes.user_mode_set(
            workspace=request_workspace(request),
            user=user,
            actor=request.user,
            mode=data.validated_data["default_mode"],
        )
        return Response(self.OutputSerializer(self._body(user)).data)


class ConversationModeApi(CleanRequestMixin, APIView):
    """A conversation's default mode ("" inherits the user's, then the workspace's)."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="ConversationModeOutput")
    class OutputSerializer(serializers.Serializer[Any]):
        conversation_id = serializers.CharField(source="external_id")
        default_mode = serializers.CharField(allow_blank=True)

    def get_permissions(self) -> list[BasePermission]:
        return _read_or_admin(self.request)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request: Request, conversation_id: str) -> Response:
        conversation = get_object_or_404(
            Conversation, workspace=request_workspace(request), external_id=conversation_id
        )
        return Response(self.OutputSerializer(conversation).data)

    @extend_schema(request=_ModeInput, responses={200: OutputSerializer})
    def put(self, request: Request, conversation_id: str) -> Response:
        data = _ModeInput(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = modes.conversation_mode_set(
            workspace=request_workspace(request),
            external_id=conversation_id,
            mode=data.validated_data["default_mode"],
            actor=request.user,
        )
        return Response(self.OutputSerializer(conversation).data)


class ModePreviewApi(CleanRequestMixin, APIView):
    """Which mode a request would run in for the caller (resolution order and triggers)."""

    permission_classes = [CanRead]

    @extend_schema_serializer(component_name="ModePreviewInput")
    class InputSerializer(QueryInputSerializer):
        mode = serializers.ChoiceField(choices=Mode.choices, required=False)
        conversation_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
        domain = serializers.CharField(required=False, allow_blank=True, max_length=64)

    @extend_schema(
        parameters=[InputSerializer],
        responses={
            200: inline_serializer(
                "ModeDecision",
                {
                    "mode": serializers.CharField(),
                    "source": serializers.CharField(),
                    "triggers": serializers.ListField(child=serializers.CharField()),
                },
            )
        },
    )
    def get(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        decision = modes.mode_resolve(
            workspace=request_workspace(request),
            user=request.user,
            requested=values.get("mode", ""),
            conversation_id=values.get("conversation_id", ""),
            domain=values.get("domain", ""),
        )
        return Response(decision.as_dict())
