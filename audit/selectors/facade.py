"""The reads of audit data that other apps (``escalation``) may make: their one way in.

Another app imports audit through this module, audit's public services (``audit.services.claims``,
``audit.services.events``, ``audit.services.reviewed_examples``), its hooks (``audit.hooks``) and
its shared foundations (``audit.constants``, ``audit.roles``, ``audit.errors``, ``audit.web.filters``,
``audit.admin.events``, ``audit.web.presentation``, ``audit.pipeline``), never audit's other modules.
Audit's model classes are re-exported here: escalation's models hold foreign keys to them and its
services annotate and query with them, so escalation reads audit's rows directly.

Audit imports nothing of escalation: what its pages show of escalation's rows (the claim page's
cases, the home page's work, the dashboard's queue, success metrics and correction backlog, the
workspace admin's calendar and notification targets) it asks through ``audit.hooks``.
``tests/foundation/test_dependencies.py`` holds both directions (imports and ``apps.get_model``
alike); docs/ARCHITECTURE.md, "Dependencies between the parts", draws it.
"""

from __future__ import annotations

from audit.models import Answer, AuditEvent, Claim, Document, Evidence, Workspace
from audit.models.choices import Label
from audit.selectors.api import evidence_ordered, thresholds_for
from audit.selectors.claims import claim_get, revision_proposals
from audit.selectors.workspaces import workspace_for_user, workspace_home, workspace_member, workspace_of

__all__ = [
    "Answer",
    "AuditEvent",
    "Claim",
    "Document",
    "Evidence",
    "Label",
    "Workspace",
    "claim_get",
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
