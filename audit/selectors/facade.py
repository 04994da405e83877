"""The reads of audit data that other apps (``escalation``) may make: their one way in.

Another app imports audit through this module, audit's public services (``audit.services.claims``,
``audit.services.events``, ``audit.services.reviewed_examples``), its hooks (``audit.hooks``) and
its shared foundations (``audit.constants``, ``audit.roles``, ``audit.errors``, ``audit.filters``,
``audit.admin_events``, ``audit.presentation``, ``audit.pipeline``), never audit's other modules.
Audit's model classes are re-exported here: escalation's models hold foreign keys to them and its
services annotate and query with them, so escalation reads audit's rows directly.

The dependency is two-way, on purpose and in exactly three places: audit reads escalation's rows
to show them in ``audit/views.py`` (``escalation.reporting``: the claim page's cases and the
dashboard), ``audit/selectors/dashboard.py`` (``ReviewCase``, ``CurationItem``: the success
metrics) and ``audit/admin.py`` (the workspace admin's calendar and notification-target inlines).
Audit never changes escalation's rows; it acts on escalation only through ``audit.hooks``.
``tests/foundation/test_dependencies.py`` holds that list exactly (imports and
``apps.get_model`` alike); docs/ARCHITECTURE.md, "Dependencies between the parts", draws it.
"""

from __future__ import annotations

from audit.models import Answer, Claim, Document, Evidence, Workspace
from audit.models.choices import Label
from audit.selectors.api import evidence_ordered, thresholds_for
from audit.selectors.claims import revision_proposals
from audit.services.workspaces import workspace_for_user, workspace_home, workspace_member, workspace_of

__all__ = [
    "Answer",
    "Claim",
    "Document",
    "Evidence",
    "Label",
    "Workspace",
    "claim_in_workspace",
    "evidence_ordered",
    "revision_proposals",
    "thresholds_for",
    "workspace_for_user",
    "workspace_home",
    "workspace_member",
    "workspace_of",
]


def claim_in_workspace(*, workspace: Workspace, answer_id: str, claim_id: str) -> Claim | None:
    """Return the claim ``claim_id`` of the answer ``answer_id`` in the workspace (answer joined), or None."""
    return (
        Claim.objects.select_related("answer__workspace")
        .filter(answer__workspace=workspace, answer__public_id=answer_id, claim_id=claim_id)
        .first()
    )
