"""One audit job, built once per audit and handed down (docs/ARCHITECTURE.md, "The path of one audit").

``audit_job_build`` is the one place on the verification paths that reads a workspace's
thresholds (``thresholds_for``, at the answer's domain strictness) and sets up its LLM client
(``llm_setup_for``). Every way into verification builds its job here: the API request and the
form (``audit_submit``), "Audit now" (through ``audit_submit``), ``audit_and_store``, the deep
check, the nightly re-check, the web step and the revision loop (the last three through
:func:`audit_job_for_answer` for a stored answer).

An ``AuditJob`` is the pipeline's typed, Django-free ``VerificationJob`` (``verification``: query,
text, passages, domain, reference, thresholds, plan, LLM client and budget; read there, as
``job.verification.thresholds``, not through the service's job) plus what only the service needs to store the audit: the workspace, who asked, in which conversation, the contexts
as received (stored as JSON on the answer), the LLM setup (its usage is recorded on the run), the
deep-check choice, whether to revise, and a structured answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User

from audit.models import Answer, Workspace
from audit.pipeline.job import VerificationJob, passages_of
from audit.pipeline.profiles import VerificationPlan, verification_plan
from audit.pipeline.revision import RevisionOptions
from audit.selectors.api import thresholds_for
from audit.services.llm import LLMSetup, llm_setup_for


@dataclass(frozen=True)
class AuditJob:
    """What one audit reads, built once (``audit_job_build``)."""

    workspace: Workspace
    verification: VerificationJob  # what the pipeline reads (typed passages, thresholds, plan, LLM)
    contexts: tuple[dict[str, Any], ...]  # the request's passages as received (stored on the answer)
    llm_setup: LLMSetup  # one client and budget for the whole request (draft, audit, revision)
    user: User | None = None  # the signed-in user who asked (resolved once by the caller), or None
    conversation_id: str = ""
    deep: str = ""  # "sync" | "async" LLM methods ("" = the workspace's deep_checks)
    revise: bool = False
    answer_json: dict[str, Any] | None = None  # a structured answer, audited field by field
    # how the revision loop softens and what it does with unsupported claims (the settings, read
    # when the job is built rather than by the loop)
    revision: RevisionOptions = field(default_factory=RevisionOptions)
    # the workspace's plan (no request profile): what the web step verifies with, offline
    web_plan: VerificationPlan | None = None


def revision_options() -> RevisionOptions:
    """The deployment's revision options (``THEORIA["REVISION_SOFTENING"]`` / ``["REVISION_UNSUPPORTED"]``)."""
    conf = settings.THEORIA
    return RevisionOptions(
        softening=conf.get("REVISION_SOFTENING") or RevisionOptions.softening,
        unsupported_action=conf.get("REVISION_UNSUPPORTED") or RevisionOptions.unsupported_action,
    )


def audit_job_build(
    workspace: Workspace,
    *,
    query: str,
    answer_text: str,
    contexts: Iterable[dict[str, Any]] | None = (),
    domain: str = "",
    reference: str | None = None,
    user: User | None = None,
    conversation_id: str = "",
    profile: str = "",
    generation_mode: str = "",
    deep: str = "",
    revise: bool = False,
    answer_json: dict[str, Any] | None = None,
    llm_setup: LLMSetup | None = None,
    offline: str = "",
    llm_time_budget_s: float | None = None,
    depth: str | None = None,
    claims: bool = False,
) -> AuditJob:
    """Build the job of one audit: the thresholds at ``domain``'s strictness and the plan of
    ``profile`` are read here, once, and so is the LLM setup (its time budget, ``llm_time_budget_s``
    or the setting, starts now) unless the caller passes one (``llm_setup``) or says why the job
    runs offline (``offline``: no client is set up). ``depth`` replaces the verification depth.
    With ``claims`` the answer's claims are extracted now (``VerificationJob.with_claims``: an
    answer over the claims cap is refused before anything else runs)."""
    thresholds = thresholds_for(workspace, domain=domain)
    if depth is not None:
        thresholds = thresholds.updated({"verification_depth": depth})  # ValueError on an unknown depth
    plan = verification_plan(thresholds, profile, generation_mode)
    web_plan = verification_plan(thresholds) if profile or generation_mode else plan
    if llm_setup is None:
        llm_setup = (
            LLMSetup(None, offline)
            if offline
            else llm_setup_for(workspace=workspace, time_budget_s=llm_time_budget_s)
        )
    received = tuple(contexts or ())
    verification = VerificationJob(
        query=query or "",
        answer_text=answer_text or "",
        passages=passages_of(received),
        thresholds=thresholds,
        plan=plan,
        domain=domain or "",
        reference=reference,
        llm=llm_setup.client,
        offline_reason=llm_setup.offline_reason,
    )
    if claims:
        verification = verification.with_claims()
    return AuditJob(
        workspace=workspace,
        verification=verification,
        contexts=received,
        llm_setup=llm_setup,
        user=user,
        conversation_id=conversation_id or "",
        deep=deep,
        revise=revise,
        answer_json=answer_json,
        revision=revision_options(),
        web_plan=web_plan,
    )


def audit_job_for_answer(
    answer: Answer,
    *,
    user: User | None = None,
    offline: str = "",
    llm_time_budget_s: float | None = None,
    depth: str | None = None,
) -> AuditJob:
    """The job of a stored answer (the deep check, the web step, revision, the nightly re-check):
    its query, text as received, passages, domain and reference, judged at the strictness its
    audit had (the answer's domain)."""
    return audit_job_build(
        answer.workspace,
        query=answer.query or "",
        answer_text=answer.original_text or answer.text or "",
        contexts=list(answer.contexts or []),
        domain=answer.domain or "",
        reference=answer.reference or None,
        user=user,
        conversation_id=answer.conversation_id or "",
        offline=offline,
        llm_time_budget_s=llm_time_budget_s,
        depth=depth,
    )
