"""Reads of the audit domain (pages, API, other apps call these; they never write).

May import: the models, ``audit.kb`` (search), ``audit.pipeline`` (pure helpers) and the shared
foundations; never a service, a page or the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import Count

from audit.models import Answer, Claim, Document, Workspace

if TYPE_CHECKING:
    from audit.kb.search import InProcessKnowledgeBase, PgKnowledgeBase


def home_summary(*, workspace: Workspace) -> dict[str, Any]:
    """The home page's counts, of the caller's workspace only."""
    labels = dict(
        Claim.objects.filter(answer__workspace=workspace)
        .values_list("label")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {
        "workspace": workspace,
        "documents": Document.objects.filter(workspace=workspace).count(),
        "answers": Answer.objects.filter(workspace=workspace).count(),
        "claims": sum(labels.values()),
        "labels": labels,
    }


def kb_index(workspace: Workspace) -> InProcessKnowledgeBase | PgKnowledgeBase:
    """Return the workspace's synced knowledge-base search index (see audit.kb.search)."""
    from audit.kb.search import kb_index as _kb_index

    return _kb_index(workspace)
