"""REST API of Theoria (mounted at /api/v1/): thin views that validate, call a service or a
selector, and serialize. Errors become responses in ``audit.api.exceptions`` only."""

from __future__ import annotations

import itertools
import re
import tempfile
from dataclasses import asdict
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import constants, exports, hooks, roles
from audit.selectors import api as selectors
from audit.api.parsers import StrictJSONParser, control_character_problem, find_bad_text
from audit.api.throttles import AuditThrottle, TokenThrottle
from audit.api.permissions import CanChangeSettings, CanRead, CanSubmit
from audit.api.serializers import (
    AnswerSerializer,
    AnswerSummarySerializer,
    ClaimCardSerializer,
    DayField,
    DocumentSerializer,
    EvidenceSerializer,
    IdentifierField,
    RunSerializer,
    StrictCharField,
    StrictInputSerializer,
)
from audit.errors import InvalidInput
from audit.filters import AnswerFilter, ClaimFilter, EvidenceFilter, RunFilter
from audit.models import Answer, Claim, Conversation, Document, Evidence, UserProfile, VerificationRun
from audit.models.choices import Mode
from audit.services import modes
from audit.services.submissions import AuditRequest, audit_submit, request_fingerprint
from audit.services.workspaces import workspace_for_user, workspace_member
from audit.selectors.retrieval import RetrievalFilters, kb_retrieve
from audit.services.ingestion import DocumentInput, IngestError, document_ingest, documents_from_file, document_delete

EXPORT_BATCH = 500
_IDEMPOTENCY_KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 500


class CleanRequestMixin:
    """Refuse NUL characters and unpaired surrogates in path and query values (400 naming them):
    no database text column can hold them, so they would otherwise fail deep in a query."""

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)  # authentication and permissions first: 401/403 before 400
        values = [(name, value) for name, value in kwargs.items() if isinstance(value, str)]
        values += [(name, value) for name in request.query_params for value in request.query_params.getlist(name)]
        if hasattr(request.data, "getlist"):  # form and multipart bodies (JSON is checked by its parser)
            values += [(name, value) for name in request.data for value in request.data.getlist(name)
                       if isinstance(value, str)]
        for name, value in values:
            found = find_bad_text(value, name) or find_bad_text(name, "query")
            if found:
                raise InvalidInput(*found)


def _workspace(request):
    return workspace_for_user(request.user)


def _filtered(filterset_class, request, queryset):
    filterset = filterset_class(request.query_params, queryset=queryset, request=request)
    if not filterset.is_valid():
        raise serializers.ValidationError(filterset.errors)
    return filterset.qs


# --- Audits -------------------------------------------------------------------------------------

class ContextInput(StrictInputSerializer):
    """A passage sent with an audit request."""

    id = IdentifierField(max_length=200)
    title = StrictCharField(required=False, allow_blank=True, max_length=500)
    uri = StrictCharField(required=False, allow_blank=True, max_length=2000)
    text = StrictCharField(trim_whitespace=False)
    published_at = DayField(required=False, allow_null=True)

    def validate_text(self, value):
        if not value.strip():
            raise serializers.ValidationError("May not be blank.")
        return value


