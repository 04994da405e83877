"""What every API view shares: pagination, the request checks, the caller's workspace and the list filters."""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, TypeVar

from django.db.models import Model, QuerySet
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.views import APIView

from audit.api.parsers import find_bad_text
from audit.errors import InvalidInput
from audit.models import Workspace
from audit.services.workspaces import workspace_for_user

EXPORT_BATCH = 500
_M = TypeVar("_M", bound=Model)
IDEMPOTENCY_KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")


def request_fingerprint(payload: Any) -> str:
    """Return sha256 of a request body in canonical JSON (key order and spacing do not matter): a
    retry with the same Idempotency-Key must send the same body."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# The mixin's methods call the API view's own (``initial``); only the type checker sees that base.
if TYPE_CHECKING:
    _ViewBase = APIView
else:
    _ViewBase = object


class Pagination(PageNumberPagination):
    """``page`` (1 or more; past the last: 404) and ``page_size`` (1 to ``max_page_size``; else 400
    naming it), declared in the schema with the same bounds."""

    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int | None:
        text = request.query_params.get(self.page_size_query_param)
        if text is None:
            return self.page_size
        if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= self.max_page_size:
            raise InvalidInput(
                self.page_size_query_param, f"must be a whole number from 1 to {self.max_page_size}"
            )
        return int(text)

    def get_schema_operation_parameters(self, view: APIView) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
            elif parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters


class CleanRequestMixin(_ViewBase):
    """Refuse NUL characters and unpaired surrogates in path and query values (400 naming them):
    no database text column can hold them, so they would otherwise fail deep in a query."""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication and permissions first: 401/403 before 400
        values = [(name, value) for name, value in kwargs.items() if isinstance(value, str)]
        values += [
            (name, value) for name in request.query_params for value in request.query_params.getlist(name)
        ]
        if hasattr(request.data, "getlist"):  # form and multipart bodies (JSON is checked by its parser)
            values += [
                (name, value)
                for name in request.data
                for value in request.data.getlist(name)
                if isinstance(value, str)
            ]
        for name, value in values:
            found = find_bad_text(value, name) or find_bad_text(name, "query")
            if found:
                raise InvalidInput(*found)


class QueryInputSerializer(serializers.Serializer[Any]):
    """Query parameters read through a serializer (which also declares them in the schema): an
    empty value of a field that may not be blank is refused (400), not taken as absent."""

    def to_internal_value(self, data: Any) -> Any:
        if hasattr(data, "getlist"):
            blank = [
                name
                for name, field in self.fields.items()
                if name in data and data.get(name) == "" and not getattr(field, "allow_blank", False)
            ]
            if blank:
                raise serializers.ValidationError({name: ["May not be empty."] for name in blank})
        return super().to_internal_value(data)


def request_workspace(request: Request) -> Workspace:
    return workspace_for_user(request.user)


def _filtered(filterset_class: type[Any], request: Request, queryset: QuerySet[_M]) -> QuerySet[_M]:
    filterset = filterset_class(request.query_params, queryset=queryset, request=request)
    if not filterset.is_valid():
        raise serializers.ValidationError(filterset.errors)
    filtered: QuerySet[_M] = filterset.qs  # django-filter ships no types
    return filtered
