"""The OpenAPI schema tells what the API does: every error status a view can answer, with the one
error body of ``audit.api.exceptions``, and query parameters whose ranges and choices are the
ones enforced.

``TheoriaAutoSchema`` (``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``) adds to each operation the
error responses that the request pipeline can produce for it:

- 400 for every operation (a bad parameter or body; also a NUL in any query value, which
  ``CleanRequestMixin`` refuses everywhere);
- 401 and 403 where the view needs a signed-in caller (a missing or bad token; a role or
  workspace that may not);
- 404 where the path names a row, the list is paged (a page past the last), or a write's body
  names a row (``audit.errors.Missing``);
- 409 for writes (a domain conflict: a case already closed, a key reused with another body, an
  answer to draft with no LLM configured);
- 413 and 415 where there is a body (too large; a content type no parser reads);
- 429 where the view is throttled.

Query parameters are declared by the serializer or filter that validates them (``parameters=
[SomeSerializer]`` in ``extend_schema``, or the filters of ``audit.web.filters``), never by a second
hand-written list.
"""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.contrib.django_filters import DjangoFilterExtension
from drf_spectacular.drainage import has_override
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers
from rest_framework.permissions import AllowAny


class ErrorSerializer(serializers.Serializer[Any]):
    """The body of every error (``audit.api.exceptions``)."""

    detail = serializers.CharField(help_text="One readable line that names the field.")
    errors = serializers.DictField(  # type: ignore[assignment]  # a field named like Serializer.errors; DRF moves it to _declared_fields
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Each field (a dotted / indexed path, or `body`) mapped to its messages.",
    )
    code = serializers.CharField(required=False, help_text="A domain error's code, e.g. `case_conflict`.")

    class Meta:
        ref_name = "Error"


ERRORS = {
    "400": "Invalid input: `detail` names the parameter or field.",
    "401": "No valid credentials (a token or a session).",
    "403": "The caller's role or workspace may not do this.",
    "404": "No such row in the caller's workspace, or a page past the last.",
    "409": "The request conflicts with the row's state.",
    "413": "The body or a value is too large.",
    "415": "The body's content type is not accepted.",
    "429": "Too many requests: wait `Retry-After` seconds.",
}


# A request text holds no NUL character (refused with a 400 naming the field, docs/API.md); one that
# must not be blank also holds a character other than a space.
NO_NUL = r"^[^\x00]*$"
NO_NUL_NONBLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"


class TheoriaAutoSchema(AutoSchema):
    def _error_codes(self) -> list[str]:
        view = self.view
        codes = ["400"]
        permissions = getattr(view, "permission_classes", ())
        if permissions and not all(issubclass(p, AllowAny) for p in permissions):
            codes += ["401", "403"]
        paged = self._is_list_view() and self._get_paginator() is not None
        writes = self.method in ("POST", "PUT", "PATCH", "DELETE")
        if "{" in self.path or paged or writes or getattr(view, "query_filterset", None) is not None:
            codes.append("404")  # a path, a page, or a body value naming no row (``errors.Missing``)
        if writes:
            codes.append("409")
        if self.method in ("POST", "PUT", "PATCH"):
            codes += ["413", "415"]
        if getattr(view, "throttle_classes", ()):
            codes.append("429")
        return codes

    def _get_serializer_field_meta(
        self, field: serializers.Field[Any, Any, Any, Any], direction: str
    ) -> dict[str, Any]:
        """A text a request must fill (``allow_blank=False``) has ``minLength: 1``, and a non-space
        character where the field trims spaces (what DRF refuses as blank)."""
        meta = super()._get_serializer_field_meta(field, direction)
        if has_override(field, "field"):  # a declared schema (a pattern of its own) is the field's
            return meta
        text = (
            direction == "request"
            and isinstance(field, serializers.CharField)
            and not isinstance(field, serializers.ChoiceField)
            and not field.read_only
        )
        if direction == "request" and getattr(field, "nonblank", False):
            meta.update(minLength=1, pattern=r"\S")
        elif text and isinstance(field, serializers.CharField) and not field.allow_blank:
            meta.setdefault("minLength", 1)
            if field.trim_whitespace:
                meta.setdefault("pattern", r"\S")
        if text or (direction == "request" and getattr(field, "nonblank", False)):
            # NUL characters are refused in every text (the parser's rule): the pattern says so
            meta["pattern"] = NO_NUL_NONBLANK if meta.get("pattern") == r"\S" else NO_NUL
        return meta

    def _get_filter_parameters(self) -> list[dict[str, Any]]:
        """A view that filters by hand (``selectors``) names its FilterSet as ``query_filterset``:
        its parameters come from the filters that validate them, as for a ``filterset_class``."""
        parameters = super()._get_filter_parameters()
        filterset = getattr(self.view, "query_filterset", None)
        if filterset is not None and self.method == "GET":
            from django_filters.rest_framework import DjangoFilterBackend

            extension = DjangoFilterExtension(DjangoFilterBackend)
            for name, field in filterset.base_filters.items():
                parameters += extension.resolve_filter_field(
                    self, filterset._meta.model, filterset, name, field
                )
        return parameters

    def _get_response_bodies(self, direction: Literal["request", "response"] = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        for code in self._error_codes():
            declared = responses.get(code)
            if declared is None or not declared.get("content"):
                response = self._get_response_for_code(ErrorSerializer, code, ["application/json"], direction)
                response["description"] = (declared or {}).get("description") or ERRORS[code]
                responses[code] = response
        return responses


class StrictInputExtension(OpenApiSerializerExtension):
    """``StrictInputSerializer`` refuses keys it does not know: its schema says so
    (``additionalProperties: false``); a rule across its fields that ``validate`` checks is
    declared beside it as ``schema_extra`` (``oneOf``, ``not``)."""

    target_class = "audit.api.serializers.StrictInputSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        schema.update(getattr(self.target, "schema_extra", {}))  # a rule across fields (its validate)
        return schema


def threshold_overrides_schema() -> dict[str, Any]:
    """The schema of ``threshold_overrides``, from the ranges ``constants.threshold_problem`` checks."""
    from audit import constants

    defaults = constants.Thresholds()
    properties: dict[str, Any] = {}
    for field in constants.setting_fields():
        name, default = field.name, getattr(defaults, field.name)
        schema: dict[str, Any]
        if name in constants.STRING_THRESHOLDS:
            schema = {"type": "string", "enum": list(constants.STRING_THRESHOLDS[name])}
        elif isinstance(default, dict) and name.endswith("_weights"):
            low, high = constants.WEIGHT_RANGE
            keys = list(default)
            schema = {
                "type": "object",
                "properties": {key: {"type": "number", "minimum": low, "maximum": high} for key in keys},
                "additionalProperties": False,
                # at least one weight above 0 once the defaults fill what is not given
                "not": {"required": keys, "properties": {key: {"enum": [0]} for key in keys}},
            }
        elif isinstance(default, dict):
            low, high = constants.FRESHNESS_MONTHS_RANGE
            schema = {
                "type": "object",
                "additionalProperties": {"type": "integer", "minimum": low, "maximum": high},
            }
        elif name in constants.INT_THRESHOLD_RANGES:
            low, high = constants.INT_THRESHOLD_RANGES[name]
            schema = {"type": "integer", "minimum": low, "maximum": high}
        else:
            schema = {"type": "number", "minimum": 0, "maximum": 1}
            if name in constants.SHARES_ABOVE_ZERO:
                schema["exclusiveMinimum"] = True
        properties[name] = schema
    return {"type": "object", "properties": properties, "additionalProperties": False}
