"""Batch re-verification of stored claims against the refreshed knowledge base (nightly auditor).

For a batch of claims: one embedding call for all claim texts, one ``search_many`` over the
workspace index (``audit.selectors.kb_index``), then the pipeline's verification over every
(claim, evidence) pair at once; then, where the workspace allows external calls, the claims still
weak are checked on the web through the Audit-Web service (a bounded number per run). No
database writes here: the caller stores each batch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from audit import constants
from audit.models import Claim, Workspace
from audit.pipeline.audit import run_methods
from audit.pipeline.encodings import EncodingStore
from audit.pipeline.job import VerificationJob, job_context
from audit.pipeline.retrieval import retrieve
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit, Label
from audit.selectors import kb_index
from audit.services.job import audit_job_build
from audit.services.web import web_verify_claim

if TYPE_CHECKING:
    from audit.kb.search import InProcessKnowledgeBase, PgKnowledgeBase
    from audit.pipeline.embedding import Embedder

logger = logging.getLogger(__name__)

OFFLINE = "the nightly re-check runs the offline methods"  # its jobs set up no LLM client


@dataclass
class Recheck:
    """The outcome of re-verifying one claim."""

    label: str
    verdict: str
    confidence: float
    evidence: list[dict[str, Any]] = field(
        default_factory=list
    )  # [{source_id, document_id, relevance, entailment}]
    documents: list[int] = field(default_factory=list)  # KB documents of the evidence, best first
    web: dict[str, Any] | None = (
        None  # the web check's verdict, when one ran: {label, verdict, confidence, used}
    )
    depth: str = ""  # the verification depth of the KB verdict ("fast", or "full" where it was confirmed)

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "verdict": self.verdict,
            "confidence": round(self.confidence, 6),
            "evidence": self.evidence,
            "documents": self.documents,
            "web": self.web,
            "depth": self.depth,
        }


def _document_id(kb: InProcessKnowledgeBase | PgKnowledgeBase, source_id: str) -> int | None:
    meta = kb.meta_for([source_id]).get(source_id)
    return meta.document_pk if meta is not None else None


def nightly_job(workspace: Workspace, *, domain: str = "", depth: str | None = None) -> VerificationJob:
    """The nightly re-check's job for the answers of ``domain`` (offline; ``depth`` replaces the
    verification depth, ValueError on an unknown one)."""
    return audit_job_build(
        workspace, query="", answer_text="", domain=domain, offline=OFFLINE, depth=depth
    ).verification


class Reverifier:
    """Re-verifies batches of claims for one workspace with one loaded index and embedder.

    Each claim is judged by the job of its answer's domain (``audit_job_build``: the strictness its
    audit had), at the run's ``depth`` (None: the workspace's); the plain job (no domain) sets the
    search and the run's depth.
    """

    def __init__(
        self,
        *,
        workspace: Workspace,
        depth: str | None = None,
        plain: VerificationJob | None = None,
        kb: InProcessKnowledgeBase | PgKnowledgeBase | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        from audit.pipeline.embedding import get_embedder

        self.workspace = workspace
        self.depth = depth
        self._jobs: dict[str, VerificationJob] = {"": plain} if plain is not None else {}
        self.job = self.job_for("")
        self.thresholds = self.job.thresholds
        self.kb = kb if kb is not None else kb_index(workspace)
        self.embedder = embedder or get_embedder()
        self.web_budget = constants.NIGHTLY_WEB_MAX_CLAIMS if workspace.allow_external_calls else 0
        # a fast pass confirms the label changes it would record at the full depth, within a budget
        self.full_budget = (
            constants.NIGHTLY_FULL_DEPTH_MAX_CLAIMS if self.thresholds.verification_depth == "fast" else 0
        )

    def job_for(self, domain: str) -> VerificationJob:
        """The verification job of the answers of ``domain`` (built once per domain and run)."""
        if domain not in self._jobs:
            self._jobs[domain] = nightly_job(self.workspace, domain=domain, depth=self.depth)
        return self._jobs[domain]

    def retrieve(self, drafts: list[ClaimDraft]) -> list[list[EvidenceHit]]:
        """Embed every claim once and search the refreshed index for all of them in one call.

        Only the knowledge base is searched: the passages sent with each original request
        were already judged when the answer was audited; what may have changed is the KB.
        """
        if not drafts:
            return []
        kb = self.kb.for_pipeline()
        vectors = self.embedder.encode([d.text for d in drafts])
        return retrieve(
            drafts, [], kb=kb, embed=self.embedder.encode, thresholds=self.thresholds, claim_vecs=vectors
        )

    def recheck(
        self, drafts: list[ClaimDraft], claims: list[Claim], timings: dict[str, Any] | None = None
    ) -> list[Recheck]:
        """Return one :class:`Recheck` per draft, in order; add stage seconds to ``timings``."""
        t0 = time.perf_counter()
        hits = self.retrieve(drafts)
        t1 = time.perf_counter()
        verdicts: dict[int, ClaimVerdict] = {}  # by the draft's index
        self._verify_by_domain(range(len(drafts)), drafts, claims, hits, verdicts)
        depths = [self.thresholds.verification_depth] * len(drafts)
        self._confirm_full(drafts, claims, hits, verdicts, depths)
        if timings is not None:
            timings["retrieve"] = timings.get("retrieve", 0.0) + (t1 - t0)
            timings["verify"] = timings.get("verify", 0.0) + (time.perf_counter() - t1)
        out = []
        for i, (claim_hits, depth) in enumerate(zip(hits, depths)):
            verdict = verdicts[i]
            document_ids = [_document_id(self.kb, h.passage.id) for h in claim_hits]
            evidence = [
                {
                    "source_id": h.passage.id,
                    "document_id": document_id,
                    "relevance": round(h.relevance, 4),
                    "entailment": round(h.entailment, 4),
                }
                for h, document_id in zip(claim_hits, document_ids)
            ]
            documents = list(dict.fromkeys(d for d in document_ids if d is not None))
            out.append(
                Recheck(
                    label=verdict.label,
                    verdict=verdict.verdict,
                    confidence=float(verdict.confidence),
                    evidence=evidence,
                    documents=documents,
                    depth=depth,
                )
            )
        if self.web_budget > 0:
            t2 = time.perf_counter()
            self._web_pass(drafts, claims, out)
            if timings is not None:
                timings["web"] = timings.get("web", 0.0) + (time.perf_counter() - t2)
        return out

    def _confirm_full(
        self,
        drafts: list[ClaimDraft],
        claims: list[Claim],
        hits: list[list[EvidenceHit]],
        verdicts: dict[int, ClaimVerdict],
        depths: list[str],
    ) -> None:
        """Re-verify at the full depth the claims whose label the fast pass would change (in place).

        Drift is what the report and the audit trail record, so it is checked with the accurate
        depth while the run's budget (``NIGHTLY_FULL_DEPTH_MAX_CLAIMS``) lasts; the other claims keep
        their fast verdict.
        """
        if self.full_budget <= 0:
            return
        todo = [i for i, claim in enumerate(claims) if verdicts[i].label != claim.machine_label][
            : self.full_budget
        ]
        if not todo:
            return
        self.full_budget -= len(todo)
        self._verify_by_domain(todo, drafts, claims, hits, verdicts, depth="full")
        for i in todo:
            depths[i] = "full"

    def _verify_by_domain(
        self,
        indices: Iterable[int],
        drafts: list[ClaimDraft],
        claims: list[Claim],
        hits: list[list[EvidenceHit]],
        verdicts: dict[int, ClaimVerdict],
        depth: str | None = None,
    ) -> None:
        """Verify the claims at ``indices`` into ``verdicts``, one call per answer domain (its job),
        at ``depth`` when given."""
        by_domain: dict[str, list[int]] = {}
        for i in indices:
            by_domain.setdefault(claims[i].answer.domain, []).append(i)
        for domain, idx in by_domain.items():
            job = self.job_for(domain)
            job = job.at_depth(depth) if depth else job
            for i, v in zip(
                idx,
                verify_batch(
                    [drafts[i] for i in idx],
                    [hits[i] for i in idx],
                    job,
                    self.embedder.encode,
                    encodings=self.kb.for_pipeline().encodings,
                ),
            ):
                verdicts[i] = v

    def _web_pass(self, drafts: list[ClaimDraft], claims: list[Claim], out: list[Recheck]) -> None:
        """Check the claims still weak after the KB pass on the web, weakest first, within budget.

        Uses the Audit-Web service (allow-list, residency switch, cache and call log are its
        business). A decisive web verdict (SUPPORTED or REFUTED) replaces the KB verdict; a web
        NEI leaves it, since the web holding nothing does not undo what the KB says.
        """
        weak = sorted(
            (
                i
                for i, r in enumerate(out)
                if self.job_for(claims[i].answer.domain).thresholds.is_weak(r.label, r.confidence)
            ),
            key=lambda i: out[i].confidence,
        )
        for i in weak[: self.web_budget]:
            self.web_budget -= 1
            try:
                verdict = web_verify_claim(
                    workspace=self.workspace, claim=drafts[i], job=self.job_for(claims[i].answer.domain)
                )
            except Exception:  # a web failure must not stop the night: the KB verdict stands
                logger.warning("nightly web check failed for %r", drafts[i].text[:80], exc_info=True)
                continue
            if verdict is None:
                continue
            used = verdict.label != Label.NEI
            out[i].web = {
                "label": verdict.label,
                "verdict": verdict.verdict,
                "confidence": round(float(verdict.confidence), 6),
                "used": used,
            }
            if used:
                out[i].label, out[i].verdict, out[i].confidence = (
                    verdict.label,
                    verdict.verdict,
                    float(verdict.confidence),
                )


def verify_batch(
    drafts: list[ClaimDraft],
    hits: list[list[EvidenceHit]],
    job: VerificationJob,
    embed: Callable[[list[str]], Any],
    encodings: EncodingStore | None = None,
) -> list[ClaimVerdict]:
    """Run the pipeline's offline methods over every (claim, evidence) pair and label each claim
    by ``job``'s thresholds and domain (its query is empty: a claim is re-checked on its own);
    ``encodings``: the knowledge base's sentences encoded at ingestion."""
    return run_methods(list(zip(drafts, hits)), job_context(job, embed=embed, encodings=encodings))
