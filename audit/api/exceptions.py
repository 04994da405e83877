"""The one mapping from exceptions to API responses (registered as DRF's EXCEPTION_HANDLER).

Every error body has the same shape::

    {"detail": "contexts[1].text: This field is required.",
     "errors": {"contexts[1].text": ["This field is required."]}}

``detail`` is one readable line that names the field; ``errors`` maps each field (a dotted /
indexed path, or ``body`` for the request as a whole) to its messages. Domain errors raised by
services (``audit.errors.TheoriaError`` and its subclasses, the escalation errors included) and
Django's model validation map to their status here, so views never build error responses
themselves; a domain error's body also carries its ``code`` (``"case_conflict"``, ...).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from audit.errors import InvalidInput, TheoriaError, TooLarge

BODY = "body"


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Flatten DRF's nested error structure into ``{"a.b[2].c": [messages]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if isinstance(key, int):  # ListField errors are keyed by item index
                path = f"{prefix}[{key}]"
            else:
                name = BODY if key in ("non_field_errors", "__all__") else str(key)
                path = name if not prefix else (prefix if name == BODY else f"{prefix}.{name}")
            for k, v in flatten_errors(value, path).items():
                out.setdefault(k, []).extend(v)
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            if detail:
                out.setdefault(prefix or BODY, []).extend(str(item) for item in detail)
        else:
            for index, item in enumerate(detail):
                for k, v in flatten_errors(item, f"{prefix}[{index}]").items():
                    out.setdefault(k, []).extend(v)
    else:
        out.setdefault(prefix or BODY, []).append(str(detail))
    return out


def error_body(errors: dict[str, list[str]]) -> dict[str, Any]:
    detail = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in errors.items())
    return {"detail": detail, "errors": errors}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Map ``exc`` to a response; return None (a 500) only for what is a bug, never bad input."""
    if isinstance(exc, TooLarge):
        return Response(
            error_body({exc.field: [exc.message]}), status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        )
    if isinstance(exc, InvalidInput):  # 400, or 404 for a value naming no row (``Missing``), 429 ``Busy``
        retry = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(retry)} if retry is not None else None
        return Response(error_body({exc.field: [exc.message]}), status=exc.status_code, headers=headers)
    if isinstance(exc, TheoriaError):
        return Response({"detail": str(exc), "code": exc.code, "errors": {}}, status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        errors = exc.message_dict if hasattr(exc, "error_dict") else {BODY: exc.messages}
        return Response(error_body(flatten_errors(errors)), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ObjectDoesNotExist):
        exc = Http404()
    if isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)  # the refusal's own sentence, when it has one

    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = error_body(flatten_errors(exc.detail))
    elif isinstance(exc, exceptions.ParseError):
        response.data = error_body({BODY: [str(exc.detail)]})
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"detail": str(response.data["detail"]), "errors": {}}
    return response
