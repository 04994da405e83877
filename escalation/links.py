"""The URLs of escalation's pages that audit's pages link to (registered with ``audit.hooks``)."""

from __future__ import annotations

from typing import Any

from audit.web.presentation import list_url


def review_queue_url(*, params: dict[str, Any]) -> str:
    """The review-case queue filtered by ``params`` (blank values left out)."""
    return list_url("escalation-queue", params)


def kb_corrections_url(*, staff: bool, open_only: bool = False) -> str:
    """The knowledge-base corrections: the admin list for staff, the API otherwise."""
    if staff:
        return list_url(
            "admin:escalation_curationitem_changelist", {"status__exact": "open" if open_only else None}
        )
    return list_url("api-curation-list", {"status": "open" if open_only else None})
