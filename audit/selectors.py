"""Reads of the audit domain (pages, API, other apps call these; they never write)."""

from __future__ import annotations

from django.db.models import Count

from audit.models import Answer, Claim, Document, Workspace


def home_summary() -> dict:
    labels = dict(Claim.objects.values_list("label").annotate(n=Count("id")).order_by())
    return {
        "workspaces": Workspace.objects.count(),
        "documents": Document.objects.count(),
        "answers": Answer.objects.count(),
        "claims": sum(labels.values()),
        "labels": labels,
    }


def kb_index(workspace):
    """Return the workspace's synced knowledge-base search index (see audit.kb_search)."""
    from audit.kb_search import kb_index as _kb_index

    return _kb_index(workspace)
