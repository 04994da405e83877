"""Error views: the API (``/api/``) answers every error as JSON, pages get Django's HTML pages.

Errors raised inside DRF views are mapped by ``audit.api.exceptions``; these handlers cover the
rest (a URL that matches no route, an unhandled exception, a bad Host header), so no API client
ever receives an HTML error page or, with DEBUG off, a traceback.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.views import defaults


def _api(request) -> bool:
    return request.path.startswith("/api/")


def _json(status: int, detail: str) -> JsonResponse:
    return JsonResponse({"detail": detail, "errors": {}}, status=status)


def bad_request(request, exception=None):
    return _json(400, "Bad request.") if _api(request) else defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    """403, with the sentence the refusal gave (e.g. an account in no workspace) when it gave one."""
    reason = str(exception or "").strip()
    if _api(request):
        return _json(403, reason or "You do not have permission to perform this action.")
    return defaults.permission_denied(request, exception)  # templates/403.html shows the sentence


def page_not_found(request, exception=None):
    return _json(404, "Not found.") if _api(request) else defaults.page_not_found(request, exception)


class ApiNotFoundMiddleware:
    """With DEBUG on, Django answers a URL that matches no route with its HTML debug page and never
    calls ``handler404``: an API path (``/api/v1/runs/abc``, an id of the wrong shape for its
    converter) answers the JSON 404 of ``page_not_found`` whatever DEBUG says."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            response.status_code == 404
            and _api(request)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return page_not_found(request)
        return response


def server_error(request):
    if _api(request):
        return _json(500, "Internal server error; the error was logged.")
    return defaults.server_error(request)
