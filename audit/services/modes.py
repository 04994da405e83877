"""Operating modes: which mode an audit runs in, when Audit-Local escalates to Audit-Web, and
the admin toggles (workspace, user and conversation defaults, threshold overrides).

Resolution (docs/SPEC_NOTES.md#modes): the request's mode, else the conversation's default, else the user's,
else the workspace's. Automatic triggers then raise Normal to Audit-Local: a regulated domain
(``Workspace.regulated_domains``) or a user role listed in ``Workspace.auto_audit_roles``. A
trigger never lowers a mode. Every toggle change is an audit event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import models, transaction

from audit import constants, roles
from audit.errors import InvalidInput
from audit.models import Conversation, UserProfile, Workspace
from audit.pipeline.web.fetch import allowed_domain_problem
from audit.services.events import Actor, AnyUser, event_record

_RANK = {constants.MODE_NORMAL: 0, constants.MODE_AUDIT_LOCAL: 1, constants.MODE_AUDIT_WEB: 2}


@dataclass(frozen=True)
class ModeDecision:
    """The mode an audit runs in, where it came from and what raised it."""

    mode: str
    source: str  # request | conversation | user | workspace
    triggers: tuple[str, ...] = ()  # "domain:neuroscience", "role:Auditor"

    def as_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "source": self.source, "triggers": list(self.triggers)}


def _check_mode(value: str, field_name: str = "mode", allow_blank: bool = False) -> str:
    if allow_blank and value == "":
        return value
    if value not in constants.MODES:
        choices = ", ".join(constants.MODES) + (" or blank to inherit" if allow_blank else "")
        raise InvalidInput(field_name, f'"{value}" is not a mode; use {choices}.')
    return value


def mode_resolve(
    *,
    workspace: Workspace,
    user: AnyUser | None = None,
    requested: str = "",
    conversation_id: str = "",
    domain: str = "",
) -> ModeDecision:
    """Return the mode an audit request runs in (see the module docstring for the order)."""
    if requested:
        mode, source = _check_mode(requested), "request"
    else:
        mode, source = "", ""
        if conversation_id:
            conversation = Conversation.objects.filter(
                workspace=workspace, external_id=conversation_id
            ).first()
            if conversation is not None and conversation.default_mode:
                mode, source = conversation.default_mode, "conversation"
        signed_in = user if user is not None and user.is_authenticated else None  # the actor, resolved
        if not mode and signed_in is not None:
            profile = UserProfile.objects.filter(user=signed_in, workspace=workspace).first()
            if profile is not None and profile.default_mode:
                mode, source = profile.default_mode, "user"
        if not mode:
            mode, source = workspace.default_mode or constants.MODE_NORMAL, "workspace"

    triggers: list[str] = []
    if workspace.is_regulated(domain):
        triggers.append(f"domain:{domain.lower()}")
    auto_roles = set(workspace.auto_audit_roles or []) & roles.roles_of(user)
    triggers.extend(f"role:{name}" for name in sorted(auto_roles))
    if triggers and _RANK[mode] < _RANK[constants.MODE_AUDIT_LOCAL]:
        mode = constants.MODE_AUDIT_LOCAL
    return ModeDecision(mode=mode, source=source, triggers=tuple(triggers))


# --- Toggles ----------------------------------------------------------------------------------------

WORKSPACE_SETTINGS = (
    "default_mode",
    "regulated_domains",
    "free_text_domains",
    "auto_audit_roles",
    "allow_external_calls",
    "web_allowed_domains",
    "freshness_policy",
    "retention_days",
    "llm_token_budget",
    "revision_approval",
    "revision_approval_domains",
    "citation_only_revisions",
)


def _changes(obj: models.Model, values: dict[str, Any]) -> dict[str, Any]:
    return {k: {"from": getattr(obj, k), "to": v} for k, v in values.items() if getattr(obj, k) != v}


def workspace_settings_check(values: dict[str, Any]) -> None:
    """Retention, token budget and freshness policy within their documented ranges, and web
    domains that are public host names (400 naming the key)."""
    for i, entry in enumerate(values.get("web_allowed_domains") or ()):
        if problem := allowed_domain_problem(entry):
            raise InvalidInput(f"web_allowed_domains[{i}]", problem)
    checks = {
        "retention_days": constants.RETENTION_DAYS_RANGE,
        "llm_token_budget": (0, constants.LLM_TOKEN_BUDGET_MAX),
    }
    for key, (low, high) in checks.items():
        if key in values and (problem := constants.whole_number_problem(values[key], low, high)):
            raise InvalidInput(key, problem)
    if "freshness_policy" in values:
        policy = values["freshness_policy"]
        if not isinstance(policy, dict):
            raise InvalidInput("freshness_policy", "must be an object mapping domain tags to months.")
        for domain, months in policy.items():
            if problem := constants.whole_number_problem(months, *constants.FRESHNESS_MONTHS_RANGE):
                raise InvalidInput(f"freshness_policy.{domain}", problem)


@transaction.atomic
def workspace_settings_update(*, workspace: Workspace, actor: Actor, **values: Any) -> Workspace:
    """Change workspace-wide settings (default mode, automatic triggers, web switch, ...).

    Unknown names raise InvalidInput; values are checked by the model's ``full_clean``. One
    ``settings.workspace_changed`` event lists every field that changed (from, to); nothing is
    written when nothing changed.
    """
    unknown = set(values) - set(WORKSPACE_SETTINGS)
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not a workspace setting.")
    if "default_mode" in values:
        _check_mode(values["default_mode"], "default_mode")
    workspace_settings_check(values)
    if "auto_audit_roles" in values:
        for role in values["auto_audit_roles"]:
            if role not in roles.ALL_ROLES:
                raise InvalidInput(
                    "auto_audit_roles", f'"{role}" is not a role; use one of {", ".join(roles.ALL_ROLES)}.'
                )
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    changes = _changes(workspace, values)
    if not changes:
        return workspace
    for key in changes:
        setattr(workspace, key, values[key])
    workspace.full_clean()
    workspace.save(update_fields=list(changes))
    action = "settings.mode_changed" if list(changes) == ["default_mode"] else "settings.workspace_changed"
    event_record(action=action, obj=workspace, actor=actor, workspace=workspace, details={"changes": changes})
    return workspace


@transaction.atomic
def user_mode_set(*, workspace: Workspace, user: User, mode: str, actor: Actor) -> UserProfile:
    """Set a user's default mode in the workspace ("" = inherit the workspace's)."""
    _check_mode(mode, "default_mode", allow_blank=True)
    profile, _ = UserProfile.objects.select_for_update().get_or_create(
        user=user, defaults={"workspace": workspace}
    )
    if profile.workspace_id != workspace.pk:
        raise InvalidInput("user", "belongs to another workspace.")
    if profile.default_mode != mode:
        before = profile.default_mode
        profile.default_mode = mode
        profile.full_clean()
        profile.save(update_fields=["default_mode"])
        event_record(
            action="settings.mode_changed",
            obj=profile,
            actor=actor,
            workspace=workspace,
            details={"scope": "user", "user": user.get_username(), "from": before, "to": mode},
        )
    return profile


@transaction.atomic
def conversation_mode_set(*, workspace: Workspace, external_id: str, mode: str, actor: Actor) -> Conversation:
    """Set a conversation's default mode ("" = inherit), creating the conversation if new."""
    _check_mode(mode, "default_mode", allow_blank=True)
    if not external_id or len(external_id) > 200:
        raise InvalidInput("conversation_id", "must be 1 to 200 characters.")
    conversation, created = Conversation.objects.select_for_update().get_or_create(
        workspace=workspace, external_id=external_id, defaults={"default_mode": mode}
    )
    before = "" if created else conversation.default_mode
    if not created and conversation.default_mode != mode:
        conversation.default_mode = mode
        conversation.full_clean()
        conversation.save(update_fields=["default_mode"])
    if created or before != mode:
        event_record(
            action="settings.mode_changed",
            obj=conversation,
            actor=actor,
            workspace=workspace,
            details={"scope": "conversation", "conversation_id": external_id, "from": before, "to": mode},
        )
    return conversation


