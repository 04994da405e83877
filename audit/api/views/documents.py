"""The knowledge base: list, upload (files or JSON), read and delete documents."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.utils.datastructures import MultiValueDict
from django.utils.text import slugify
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import generics, serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from audit import constants
from audit.api.parsers import StrictJSONParser, control_character_problem
from audit.api.permissions import CanChangeSettings, CanRead
from audit.api.schema import TheoriaAutoSchema
from audit.api.serializers import (
    DayField,
    DocumentSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictInputSerializer,
)
from audit.api.views.common import CleanRequestMixin, Pagination, request_workspace
from audit.api.views.jobs import job_response
from audit.errors import InvalidInput
from audit.models import Document
from audit.selectors import api as selectors
from audit.services.background import upload_ingestion_queue
from audit.services.ingestion import (
    DocumentInput,
    IngestError,
    document_delete,
    documents_from_file,
    documents_ingest,
)

# --- Knowledge base -----------------------------------------------------------------------------


class _UploadSchema(TheoriaAutoSchema):
    """Only the GET list is paginated: an upload answers a plain list of the documents it stored
    (the schema said a page, which schemathesis' stateful phase caught)."""

    def _get_paginator(self) -> Any:
        if self.method != "GET":
            return None
        return super()._get_paginator()  # type: ignore[no-untyped-call]  # drf-spectacular's hook is untyped


class DocumentListApi(CleanRequestMixin, generics.ListCreateAPIView[Document]):
    """List the knowledge base; upload a document (JSON body or a multipart ``file``)."""

    serializer_class = DocumentSerializer
    pagination_class = Pagination
    schema = _UploadSchema()
    parser_classes = [StrictJSONParser, MultiPartParser]

    @extend_schema_serializer(component_name="DocumentListInput")
    class InputSerializer(StrictInputSerializer):
        title = StrictCharField(required=False, allow_blank=True, max_length=500)
        uri = StrictCharField(required=False, allow_blank=True, max_length=1000)
        text = StrictCharField(required=False, trim_whitespace=False)
        file = serializers.FileField(required=False)
        domain = StrictCharField(required=False, max_length=64, default="general")
        published_at = DayField(required=False, allow_null=True)
        sensitive = StrictBooleanField(required=False, default=False)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if bool(attrs.get("text")) == bool(attrs.get("file")):
                raise serializers.ValidationError({"text": ["Send either text or file (one of them)."]})
            if attrs.get("text") is not None and not attrs.get("title"):
                raise serializers.ValidationError({"title": ["Is required with text."]})
            return attrs

    def get_permissions(self) -> list[BasePermission]:
        return [CanRead()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [CanChangeSettings()]

    def get_queryset(self) -> QuerySet[Document]:
        if getattr(self, "swagger_fake_view", False):
            return Document.objects.none()
        queryset = selectors.document_list(workspace=request_workspace(self.request))
        domain = self.request.query_params.get("domain")
        return queryset.filter(domain=domain.lower()) if domain else queryset

    # 201 when a document was created, 200 when every document of the upload was already there
    @extend_schema(
        request=InputSerializer,
        responses={
            201: DocumentSerializer(many=True),
            200: DocumentSerializer(many=True),
            202: OpenApiResponse(
                description="A large file (over INGEST_INLINE_MAX_BYTES or INGEST_INLINE_MAX_DOCUMENTS "
                "documents) is ingested in the background: GET the job's url (also in Location) for its progress."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        form = (
            {key: request.data.get(key) for key in request.data}
            if isinstance(request.data, MultiValueDict)  # a form or multipart body
            else request.data
        )
        data = self.InputSerializer(data=form)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        workspace = request_workspace(request)
        try:
            if values.get("file"):
                docs = list(_documents_from_upload(values["file"], values, documents_from_file))
            else:
                docs = [
                    DocumentInput(
                        uri=values.get("uri") or f"kb://{slugify(values['title']) or 'document'}",
                        title=values["title"],
                        text=values["text"],
                        domain=values["domain"],
                        published_at=values.get("published_at"),
                        sensitive=values["sensitive"],
                        source_path="api",
                    )
                ]
            for doc in docs:
                for name in ("text", "title"):
                    if problem := control_character_problem(getattr(doc, name, "")):
                        raise InvalidInput("file" if values.get("file") else name, problem)
            upload = values.get("file")
            if upload is not None and (
                (upload.size or 0) > constants.INGEST_INLINE_MAX_BYTES
                or len(docs) > constants.INGEST_INLINE_MAX_DOCUMENTS
            ):  # a large upload is ingested in the background: 202 and the job's URL
                job = upload_ingestion_queue(
                    workspace=workspace, user=request.user, docs=docs, source=f"upload:{upload.name}"
                )
                return job_response(job, status.HTTP_202_ACCEPTED)
            # embedded first, then written in one short transaction (all the file's documents or none)
            results = documents_ingest(workspace=workspace, docs=docs, actor=request.user)
        except IngestError as exc:
            raise InvalidInput(
                "file" if values.get("file") else "text", f"cannot be ingested: {exc}."
            ) from None
        ids = [document.pk for document, _ in results]
        documents = {d.pk: d for d in selectors.document_list(workspace=workspace).filter(pk__in=ids)}
        body = [
            {**DocumentSerializer(documents[pk]).data, "outcome": outcome}
            for pk, (_, outcome) in zip(ids, results)
        ]
        created = any(outcome == "created" for _, outcome in results)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


def _documents_from_upload(
    upload: UploadedFile[Any],
    values: dict[str, Any],
    documents_from_file: Callable[..., Iterable[DocumentInput]],
) -> Iterator[DocumentInput]:
    """Parse an uploaded file with the ingestion service's readers (same rules as ingest_kb)."""
    limit = constants.INGEST_MAX_FILE_BYTES
    if (upload.size or 0) > limit:
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


class DocumentDetailApi(CleanRequestMixin, generics.RetrieveDestroyAPIView[Document]):
    """Read one document; delete it (its chunks leave every search index)."""

    serializer_class = DocumentSerializer

    def get_permissions(self) -> list[BasePermission]:
        return [CanRead()] if self.request.method in ("GET", "HEAD", "OPTIONS") else [CanChangeSettings()]

    def get_queryset(self) -> QuerySet[Document]:
        return selectors.document_list(workspace=request_workspace(self.request))

    def perform_destroy(self, instance: Document) -> None:
        document_delete(document=instance, actor=self.request.user)