def audit_request_from(values: dict) -> AuditRequest:
    """Return the service's request of a validated ``AuditCreateApi.InputSerializer`` (API and answer form)."""
    contexts = [{**c, "published_at": c["published_at"].isoformat() if c.get("published_at") else None}
                for c in values.get("contexts", [])]
    return AuditRequest(
        query=values["query"], answer=values.get("answer"), contexts=contexts, mode=values.get("mode", ""),
        conversation_id=values.get("conversation_id", ""), domain=values.get("domain", ""),
        reference=values.get("reference"), generation_mode=values.get("generation_mode", ""),
        verification_profile=values.get("verification_profile", ""), answer_json=values.get("answer_json"),
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
        answer = StrictCharField(required=False, allow_blank=True, trim_whitespace=False)
        contexts = serializers.ListField(child=ContextInput(), required=False, default=list)
        mode = serializers.ChoiceField(choices=Mode.choices, required=False)
        conversation_id = StrictCharField(required=False, allow_blank=True, max_length=200)
        domain = StrictCharField(required=False, allow_blank=True, max_length=64)
        reference = StrictCharField(required=False, allow_blank=True)
        generation_mode = serializers.ChoiceField(choices=constants.GENERATION_MODES, required=False)
        verification_profile = serializers.ChoiceField(choices=tuple(constants.VERIFICATION_PROFILES), required=False)
        deep = serializers.ChoiceField(choices=constants.DEEP_CHECKS, required=False,
                                       help_text="async: answer with the offline result now, run the LLM methods "
                                                 "in a background deep check (GET /api/v1/runs/<id> shows it)")
        answer_json = serializers.DictField(required=False)

        def validate(self, attrs):
            if "answer_json" in attrs and "answer" in attrs:
                raise serializers.ValidationError({"answer_json": ["Send either answer or answer_json (one of them)."]})
            return attrs

        def validate_contexts(self, value):
            limit = settings.THEORIA["API_MAX_CONTEXTS"]
            if len(value) > limit:
                raise serializers.ValidationError(f"At most {limit} contexts are allowed; got {len(value)}.")
            return value

        def validate_answer(self, value):
            if not value.strip():
                raise serializers.ValidationError("May not be blank.")
            return value

    @extend_schema(
        request=InputSerializer,
        parameters=[OpenApiParameter("Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER,
                                     description="A retry with the same key and body returns the first result; "
                                                 "the same key with another body is 409.")],
        responses={201: AnswerSerializer, 400: OpenApiResponse(description="Bad input; the message names the field."),
                   409: OpenApiResponse(description="Idempotency-Key reused with a different body.")},
    )
    def post(self, request):
        key = request.headers.get("Idempotency-Key", "")
        if key and not _IDEMPOTENCY_KEY_RE.match(key):
            raise InvalidInput("Idempotency-Key", "must be 1 to 255 printable ASCII characters without spaces.")
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = _workspace(request)
        submission = audit_submit(
            workspace=workspace, user=request.user, idempotency_key=key,
            fingerprint=request_fingerprint(request.data), request=audit_request_from(data.validated_data),
        )
        answer = selectors.answer_detail_list(workspace=workspace).get(pk=submission.answer.pk)
        body = _with_escalations(AnswerSerializer, answer, mode_decision=submission.decision, web=submission.web,
                                 drafted=submission.drafted)
        headers = {"Idempotent-Replayed": "true"} if submission.replayed else {}
        return Response(body, status=status.HTTP_201_CREATED, headers=headers)


# --- Retrieval (spec 004 §7) --------------------------------------------------------------------

class RetrieveApi(CleanRequestMixin, APIView):
    """Claim-focused retrieval from the workspace knowledge base, with freshness filters."""

    permission_classes = [CanRead]
    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="RetrieveInput")
    class InputSerializer(StrictInputSerializer):
        claim = StrictCharField(required=False, max_length=4000)
        query = StrictCharField(required=False, max_length=4000)
        domain = StrictCharField(required=False, allow_blank=True, max_length=64)
        top_k = serializers.IntegerField(required=False, min_value=1, max_value=constants.RETRIEVE_MAX_TOP_K)
        max_age_months = serializers.FloatField(required=False, min_value=0)
        published_after = DayField(required=False)

        def validate(self, attrs):
            if ("claim" in attrs) == ("query" in attrs):
                raise serializers.ValidationError({"claim": ["Send either claim or query (one of them)."]})
            return attrs

    @extend_schema_serializer(component_name="RetrievedPassage")
    class PassageSerializer(serializers.Serializer):
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

    @extend_schema(request=InputSerializer, responses={200: inline_serializer("RetrieveOutput", {
        "kind": serializers.CharField(), "text": serializers.CharField(), "domain": serializers.CharField(),
        "top_k": serializers.IntegerField(), "results": PassageSerializer(many=True)})})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        workspace = _workspace(request)
        kind = "claim" if "claim" in values else "query"
        top_k = values.get("top_k") or selectors.thresholds_for(workspace).retrieval_top_k
        filters = RetrievalFilters(domain=values.get("domain", "").strip(), max_age_months=values.get("max_age_months"),
                                   published_after=values.get("published_after"))
        results = kb_retrieve(workspace=workspace, text=values[kind], is_claim=kind == "claim", top_k=top_k,
                              filters=filters, now=timezone.now())
        return Response({"kind": kind, "text": values[kind], "domain": filters.domain, "top_k": top_k,
                         "results": self.PassageSerializer(results, many=True).data})


class TokenApi(ObtainAuthToken):
    """Exchange a username and password for the user's API token (throttled per client address)."""

    throttle_classes = [TokenThrottle]


