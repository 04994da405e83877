"""What one audit request computes before anything is written (docs/ARCHITECTURE.md, "The path of
one audit"): the answer to audit (the one received, else an LLM's draft), then, unless the request
is Normal, its audit (or structured audit) with the revision loop and, when the Audit-Web rule
asks for it, the web step. Reads only; ``audit.services.submission_write`` writes the result.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from django.contrib.auth.models import User
from django.core.cache import cache

from audit import constants
from audit.errors import Busy, InvalidInput, Unavailable
from audit.pipeline.extraction import citations_of
from audit.pipeline.llm.generation import generate
from audit.pipeline.structured import StructuredError, canonical_text, discover_fields
from audit.pipeline.types import Passage
from audit.services.audit import audit_compute
from audit.services.evidence_rows import evidence_rows_of
from audit.services.job import AuditJob
from audit.services.modes import ModeDecision
from audit.services.structured import structured_compute
from audit.services.submission_write import Verified
from audit.services.web import web_compute
from audit.services.web_rule import web_block, web_escalation_of


@dataclass(frozen=True)
class Computed:
    """What a request computed: the job with the answer to audit, how the answer was drafted
    (empty when it was received), its citation anchors, and its verification (None: Normal)."""

    job: AuditJob
    drafted: dict[str, Any]
    citations: int
    verified: Verified | None


def structured_fields_check(answer_json: object, contexts: list[dict[str, Any]]) -> None:
    """Raise InvalidInput naming the path of the first malformed field or source ref."""
    try:
        discover_fields(answer_json, [str(c.get("id")) for c in contexts or []])
    except StructuredError as exc:
        where = exc.path if exc.path == "answer_json" else f"answer_json.{exc.path}"
        raise InvalidInput(where, exc.message) from None


@contextmanager
def expensive_audit_slot(user: User | None, answer: str | None) -> Iterator[None]:
    """Hold one of the user's ``EXPENSIVE_AUDITS_PER_USER`` slots (shared cache) while an answer of
    ``EXPENSIVE_AUDIT_CHARS`` or more is audited; ``Busy`` (429) when they are all held."""
    pk = getattr(user, "pk", None)
    if pk is None or answer is None or len(answer) < constants.EXPENSIVE_AUDIT_CHARS:
        yield
        return
    for slot in range(constants.EXPENSIVE_AUDITS_PER_USER):
        key = f"theoria:expensive-audit:{pk}:{slot}"
        if cache.add(key, 1, timeout=constants.EXPENSIVE_AUDIT_SLOT_S):
            try:
                yield
            finally:
                cache.delete(key)
            return
    raise Busy(
        "answer",
        f"you already have {constants.EXPENSIVE_AUDITS_PER_USER} audit(s) of an answer of "
        f"{constants.EXPENSIVE_AUDIT_CHARS:,} characters or more running; send this one when it has finished.",
        retry_after=constants.EXPENSIVE_AUDIT_RETRY_AFTER_S,
    )


def submission_compute(
    job: AuditJob, decision: ModeDecision, *, answer: str | None, verify: bool
) -> Computed:
    """Compute one request (``_submission_compute``); writes nothing. An answer of
    ``EXPENSIVE_AUDIT_CHARS`` or more is computed while the user holds an expensive-audit slot
    (``Busy``, 429, when they hold them all)."""
    with expensive_audit_slot(job.user, answer):
        return _submission_compute(job, decision, answer=answer, verify=verify)


# one pass, in the order the request runs (draft, audit, the Audit-Web rule, the web step), written
# as one function so that each step's result is handed to the next, never read back
def _submission_compute(
    job: AuditJob, decision: ModeDecision, *, answer: str | None, verify: bool
) -> Computed:
    """Compute one request; writes nothing.

    The answer: ``answer_json``'s canonical text (a malformed field or source ref: 400 before any
    audit), else ``answer`` (the job's text), else an LLM's draft with the job's plan and client (the audit that
    follows uses the same, so the draft's calls and tokens are stored on its run). Without an
    answer and without a usable LLM (none configured, residency, budget) the request is refused
    naming ``answer``: Theoria does not invent answers offline for a front end. A drafted answer's
    contexts (with the citation keys the draft gave them) are the returned job's.

    With ``verify``: Audit-Local (with the revision loop), then Audit-Web when asked for or when
    docs/SPEC_NOTES.md#escalation-to-audit-web says so and the workspace allows external calls. The
    stored claims are those of the text received whatever the revision did, so every mode audits
    and revises the same way first; the web step re-verifies the received claims (on the evidence
    rows they will be stored with) and revises again from the received text only when it brought
    evidence.
    """
    contexts: list[dict[str, Any]] | None = None  # the request's, unless a draft gave them keys
    drafted: dict[str, Any] = {}
    text = job.verification.answer_text  # the answer received (``audit_request_check``ed)
    if job.answer_json is not None:
        structured_fields_check(job.answer_json, list(job.contexts))
        text = canonical_text(job.answer_json)
    elif answer is None:  # an LLM's draft, with the contexts it gave citation keys
        setup = job.llm_setup
        if setup.client is None:
            raise Unavailable("answer", f"is required: no answer can be drafted ({setup.offline_reason}).")
        passages = [
            Passage(id=str(c["id"]), text=c["text"], title=c.get("title", ""), uri=c.get("uri", ""))
            for c in job.contexts
        ]
        draft = generate(
            setup.client, job.verification.query, passages, job.verification.plan.generation_mode
        )
        keys = {p.id: [k for k, pid in draft.keys.items() if pid == p.id] for p in draft.passages}
        contexts = [
            {**c, "anchors": keys[str(c["id"])]} if keys.get(str(c["id"])) else c for c in job.contexts
        ]
        accounting = setup.client.accounting.run_fields()
        text = draft.text
        drafted = {
            "method": draft.method,
            "fallback": draft.fallback,
            "generation_mode": draft.mode,
            "citation_keys": draft.keys,
            "llm_calls": accounting["llm_calls"],
            "prompt_tokens": accounting["prompt_tokens"],
            "completion_tokens": accounting["completion_tokens"],
        }
    citations = len(citations_of(text, list(job.contexts) if contexts is None else contexts))
    if text != job.verification.answer_text or contexts is not None:  # a drafted or structured answer
        received = job.contexts if contexts is None else tuple(contexts)
        job = replace(job, contexts=received, verification=job.verification.with_answer(text, contexts))
    if not verify:
        return Computed(job=job, drafted=drafted, citations=citations, verified=None)
    # TooLarge when the answer has more claims than the workspace audits (a received answer's: counted)
    job = replace(job, verification=job.verification.with_claims())
    computed, structured = None, None
    if job.answer_json is not None:  # one claim per field, checked against the passages its refs name
        structured = structured_compute(job)
        audit = structured.audit
    else:
        audit = computed = audit_compute(job)
    result = audit.result
    evidence = evidence_rows_of(result, audit.kb_meta)  # the rows the claims are stored with
    escalation = web_escalation_of(result.claims, job.verification.thresholds)
    web = web_block(
        decision,
        escalation,
        structured=structured is not None,
        external_calls=job.workspace.allow_external_calls,
        plan=job.verification.plan,
    )
    web_pass = None
    if computed is not None and web and "status" not in web:  # the web must be consulted, now
        web_pass = web_compute(job=job, result=computed.result, evidence=evidence, reasons=escalation.reasons)
    verified = Verified(web=web, evidence=evidence, computed=audit, structured=structured, web_pass=web_pass)
    return Computed(job=job, drafted=drafted, citations=citations, verified=verified)
