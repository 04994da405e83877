"""One verification job: everything the pipeline reads to verify one answer, typed and Django-free.

A ``VerificationJob`` is built once per audit by the service ``audit.services.job.audit_job_build``
(the only place that reads a workspace's thresholds and sets up its LLM client) and handed to every
step that verifies: ``audit_answer`` (:func:`audit.pipeline.audit.audit_job`), ``run_methods``
(through :func:`job_context`), the web step and the revision loop. Nothing below it reads the
thresholds again or falls back to ``Thresholds()``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from audit.constants import Thresholds
from audit.errors import TooLarge
from audit.pipeline.extraction import extract_claims
from audit.pipeline.llm.client import LLMClient
from audit.pipeline.methods import VerifyContext, verify_context
from audit.pipeline.profiles import VerificationPlan
from audit.pipeline.retrieval import as_passages
from audit.pipeline.types import ClaimDraft, Passage


@dataclass(frozen=True)
class VerificationJob:
    """What one verification reads: the request, the rules it is judged by and the LLM it may call."""

    query: str
    answer_text: str
    passages: tuple[Passage, ...]  # the request's passages (typed; the knowledge base is searched besides)
    thresholds: Thresholds  # the workspace's, at the answer's domain strictness (calibration applied)
    plan: VerificationPlan  # the request's profile applied to ``thresholds``
    domain: str = ""
    reference: str | None = None
    # the client the verification may call, which carries the request's token and time budget
    # (``LLMClient.accounting``); None: offline (``offline_reason`` says why, "" when by choice)
    llm: LLMClient | None = None
    offline_reason: str = ""
    # the answer's claims by the offline extractor, extracted once (``with_claims``); None: not yet
    claims: tuple[ClaimDraft, ...] | None = None
    binding: bool = True  # the role binding runs (``contradiction``); the bench compares without it

    @property
    def llm_methods(self) -> LLMClient | None:
        """The client the LLM methods and LLM extraction use: none when the plan runs no LLM method."""
        return self.llm if self.plan.llm_methods else None

    def with_answer(self, answer_text: str, passages: Any = None) -> VerificationJob:
        """The same job for another text (a drafted or revised answer), with other passages if given."""
        if passages is None:
            return replace(self, answer_text=answer_text, claims=None)
        return replace(self, answer_text=answer_text, passages=passages_of(passages), claims=None)

    def with_claims(self) -> VerificationJob:
        """The job with its answer's claims extracted (offline extractor), once: the pipeline's
        audit of this job uses them instead of extracting again. Refuses (``TooLarge``, 413) an
        answer with more claims than the job's thresholds audit (``max_claims_per_answer``), before
        any verification: extraction stops at the first claim past the limit."""
        if self.claims is not None:
            return self
        limit = self.thresholds.max_claims_per_answer
        claims = tuple(extract_claims(self.answer_text, self.query, limit=limit))
        if len(claims) > limit:
            raise TooLarge(
                "answer",
                f"has more than {limit} claims; this workspace audits at most {limit} claims per answer "
                f"(threshold max_claims_per_answer). Split the answer or raise the threshold.",
            )
        return replace(self, claims=claims)

    def with_passages(self, passages: Iterable[Passage]) -> VerificationJob:
        """The same job over other passages, typed already (the web step's evidence pool)."""
        return replace(self, passages=tuple(passages))

    def offline(self) -> VerificationJob:
        """The same job without its LLM (the LLM methods left to a later step)."""
        return replace(self, llm=None)

    def at_depth(self, depth: str) -> VerificationJob:
        """The same job at another verification depth ("full" or "fast"); ValueError on another."""
        thresholds = self.thresholds.updated({"verification_depth": depth})
        return replace(self, thresholds=thresholds, plan=replace(self.plan, thresholds=thresholds))


def passages_of(contexts: Any) -> tuple[Passage, ...]:
    """The typed passages of request contexts (strings, dicts or Passages)."""
    return tuple(as_passages(contexts))


def job_context(
    job: VerificationJob,
    *,
    embed: Any = None,
    now: datetime | None = None,
    llm: LLMClient | None = None,
    progress: Any = None,
    encode_tokens: Any = None,
    encodings: Any = None,
) -> VerifyContext:
    """The methods' context for ``job`` (``run_methods(items, job_context(job), ...)``): its
    thresholds, domain and query; ``llm`` (default none) is the client an LLM method may call;
    ``encodings`` the store of the knowledge base's sentences encoded at ingestion."""
    return verify_context(
        job.thresholds,
        now=now,
        domain=job.domain,
        query=job.query,
        embed=embed,
        llm=llm,
        progress=progress,
        encode_tokens=encode_tokens,
        binding=job.binding,
        encodings=encodings,
    )
