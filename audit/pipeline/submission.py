"""One submission, computed in one call (docs/ARCHITECTURE.md, "The path of one audit"): the answer
to audit (the one received, a structured answer's canonical text, or an LLM's draft), then, unless
the request is Normal, its claims and their verdicts (the audit with its revision, or the structured
audit), the evidence rows they are stored with, the Audit-Web rule and, when the web must be
consulted, the web step. Plain Python; it reads and writes no database.

What only the service can prepare is handed in before the descent, as plain values or small ports
(:class:`SubmissionRequest`): the knowledge base's search and the metadata of the passages it
returns, the web step's client (its fetches, cache and call log stay behind it) and providers. The
service turns the one :class:`SubmissionResult` into rows (``audit.services.submission_write``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from audit.errors import Unavailable
from audit.pipeline.extraction import citations_of
from audit.pipeline.job import VerificationJob
from audit.pipeline.llm.generation import draft_for
from audit.pipeline.local_audit import KbMeta, LocalAudit, local_audit
from audit.pipeline.profiles import VerificationPlan
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.revision import RevisionOptions
from audit.pipeline.structured import canonical_text, fields_check, structured_audit
from audit.pipeline.web.base import WebProvider
from audit.pipeline.web.rule import web_block, web_escalation_of
from audit.pipeline.web.step import (
    WEB_STEP_OFFLINE,
    ClaimView,
    EvidenceItem,
    WebStep,
    WebStepClient,
    evidence_items_of,
    web_step,
)


@dataclass(frozen=True)
class WebPort:
    """What the web step goes out through: the service's client, the providers it asks, the
    workspace's allow-list; ``external_calls``: the workspace allows them at all; ``plan``: the
    workspace's verification plan, which the web step verifies with (offline)."""

    client: WebStepClient
    providers: tuple[WebProvider, ...]
    allowed_domains: tuple[str, ...]
    external_calls: bool
    plan: VerificationPlan


@dataclass(frozen=True)
class SubmissionRequest:
    """What one submission reads besides its job, prepared by the service before the descent: the
    request as received, the mode's choices and the ports."""

    contexts: tuple[dict[str, Any], ...]  # the passages as received (stored on the answer)
    web: WebPort
    answer: str | None  # None: none was sent (a structured answer, or an LLM drafts one)
    answer_json: dict[str, Any] | None = None
    verify: bool = True  # False: Normal, recorded as received
    web_asked: bool = False  # the request's mode is Audit-Web
    revise: bool = False
    deep: str = ""  # "sync" | "async" LLM methods ("" = the thresholds' deep_checks)
    options: RevisionOptions = field(default_factory=RevisionOptions)
    kb: KnowledgeBase | None = None  # the workspace's knowledge base, searched besides the passages
    kb_meta: KbMeta | None = None


@dataclass(frozen=True)
class SubmissionResult:
    """What one submission computed: the job with the answer audited (a drafted or structured one's
    text, the claims), the contexts (with the citation keys a draft gave them), how the answer was
    drafted ({} when it was received), its citation anchors; unless Normal, its audit, the evidence
    rows its claims are stored with (the web step read the same), the web block (``web_block``) and,
    when the web was consulted, the web step."""

    job: VerificationJob
    contexts: tuple[dict[str, Any], ...]
    drafted: dict[str, Any]
    citations: int
    audit: LocalAudit | None = None  # None: Normal
    evidence: dict[str, tuple[EvidenceItem, ...]] = field(default_factory=dict)  # each claim's rows, by id
    web: dict[str, Any] = field(default_factory=dict)
    web_step: WebStep | None = None


# one function, in the order a submission runs (the answer, its audit, the Audit-Web rule, the web
# step), so that each step's result is handed to the next
def submission(job: VerificationJob, request: SubmissionRequest) -> SubmissionResult:
    """Compute one submission of ``job`` (its text: the answer received, "" when none was); writes
    nothing.

    The answer: ``answer_json``'s canonical text (a malformed field or source ref: InvalidInput
    before any audit), else ``answer``, else an LLM's draft with the job's plan and client (the
    audit that follows uses the same, so the draft's calls and tokens are on its run). Without an
    answer and without a usable LLM the request is refused naming ``answer`` (Unavailable): Theoria
    does not invent answers offline for a front end. Unless Normal: the claims are extracted once
    (TooLarge past the claims cap) and audited with the revision loop or, for a structured answer,
    field by field; the Audit-Web rule is applied to the verdicts and the web step runs when the web
    must be consulted (docs/SPEC_NOTES.md#escalation-to-audit-web). The stored claims are those of
    the text received whatever the revision did; the web step re-verifies them on the evidence rows
    they will be stored with and revises again from the received text when it brought evidence.
    """
    contexts, port = request.contexts, request.web
    drafted: dict[str, Any] = {}  # how the answer was drafted: {} when it was received
    if request.answer_json is not None:
        fields_check(request.answer_json, list(contexts))
        job = job.with_answer(canonical_text(request.answer_json))
    elif request.answer is None:  # an LLM's draft, with the contexts it gave citation keys
        if job.llm is None:
            raise Unavailable("answer", f"is required: no answer can be drafted ({job.offline_reason}).")
        text, contexts, drafted = draft_for(job.llm, job.query, contexts, job.plan.generation_mode)
        job = job.with_answer(text, list(contexts))
    citations = len(citations_of(job.answer_text, list(contexts)))
    if not request.verify:
        return SubmissionResult(job=job, contexts=contexts, drafted=drafted, citations=citations)
    job = job.with_claims()  # TooLarge when the answer has more claims than the workspace audits
    structured = request.answer_json is not None
    if request.answer_json is not None:  # one claim per field, checked against the passages its refs name
        audit = structured_audit(job, request.answer_json, contexts)
    else:
        audit = local_audit(
            job,
            kb=request.kb,
            kb_meta=request.kb_meta,
            deep=request.deep,
            revise=request.revise,
            options=request.options,
        )
    escalation = web_escalation_of(audit.result.claims, job.thresholds)
    web = web_block(
        asked=request.web_asked,
        escalation=escalation,
        structured=structured,
        external_calls=port.external_calls,
        plan=job.plan,
    )
    evidence = evidence_items_of(audit.result, audit.sensitive)  # the rows the claims are stored with
    step = None
    if not structured and web and "status" not in web:  # the web must be consulted, now
        views = [ClaimView.of_verdict(v, evidence[v.claim.claim_id]) for v in audit.result.claims]
        step = web_step(
            replace(job, plan=port.plan, llm=None, offline_reason=WEB_STEP_OFFLINE, claims=None),
            views,
            given=len(contexts),
            reasons=escalation.reasons,
            client=port.client,
            providers=port.providers,
            allowed_domains=port.allowed_domains,
            options=request.options,
        )
    return SubmissionResult(
        job=job,
        contexts=contexts,
        drafted=drafted,
        citations=citations,
        audit=audit,
        evidence=evidence,
        web=web,
        web_step=step,
    )
