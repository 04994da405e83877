"""The roles of Theoria, as Django groups, and what each may do.

Groups are created by a data migration (``audit/migrations/0002_roles.py``); permission checks
(API, pages) go through the helpers here so the matrix lives in one place.
"""

from __future__ import annotations

L1_ANALYST = "L1 analyst"
L2_EXPERT = "L2 domain expert"
L3_LEAD = "L3 compliance lead"
AUDITOR = "Auditor"
ADMIN = "Admin"
SUBMITTER = "Submitter"  # a RAG front end's service account

ALL_ROLES = (L1_ANALYST, L2_EXPERT, L3_LEAD, AUDITOR, ADMIN, SUBMITTER)
REVIEWER_ROLES = (L1_ANALYST, L2_EXPERT, L3_LEAD)
TIER_ROLES = {1: L1_ANALYST, 2: L2_EXPERT, 3: L3_LEAD}


def roles_of(user) -> set[str]:
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_theoria_roles", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._theoria_roles = cached
    return cached


def is_admin(user) -> bool:
    return bool(getattr(user, "is_superuser", False)) or ADMIN in roles_of(user)


def can_read(user) -> bool:
    return is_admin(user) or bool(roles_of(user))


def can_submit(user) -> bool:
    return is_admin(user) or bool(roles_of(user) & {SUBMITTER, L1_ANALYST, L2_EXPERT, L3_LEAD})


def can_review(user) -> bool:
    return is_admin(user) or bool(roles_of(user) & set(REVIEWER_ROLES))


def can_change_settings(user) -> bool:
    return is_admin(user)


def review_tier(user) -> int:
    """Return the highest escalation tier the user may act at (0: none; admins: every tier)."""
    if is_admin(user):
        return max(TIER_ROLES)
    roles = roles_of(user)
    return max((tier for tier, role in TIER_ROLES.items() if role in roles), default=0)
