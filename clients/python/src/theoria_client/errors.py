"""The API's errors as exceptions.

Every error body of the API has one shape (docs/API.md)::

    {"detail": "contexts[1].text: This field is required.",
     "errors": {"contexts[1].text": ["This field is required."]},
     "code": "case_conflict"}          # a domain refusal only

``ApiError`` carries it whole; a subclass per status family lets a caller catch what it handles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from theoria_client.models import Job


class TheoriaError(Exception):
    """Anything this client raises."""


class ApiError(TheoriaError):
    """The API answered an error status; ``errors`` maps each field (``body`` for the request as a
    whole) to its messages, ``code`` names a domain refusal (``conflict``, ``case_conflict``, ...)."""

    def __init__(
        self,
        status_code: int,
        detail: str,
        errors: dict[str, list[str]] | None = None,
        code: str = "",
        *,
        method: str = "",
        url: str = "",
        body: Any = None,
    ) -> None:
        self.status_code = status_code
        self.detail = detail
        self.errors = errors or {}
        self.code = code
        self.method = method
        self.url = url
        self.body = body
        super().__init__(f"{status_code} {method} {url}: {detail}".replace("  ", " "))


class BadRequest(ApiError):
    """400: bad input, each field named in ``errors``; nothing was stored."""


class AuthenticationFailed(ApiError):
    """401: no token, or a token the server does not know."""


class PermissionDenied(ApiError):
    """403: the token's role (or workspace) may not do this."""


class NotFound(ApiError):
    """404: no such row in the caller's workspace (or no such path)."""


class Conflict(ApiError):
    """409: the row's state refuses it, or an Idempotency-Key reused with another body."""


class TooLarge(ApiError):
    """413: the body or a field is over the server's limit."""


class RateLimited(ApiError):
    """429 after the client's retries ran out; ``retry_after`` is the server's last hint (seconds)."""

    retry_after: float | None = None


class ServiceUnavailable(ApiError):
    """503 after the client's retries ran out."""

    retry_after: float | None = None


class ServerError(ApiError):
    """Any other 5xx."""


class TransportError(TheoriaError):
    """The server could not be reached (connection refused, timeout) after the retries."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    429: RateLimited,
    503: ServiceUnavailable,
}


def error_from_response(response: httpx.Response, retry_after: float | None = None) -> ApiError:
    """The exception of an error response (a JSON error body, or whatever else came back)."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if isinstance(body, dict):
        detail = str(body.get("detail") or response.reason_phrase)
        raw_errors = body.get("errors") or {}
        errors = {
            str(k): [str(m) for m in (v if isinstance(v, list) else [v])] for k, v in raw_errors.items()
        }
        code = str(body.get("code") or "")
    else:
        detail = (str(body).strip()[:200] or response.reason_phrase) if body else response.reason_phrase
        errors, code = {}, ""
    cls = _BY_STATUS.get(response.status_code) or (ServerError if response.status_code >= 500 else ApiError)
    error = cls(
        response.status_code,
        detail,
        errors,
        code,
        method=response.request.method,
        url=str(response.request.url),
        body=body,
    )
    if isinstance(error, (RateLimited, ServiceUnavailable)):
        error.retry_after = retry_after
    return error


def error_from_job(job: Job) -> ApiError:
    """The exception of a queued job that failed: the class its ``error_status`` would have raised had
    the request run inline (a 413 is ``TooLarge``, a 500 ``ServerError``), its ``error`` as the detail."""
    status = job.error_status or 500
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    return cls(status, job.error or "the job failed", {}, "", method="GET", url=job.url, body=job.raw)