# --- Reads --------------------------------------------------------------------------------------

class _WorkspaceListApi(CleanRequestMixin, generics.ListAPIView):
    """A paginated, filtered list of the caller's workspace rows, read through ``selector``."""

    permission_classes = [CanRead]
    pagination_class = Pagination
    selector = None

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: the model, no query
            return self.queryset
        return type(self).selector(workspace=_workspace(self.request))


class AnswerListApi(_WorkspaceListApi):
    """List answers (newest first), filtered by mode, domain, conversation and date range."""

    queryset = Answer.objects.none()  # names the model for the schema; rows come from the selector
    serializer_class = AnswerSummarySerializer
    filterset_class = AnswerFilter
    selector = staticmethod(selectors.answer_list)


def _with_escalations(serializer_class, items, *, many: bool = False, **context):
    """Serialize answers or claims with their review cases loaded in one query."""
    rows = items if many else [items]
    claims = [claim for row in rows for claim in (row.claims.all() if isinstance(row, Answer) else [row])]
    context["escalations"] = hooks.claim_escalations(claim.pk for claim in claims)
    return serializer_class(items, many=many, context=context).data


class AnswerDetailApi(CleanRequestMixin, APIView):
    """One answer with its Claim Cards, audit metrics and escalations."""

    permission_classes = [CanRead]

    @extend_schema(responses={200: AnswerSerializer})
    def get(self, request, answer_id: str):
        answer = get_object_or_404(selectors.answer_detail_list(workspace=_workspace(request)), public_id=answer_id)
        return Response(_with_escalations(AnswerSerializer, answer))


class ClaimListApi(_WorkspaceListApi):
    """List Claim Cards, filtered by label, confidence, date range, mode, domain, escalation state."""

    queryset = Claim.objects.none()  # names the model for the schema; rows come from the selector
    serializer_class = ClaimCardSerializer
    filterset_class = ClaimFilter
    selector = staticmethod(selectors.claim_card_list)

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(_with_escalations(ClaimCardSerializer, page, many=True))


class ClaimDetailApi(CleanRequestMixin, APIView):
    """One Claim Card, by answer id and claim id (``c1``)."""

    permission_classes = [CanRead]

    @extend_schema(responses={200: ClaimCardSerializer})
    def get(self, request, answer_id: str, claim_id: str):
        claim = get_object_or_404(selectors.claim_card_list(workspace=_workspace(request)),
                                  answer__public_id=answer_id, claim_id=claim_id)
        return Response(_with_escalations(ClaimCardSerializer, claim))


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


class RunDetailApi(CleanRequestMixin, generics.RetrieveAPIView):
    """One verification run of the caller's workspace; ``deep_checks`` shows an asynchronous deep
    check's progress (queued, running with methods done of total, done with its relabels, failed)."""

    permission_classes = [CanRead]
    serializer_class = RunSerializer

    def get_queryset(self):
        return selectors.run_list(workspace=_workspace(self.request))


# --- Exports ------------------------------------------------------------------------------------