def thresholds_check(overrides: object) -> None:
    """Raise :class:`InvalidInput` naming the key of the first unusable threshold override.

    The one check of threshold overrides, used by the API (:func:`thresholds_set`) and the admin
    console: numbers within their range, the string-valued settings of
    ``constants.STRING_THRESHOLDS`` (e.g. ``verification_depth``) with one of their allowed words.
    """
    if not isinstance(overrides, dict):
        raise InvalidInput("threshold_overrides", "must be an object.")
    for name, value in overrides.items():
        problem = constants.threshold_problem(name, value)
        if problem:
            raise InvalidInput(f"threshold_overrides.{problem[0]}", problem[1])


@transaction.atomic
def thresholds_set(*, workspace: Workspace, overrides: dict[str, Any], actor: Actor) -> Workspace:
    """Replace the workspace's threshold overrides (an empty dict restores the seed defaults)."""
    thresholds_check(overrides)
    workspace = Workspace.objects.select_for_update().get(pk=workspace.pk)
    before = dict(workspace.threshold_overrides or {})
    if before == overrides:
        return workspace
    workspace.threshold_overrides = overrides
    workspace.full_clean()
    workspace.save(update_fields=["threshold_overrides"])
    event_record(
        action="settings.thresholds_changed",
        obj=workspace,
        actor=actor,
        workspace=workspace,
        details={"from": before, "to": overrides},
    )
    return workspace
