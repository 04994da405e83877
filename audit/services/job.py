"""One audit job, built once per request and handed down (docs/ARCHITECTURE.md, "The path of one audit").

An ``AuditJob`` holds what every step of one audit reads: the request (query, text, passages,
domain, reference, who asked, in which conversation), the workspace's thresholds, the
verification plan (the profile applied to those thresholds), and the request's one LLM setup
(client and its token and time budget, or the reason it runs offline). ``audit_submit``, the
structured audit and ``audit_and_store`` build it once; ``audit_compute``, ``audit_store``,
``structured_compute`` and the Audit-Web decision read it instead of calling ``thresholds_for``,
``verification_plan`` and ``llm_setup_for`` again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.constants import Thresholds
from audit.models import Workspace
from audit.pipeline.profiles import VerificationPlan, verification_plan
from audit.selectors.api import thresholds_for
from audit.services.llm import LLMSetup, llm_setup_for


@dataclass(frozen=True)
class AuditJob:
    """What one audit reads, built once (``audit_job_build``)."""

    workspace: Workspace
    query: str
    answer_text: str
    contexts: list
    thresholds: Thresholds  # the workspace's (calibration and overrides applied)
    plan: VerificationPlan  # the request's profile applied to ``thresholds``
    llm_setup: LLMSetup  # one client and budget for the whole request (draft, audit, revision)
    domain: str = ""
    reference: str | None = None
    user: Any = None
    conversation_id: str = ""
    deep: str = ""  # "sync" | "async" LLM methods ("" = the workspace's deep_checks)
    revise: bool = False
    answer_json: dict | None = None  # a structured answer, audited field by field


def audit_job_build(
    *,
    workspace: Workspace,
    query: str,
    answer_text: str,
    contexts,
    domain: str = "",
    reference: str | None = None,
    user=None,
    conversation_id: str = "",
    profile: str = "",
    generation_mode: str = "",
    deep: str = "",
    revise: bool = False,
    answer_json: dict | None = None,
    thresholds: Thresholds | None = None,
    plan: VerificationPlan | None = None,
    llm_setup: LLMSetup | None = None,
) -> AuditJob:
    """Build the job of one audit. ``thresholds``, ``plan`` and ``llm_setup``, when the caller
    already has them (a drafted answer: the draft used the same plan and client), are taken as
    they are; otherwise they are read here, once."""
    thresholds = thresholds if thresholds is not None else thresholds_for(workspace, domain=domain)
    plan = plan if plan is not None else verification_plan(thresholds, profile, generation_mode)
    return AuditJob(
        workspace=workspace,
        query=query,
        answer_text=answer_text,
        contexts=contexts,
        thresholds=thresholds,
        plan=plan,
        llm_setup=llm_setup if llm_setup is not None else llm_setup_for(workspace=workspace),
        domain=domain or "",
        reference=reference,
        user=user,
        conversation_id=conversation_id or "",
        deep=deep,
        revise=revise,
        answer_json=answer_json,
    )