class IgnoreFormatNegotiation(BaseContentNegotiation):
    """Exports read ``?format=`` themselves; errors are always JSON."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def _card_stream(queryset):
    """Yield Claim Card dicts in batches (one escalation query per batch)."""
    iterator = queryset.iterator(chunk_size=EXPORT_BATCH)
    while batch := list(itertools.islice(iterator, EXPORT_BATCH)):
        yield from _with_escalations(ClaimCardSerializer, batch, many=True)


def _export_response(queryset, fmt: str, filename: str) -> StreamingHttpResponse:
    if fmt == "csv":
        response = StreamingHttpResponse(exports.iter_csv(_card_stream(queryset)), content_type="text/csv; charset=utf-8")
    else:
        response = StreamingHttpResponse(exports.iter_json(_card_stream(queryset)), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


def _export_format(request) -> str:
    fmt = request.query_params.get("format", "csv")
    if fmt not in ("csv", "json"):
        raise InvalidInput("format", f'"{fmt}" is not an export format; use csv or json.')
    return fmt


_FORMAT_PARAM = OpenApiParameter("format", OpenApiTypes.STR, enum=["csv", "json"], description="csv (default) or json")


class ClaimCardExportApi(CleanRequestMixin, generics.GenericAPIView):
    """Stream any filtered set of Claim Cards as CSV or JSON (same filters as /claims)."""

    permission_classes = [CanRead]
    filterset_class = ClaimFilter
    content_negotiation_class = IgnoreFormatNegotiation
    pagination_class = None  # the whole filtered set, streamed (the schema must not promise a page envelope)
    serializer_class = ClaimCardSerializer
    queryset = Claim.objects.none()  # the real one comes from the selector; this names the model

    @extend_schema(parameters=[_FORMAT_PARAM], responses={(200, "text/csv"): OpenApiTypes.STR,
                                                           (200, "application/json"): ClaimCardSerializer(many=True)})
    def get(self, request):
        fmt = _export_format(request)
        queryset = self.filter_queryset(selectors.claim_card_list(workspace=_workspace(request)))
        return _export_response(queryset, fmt, f"claim-cards-{timezone.now():%Y%m%dT%H%M%SZ}")


class ClaimCardDailyBundleApi(CleanRequestMixin, APIView):
    """The day's bundle of low-confidence claims (spec §4.4): REFUTED / NEI below 0.60."""

    permission_classes = [CanRead]
    content_negotiation_class = IgnoreFormatNegotiation

    @extend_schema_serializer(component_name="ClaimCardDailyBundleInput")
    class InputSerializer(serializers.Serializer):
        date = serializers.DateField(required=False)
        threshold = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)

    @extend_schema(parameters=[
        _FORMAT_PARAM,
        OpenApiParameter("date", OpenApiTypes.DATE, description="UTC day (default: today)"),
        OpenApiParameter("threshold", OpenApiTypes.FLOAT, description="default: the workspace's low_confidence_threshold"),
    ], responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): ClaimCardSerializer(many=True)})
    def get(self, request):
        fmt = _export_format(request)
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        day = data.validated_data.get("date") or timezone.now().date()
        queryset = selectors.low_confidence_claims(workspace=_workspace(request), day=day,
                                                   threshold=data.validated_data.get("threshold"))
        return _export_response(queryset, fmt, f"low-confidence-claims-{day:%Y-%m-%d}")


# --- Knowledge base -----------------------------------------------------------------------------

