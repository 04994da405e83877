"""The one reader of JSON that users send: API bodies, ``.jsonl`` uploads, JSON fields of the admin.

``loads(text)`` refuses, with a sentence naming where, what the standard library would turn
into a crash or a stall: nesting deeper than ``JSON_MAX_DEPTH`` (the standard parser recurses
and raises RecursionError near a thousand levels), integers longer than
``JSON_MAX_INT_DIGITS`` digits (no setting holds one; a 400-digit integer overflowed the float
conversion of the range checks), numbers too large for a float (``1e999`` reads as infinity)
and the non-standard constants NaN and Infinity. The depth is measured on the parsed value
without recursion (the standard parser itself stops with RecursionError near a thousand levels,
which is refused the same way).

``depth_of(value)`` measures an already parsed value (``answer_json`` has its own, lower cap).
Plain Python.
"""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from audit.constants import JSON_MAX_DEPTH, JSON_MAX_INT_DIGITS


class JSONLimitError(ValueError):
    """JSON that cannot be accepted: ``message`` is a sentence (without the subject), ``path``
    names the value (``contexts[2].text``) or is "" for the document as a whole."""

    def __init__(self, message: str, path: str = ""):
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


def depth_of(value: object, stop_after: int = JSON_MAX_DEPTH) -> int:
    """How deeply a parsed value nests (a scalar: 0; ``{"a": [1]}``: 2), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > stop_after:
            break
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


class _Refused:
    """Stands in for a number that was refused while parsing, so its place can be named."""

    def __init__(self, message: str):
        self.message = message


def _path(value: object, where: str = "") -> tuple[str, str] | None:
    """(path, message) of the first refused number in ``value``, else None (iterative)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Refused):
            return path, node.message
        if isinstance(node, dict):
            items = [(f"{path}.{k}" if path else str(k), v) for k, v in node.items()]
        elif isinstance(node, list):
            items = [(f"{path}[{i}]", v) for i, v in enumerate(node)]
        else:
            continue
        stack.extend((v, p) for p, v in reversed(items))
    return None


def _constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: str, *, max_depth: int = JSON_MAX_DEPTH, max_int_digits: int = JSON_MAX_INT_DIGITS) -> Any:
    """Parse ``text`` as JSON within the limits; raise JSONLimitError naming the place, or the
    standard library's ValueError (with line and column) for text that is not JSON at all."""
    too_deep = f"is nested more than {max_depth} levels deep; at most {max_depth} are accepted."

    def integer(digits: str) -> int | _Refused:
        length = len(digits.lstrip("-"))
        if length > max_int_digits:
            return _Refused(
                f"is an integer of {length} digits; at most {max_int_digits} digits are accepted."
            )
        return int(digits)

    def number(raw: str) -> float | _Refused:
        value = float(raw)
        return value if math.isfinite(value) else _Refused("is a number too large to hold.")

    try:
        value = json.loads(text, parse_int=integer, parse_float=number, parse_constant=_constant)
    except RecursionError:  # the standard parser recurses: far too deep
        raise JSONLimitError(too_deep) from None
    if depth_of(value, max_depth) > max_depth:
        raise JSONLimitError(too_deep)
    refused = _path(value)
    if refused is not None:
        raise JSONLimitError(refused[1], refused[0])
    return value
