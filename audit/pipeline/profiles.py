"""Verification depth profiles of docs/SPEC_NOTES.md#verification-depths-and-profiles ("light", "medium", "extended") mapped onto the
pipeline's existing settings. Plain Python.

A profile is chosen per request, else by the workspace (threshold ``verification_profile``); no
profile leaves the workspace's thresholds as they are. ``VERIFICATION_PROFILES`` in
``audit.constants`` holds the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from audit.constants import DEFAULT_GENERATION_MODE, VERIFICATION_PROFILES, Thresholds
from audit.pipeline.methods import OFFLINE_METHODS
from audit.pipeline.methods.llm import LLM_METHODS


@dataclass(frozen=True)
class VerificationPlan:
    """What one audit runs: the profile's settings applied over the workspace's thresholds."""

    profile: str  # "" when no profile applies
    thresholds: Thresholds
    methods: tuple[str, ...] = OFFLINE_METHODS
    llm_methods: bool = True  # the LLM methods run when an LLM is configured
    revise: bool = True  # the revision loop (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop) may run
    web: bool = True  # Audit-Web (stage 7's external search) may run
    generation_mode: str = DEFAULT_GENERATION_MODE
    not_run: dict[str, str] = field(default_factory=dict)  # method -> why the profile leaves it out


def verification_plan(
    thresholds: Thresholds, profile: str = "", generation_mode: str = ""
) -> VerificationPlan:
    """The plan for a request's ``profile`` and ``generation_mode`` ("" = the workspace's choice)."""
    name = profile or thresholds.verification_profile
    if not name:
        return VerificationPlan(
            profile="",
            thresholds=thresholds,
            generation_mode=generation_mode or thresholds.generation_mode or DEFAULT_GENERATION_MODE,
        )
    if name not in VERIFICATION_PROFILES:
        raise ValueError(f"verification_profile must be one of {', '.join(VERIFICATION_PROFILES)}")
    spec = VERIFICATION_PROFILES[name]
    changes = {"verification_depth": spec["verification_depth"]}
    if spec["max_revisions"] is not None:
        changes["max_revisions"] = spec["max_revisions"]
    applied = thresholds.updated(changes)
    why = f"left out by the {name} verification profile"
    methods = OFFLINE_METHODS if spec["numeric_qa"] else tuple(m for m in OFFLINE_METHODS if m != "numeric")
    not_run = {m: why for m in OFFLINE_METHODS if m not in methods}
    if not spec["llm_methods"]:
        not_run.update(dict.fromkeys(LLM_METHODS, why))
    return VerificationPlan(
        profile=name,
        thresholds=applied,
        methods=methods,
        llm_methods=bool(spec["llm_methods"]),
        revise=applied.max_revisions > 0,
        web=bool(spec["web"]),
        generation_mode=generation_mode or thresholds.generation_mode or str(spec["generation_mode"]),
        not_run=not_run,
    )
