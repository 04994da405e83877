"""The URLs of escalation's pages that audit's pages link to (registered with ``audit.hooks``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse


def review_queue_url(*, params: dict[str, Any]) -> str:
    """The review-case queue filtered by ``params`` (blank values left out)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")}, doseq=True)
    return reverse("escalation-queue") + (f"?{query}" if query else "")


def kb_corrections_url(*, staff: bool, open_only: bool = False) -> str:
    """The knowledge-base corrections: the admin list for staff, the API otherwise."""
    if staff:
        return "/admin/escalation/curationitem/" + ("?status__exact=open" if open_only else "")
    return "/api/v1/curation-items" + ("?status=open" if open_only else "")
