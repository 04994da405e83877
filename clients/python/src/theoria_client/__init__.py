"""Python client of the Theoria Audit REST API (docs/API.md).

from theoria_client import Theoria
with Theoria("http://127.0.0.1:8000", token) as theoria:
    result = theoria.audit(query, answer, contexts, mode="audit-local")
    for card in result.claims:
        print(card.label, card.confidence, card.text)
"""

from theoria_client.client import AsyncTheoria, Theoria
from theoria_client.errors import (
    ApiError,
    AuthenticationFailed,
    BadRequest,
    Conflict,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServerError,
    ServiceUnavailable,
    TheoriaError,
    TooLarge,
    TransportError,
)
from theoria_client.models import (
    AuditMetrics,
    AuditResult,
    Case,
    ClaimCard,
    Escalation,
    Evidence,
    Job,
    Page,
    Run,
)

__all__ = [
    "ApiError",
    "AsyncTheoria",
    "AuditMetrics",
    "AuditResult",
    "AuthenticationFailed",
    "BadRequest",
    "Case",
    "ClaimCard",
    "Conflict",
    "Escalation",
    "Evidence",
    "Job",
    "NotFound",
    "Page",
    "PermissionDenied",
    "RateLimited",
    "Run",
    "ServerError",
    "ServiceUnavailable",
    "Theoria",
    "TheoriaError",
    "TooLarge",
    "TransportError",
]
