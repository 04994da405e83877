"""A strict JSON parser: size limit, UTF-8 only, no NaN, no NUL, and errors that name the field.

Every API endpoint parses JSON with it (``DEFAULT_PARSER_CLASSES``; the token endpoint too):
depth and integer size are limited by ``audit.pipeline.json_limits``, so no body ends in a
RecursionError or an overflow.

Bad bytes are located, not just refused: the body is decoded with ``surrogateescape`` so the
JSON still parses, then the value holding an undecodable byte is found and named
(``contexts[3].text: is not valid UTF-8 text.``). Lone surrogate escapes (``"\\ud800"``) and
NUL characters, which no database text column accepts, are refused the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import BaseParser

from audit.pipeline import json_limits

_BAD_UTF8 = "is not valid UTF-8 text."
_NUL = "contains a NUL character."


def max_body_bytes() -> int:
    return int(settings.THEORIA["API_MAX_BODY_BYTES"])


def _invalid(field: str, message: str) -> exceptions.ValidationError:
    return exceptions.ValidationError({field: [message]})


def _child(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]" if path else f"[{key}]"
    return f"{path}.{key}" if path else str(key)


# A lone surrogate (U+D800 to U+DFFF): searched in one pass of the regular-expression engine, since
# a Python loop over the characters cost 0.5 s of the web worker's GIL for a 900 KB body.
SURROGATE_RE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def control_character_problem(text: str) -> str | None:
    """Why ``text`` cannot be a document (a NUL or another control character; tab and newlines are text)."""
    match = _CONTROL.search(text or "")
    if match is None:
        return None
    return f"contains the control character U+{ord(match.group()):04X} at character {match.start()}; documents are plain text."


def _bad_text(value: str) -> str | None:
    if "\x00" in value:
        return _NUL
    if SURROGATE_RE.search(value):
        return _BAD_UTF8
    return None


def find_bad_text(value: object, path: str = "") -> tuple[str, str] | None:
    """Return (field path, message) of the first string that is not storable text, else None."""
    if isinstance(value, str):
        problem = _bad_text(value)
        return (path or "body", problem) if problem else None
    if isinstance(value, dict):
        for key, item in value.items():
            problem = _bad_text(key)
            if problem:
                return (_child(path, "(key)") if path else "body", f"has a key that {problem}")
            found = find_bad_text(item, _child(path, key))
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = find_bad_text(item, _child(path, index))
            if found:
                return found
    return None


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        limit = max_body_bytes()
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and str(declared).isdigit() and int(declared) > limit:
            raise _invalid("body", f"is larger than the limit of {limit} bytes.")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise _invalid("body", f"is larger than the limit of {limit} bytes.")
        if not raw.strip():
            raise _invalid("body", "is empty; send a JSON object.")
        text = raw.decode("utf-8", errors="surrogateescape")
        if text.startswith("\ufeff"):
            text = text[1:]
        try:
            data = json_limits.loads(text)
        except json_limits.JSONLimitError as exc:
            raise _invalid(exc.path or "body", exc.message) from None
        except ValueError as exc:
            where = (
                f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            )
            reason = getattr(exc, "msg", str(exc))
            raise _invalid("body", f"is not valid JSON: {reason}{where}.") from None
        found = find_bad_text(data)
        if found:
            raise _invalid(*found)
        return data
