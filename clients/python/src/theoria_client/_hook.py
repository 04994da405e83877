"""What the LangChain and LlamaIndex hooks share: the client, the mode, and one audit recorded by key.

Neither framework is imported here, so each hook module imports only its own framework.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Generic, TypeVar

from theoria_client.client import Theoria
from theoria_client.models import AuditResult

Key = TypeVar("Key", bound=Hashable)


class AnswerAuditor(Generic[Key]):
    """Sends an answer with its contexts to ``POST /api/v1/audits`` and keeps the verdict by key.

    A failed audit is kept in ``errors`` and raised again unless ``raise_error`` is false: an answer
    the team asked to audit is never served as if it had been.
    """

    def __init__(
        self,
        base_url: str | None,
        token: str | None,
        *,
        mode: str | None,
        client: Theoria | None,
        raise_error: bool,
        audit_options: dict[str, Any],
    ) -> None:
        self.client = client or Theoria(base_url, token)
        self.mode = mode
        self.audit_options = audit_options
        self.raise_error = raise_error
        self.results: dict[Key, AuditResult] = {}
        self.last_result: AuditResult | None = None
        self.errors: list[Exception] = []

    def audit_answer(
        self, key: Key, question: str, answer: str, contexts: list[dict[str, Any]]
    ) -> AuditResult | None:
        """The verdict, kept under ``key`` and as ``last_result``; None when the audit failed and
        ``raise_error`` is false."""
        try:
            result = self.client.audit(question, answer, contexts, mode=self.mode, **self.audit_options)
        except Exception as error:
            self.errors.append(error)
            if self.raise_error:
                raise
            return None
        self.results[key] = self.last_result = result
        return result