class DocumentListApi(CleanRequestMixin, generics.ListCreateAPIView):
    """List the knowledge base; upload a document (JSON body or a multipart ``file``)."""

    serializer_class = DocumentSerializer
    pagination_class = Pagination
    parser_classes = [StrictJSONParser, MultiPartParser]

    @extend_schema_serializer(component_name="DocumentListInput")
    class InputSerializer(StrictInputSerializer):
        title = StrictCharField(required=False, allow_blank=True, max_length=500)
        uri = StrictCharField(required=False, allow_blank=True, max_length=1000)
        text = StrictCharField(required=False, trim_whitespace=False)
        file = serializers.FileField(required=False)
        domain = StrictCharField(required=False, max_length=64, default="general")
        published_at = DayField(required=False, allow_null=True)
        sensitive = serializers.BooleanField(required=False, default=False)

        def validate(self, attrs):
            if bool(attrs.get("text")) == bool(attrs.get("file")):
                raise serializers.ValidationError({"text": ["Send either text or file (one of them)."]})
            if attrs.get("text") is not None and not attrs.get("title"):
                raise serializers.ValidationError({"title": ["Is required with text."]})
            return attrs

    def get_permissions(self):
        return [CanRead()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [CanChangeSettings()]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Document.objects.none()
        queryset = selectors.document_list(workspace=_workspace(self.request))
        domain = self.request.query_params.get("domain")
        return queryset.filter(domain=domain.lower()) if domain else queryset

    @extend_schema(request=InputSerializer, responses={201: DocumentSerializer(many=True)})
    def post(self, request):
        form = {key: request.data.get(key) for key in request.data} if hasattr(request.data, "getlist") else request.data
        data = self.InputSerializer(data=form)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        workspace = _workspace(request)
        try:
            if values.get("file"):
                docs = list(_documents_from_upload(values["file"], values, documents_from_file))
            else:
                docs = [DocumentInput(uri=values.get("uri") or f"kb://{slugify(values['title']) or 'document'}",
                                      title=values["title"], text=values["text"], domain=values["domain"],
                                      published_at=values.get("published_at"), sensitive=values["sensitive"],
                                      source_path="api")]
            for doc in docs:
                for name in ("text", "title"):
                    if problem := control_character_problem(getattr(doc, name, "")):
                        raise InvalidInput("file" if values.get("file") else name, problem)
            with transaction.atomic():
                results = [document_ingest(workspace=workspace, doc=doc, actor=request.user) for doc in docs]
        except IngestError as exc:
            raise InvalidInput("file" if values.get("file") else "text", f"cannot be ingested: {exc}.") from None
        ids = [document.pk for document, _ in results]
        documents = {d.pk: d for d in selectors.document_list(workspace=workspace).filter(pk__in=ids)}
        body = [{**DocumentSerializer(documents[pk]).data, "outcome": outcome} for pk, (_, outcome) in zip(ids, results)]
        created = any(outcome == "created" for _, outcome in results)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


def _documents_from_upload(upload, values, documents_from_file):
    """Parse an uploaded file with the ingestion service's readers (same rules as ingest_kb)."""
    limit = constants.INGEST_MAX_FILE_BYTES
    if upload.size > limit:
        raise InvalidInput("file", f"is larger than {limit // (1024 * 1024)} MB.")
    suffix = Path(upload.name or "").suffix.lower()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / (slugify(Path(upload.name or "upload").stem) or "upload")
        path = path.with_suffix(suffix)
        with path.open("wb") as out:
            for piece in upload.chunks():
                out.write(piece)
        for doc in documents_from_file(path, domain=values.get("domain") if "domain" in values else None):
            doc.source_path = f"upload:{upload.name}"
            if values.get("title") and not doc.title.strip():
                doc.title = values["title"]
            if values.get("uri"):
                doc.uri = values["uri"]
            if values.get("published_at"):
                doc.published_at, doc.date_inferred = values["published_at"], False
            doc.sensitive = doc.sensitive or values.get("sensitive", False)
            yield doc


class DocumentDetailApi(CleanRequestMixin, generics.RetrieveDestroyAPIView):
    """Read one document; delete it (its chunks leave every search index)."""

    serializer_class = DocumentSerializer

    def get_permissions(self):
        return [CanRead()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [CanChangeSettings()]

    def get_queryset(self):
        return selectors.document_list(workspace=_workspace(self.request))

    def perform_destroy(self, instance):
        document_delete(document=instance, actor=self.request.user)


# --- Settings (mode toggles and thresholds) --------------------------------------------------------

def _read_or_admin(request):
    return [CanRead()] if request.method in ("GET", "HEAD", "OPTIONS") else [CanChangeSettings()]


class WorkspaceSettingsApi(CleanRequestMixin, APIView):
    """The workspace's default mode, automatic triggers and web switch; admins change them."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="WorkspaceSettingsOutput")
    class OutputSerializer(serializers.Serializer):
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
        threshold_overrides = serializers.DictField()

    @extend_schema_serializer(component_name="WorkspaceSettingsInput")
    class InputSerializer(StrictInputSerializer):
        default_mode = serializers.ChoiceField(choices=Mode.choices, required=False)
        regulated_domains = serializers.ListField(child=StrictCharField(max_length=64), required=False)
        auto_audit_roles = serializers.ListField(child=serializers.ChoiceField(choices=roles.ALL_ROLES), required=False)
        allow_external_calls = serializers.BooleanField(required=False)
        web_allowed_domains = serializers.ListField(child=StrictCharField(max_length=253), required=False)
        freshness_policy = serializers.DictField(child=serializers.IntegerField(
            min_value=constants.FRESHNESS_MONTHS_RANGE[0], max_value=constants.FRESHNESS_MONTHS_RANGE[1]), required=False)
        retention_days = serializers.IntegerField(min_value=constants.RETENTION_DAYS_RANGE[0],
                                                  max_value=constants.RETENTION_DAYS_RANGE[1], required=False)
        llm_token_budget = serializers.IntegerField(min_value=0, max_value=constants.LLM_TOKEN_BUDGET_MAX, required=False)

    def get_permissions(self):
        return _read_or_admin(self.request)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request):
        return Response(self.OutputSerializer(_workspace(request)).data)

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def patch(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        for key in ("regulated_domains", "web_allowed_domains"):
            if key in values:
                values[key] = sorted({v.strip().lower() for v in values[key] if v.strip()})
        workspace = modes.workspace_settings_update(workspace=_workspace(request), actor=request.user, **values)
        return Response(self.OutputSerializer(workspace).data)


class ThresholdsApi(CleanRequestMixin, APIView):
    """The workspace's verification thresholds: seed defaults, overrides and what is in force."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="ThresholdsInput")
    class InputSerializer(StrictInputSerializer):
        threshold_overrides = serializers.DictField()

    @extend_schema_serializer(component_name="ThresholdsOutput")
    class OutputSerializer(serializers.Serializer):
        defaults = serializers.DictField()
        overrides = serializers.DictField()
        effective = serializers.DictField()

    def get_permissions(self):
        return _read_or_admin(self.request)

    def _body(self, workspace) -> dict:
        return {"defaults": asdict(constants.Thresholds()), "overrides": workspace.threshold_overrides or {},
                "effective": asdict(selectors.thresholds_for(workspace))}

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request):
        return Response(self._body(_workspace(request)))

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer})
    def put(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = modes.thresholds_set(workspace=_workspace(request), actor=request.user,
                                         overrides=data.validated_data["threshold_overrides"])
        return Response(self._body(workspace))


class _ModeInput(StrictInputSerializer):
    default_mode = serializers.ChoiceField(choices=[("", "Inherit"), *Mode.choices], allow_blank=True)


class UserModeApi(CleanRequestMixin, APIView):
    """A user's default mode ("" inherits the workspace's)."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="UserModeOutput")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        default_mode = serializers.CharField(allow_blank=True)

    def get_permissions(self):
        return _read_or_admin(self.request)

    def _user(self, request, username):
        """The user, when in the caller's workspace (users without a profile are in the default one)."""
        user = workspace_member(_workspace(request), username)
        if user is None:
            raise Http404  # the same answer for a missing user and one of another workspace
        return user

    def _body(self, user) -> dict:
        profile = UserProfile.objects.filter(user=user).first()
        return {"username": user.get_username(), "default_mode": profile.default_mode if profile else ""}

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request, username: str):
        return Response(self.OutputSerializer(self._body(self._user(request, username))).data)

    @extend_schema(request=_ModeInput, responses={200: OutputSerializer})
    def put(self, request, username: str):
        user = self._user(request, username)
        data = _ModeInput(data=request.data)
        data.is_valid(raise_exception=True)
        modes.user_mode_set(workspace=_workspace(request), user=user, actor=request.user,
                            mode=data.validated_data["default_mode"])
        return Response(self.OutputSerializer(self._body(user)).data)


class ConversationModeApi(CleanRequestMixin, APIView):
    """A conversation's default mode ("" inherits the user's, then the workspace's)."""

    parser_classes = [StrictJSONParser]

    @extend_schema_serializer(component_name="ConversationModeOutput")
    class OutputSerializer(serializers.Serializer):
        conversation_id = serializers.CharField(source="external_id")
        default_mode = serializers.CharField(allow_blank=True)

    def get_permissions(self):
        return _read_or_admin(self.request)

    @extend_schema(responses={200: OutputSerializer})
    def get(self, request, conversation_id: str):
        conversation = get_object_or_404(Conversation, workspace=_workspace(request), external_id=conversation_id)
        return Response(self.OutputSerializer(conversation).data)

    @extend_schema(request=_ModeInput, responses={200: OutputSerializer})
    def put(self, request, conversation_id: str):
        data = _ModeInput(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = modes.conversation_mode_set(workspace=_workspace(request), external_id=conversation_id,
                                                   mode=data.validated_data["default_mode"], actor=request.user)
        return Response(self.OutputSerializer(conversation).data)


class ModePreviewApi(CleanRequestMixin, APIView):
    """Which mode a request would run in for the caller (resolution order and triggers)."""

    permission_classes = [CanRead]

    @extend_schema_serializer(component_name="ModePreviewInput")
    class InputSerializer(serializers.Serializer):
        mode = serializers.ChoiceField(choices=Mode.choices, required=False)
        conversation_id = serializers.CharField(required=False, allow_blank=True, max_length=200)
        domain = serializers.CharField(required=False, allow_blank=True, max_length=64)

    @extend_schema(parameters=[InputSerializer], responses={200: inline_serializer("ModeDecision", {
        "mode": serializers.CharField(), "source": serializers.CharField(),
        "triggers": serializers.ListField(child=serializers.CharField())})})
    def get(self, request):
        data = self.InputSerializer(data=request.query_params)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        decision = modes.mode_resolve(workspace=_workspace(request), user=request.user, requested=values.get("mode", ""),
                                      conversation_id=values.get("conversation_id", ""), domain=values.get("domain", ""))
        return Response(decision.as_dict())
