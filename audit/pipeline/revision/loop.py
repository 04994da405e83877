"""4. The loop and its termination (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): verify, decide, retrieve, edit, verify again; keep the
best version."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from audit.constants import IMPORTANCE_MINOR, Thresholds
from audit.pipeline.revision.corrective import corrective_retrieval
from audit.pipeline.revision.decision import decide_revision
from audit.pipeline.revision.editing import plan_revision
from audit.pipeline.revision.model import (
    COVERED,
    NOT_FOUND,
    Edit,
    Judge,
    Retrieve,
    Reverify,
    RevisionAttempt,
    RevisionDecision,
    RevisionOptions,
    RevisionOutcome,
    RevisionWarning,
    Rewriter,
    Verify,
    quality_key,
)
from audit.pipeline.revision.sentences import _Anchors, marker_for, unsoften, verdicts_to_keep
from audit.pipeline.revision.tracing import _unbacked_correction, trace_changes
from audit.pipeline.text import content_stems, normalize
from audit.pipeline.types import AuditResult, ClaimVerdict, Passage


# --- 4. the loop and its termination (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop) ----------------------------------------
def terminate(attempts: list[RevisionAttempt]) -> tuple[int, list[dict[str, Any]]]:
    """The attempt to keep (the best; on a tie the latest) and the seed's termination warnings."""
    keys = [quality_key(a.summary) for a in attempts]
    kept = max(range(len(attempts)), key=lambda i: (keys[i], i))
    warnings: list[dict[str, Any]] = []
    if len(attempts) > 1:
        # the original as first verified: corrective retrieval counts as an improvement
        first, last = attempts[0].before_retrieval or attempts[0].summary, attempts[-1].summary
        if last["coverage"] <= first["coverage"] or keys[-1] < quality_key(first):
            warnings.append(
                {
                    "code": str(RevisionWarning.NO_IMPROVEMENT),
                    "message": "Revisions did not improve evidence coverage"
                    + (f"; attempt {kept} is kept" if kept != len(attempts) - 1 else ""),
                    "details": {"first": first, "last": last, "kept": kept},
                }
            )
    final = attempts[kept].result
    unsupported = [
        c for c in final.claims if c.verdict == NOT_FOUND and c.claim.importance != IMPORTANCE_MINOR
    ]
    if unsupported:
        warnings.append(
            {
                "code": str(RevisionWarning.UNSUPPORTED_CLAIMS),
                "message": f"{len(unsupported)} material claims could not be verified",
                "details": [c.claim.text for c in unsupported],
            }
        )
    return kept, warnings


def revise_answer(
    *,
    query: str,
    answer: str,
    passages: list[Passage],
    verify: Verify,
    retrieve: Retrieve | None = None,
    rewriter: Rewriter | None = None,
    thresholds: Thresholds = Thresholds(),  # pure-function default (tests, evaluation); revise_job passes its job's
    options: RevisionOptions = RevisionOptions(),
    initial: AuditResult | None = None,
    judge: Judge | None = None,
    given: int | None = None,
    reverify: Reverify | None = None,
) -> RevisionOutcome:
    """Run the revision loop of docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop on one answer and return every attempt.

    ``initial`` is the audit of ``answer`` when the caller already has it (it must have been
    computed on ``normalize(answer)``, as the pipeline does). A failing ``rewriter`` or one
    whose output is not traceable falls back to the offline strategies for that attempt.
    ``judge(text, passage)`` decides support on one passage (default: ``verify`` on that passage
    alone). A passage cited that is not one of ``passages`` (a knowledge-base or web passage)
    joins the pool and is named by its position, ``[n]``: no internal id reaches the text.
    ``given`` is how many of ``passages`` the request sent (all by default); the others are
    evidence (knowledge base, web) and are cited by position too. ``reverify`` re-verifies a
    revised text keeping the verdicts of the claims it did not change (default: ``verify`` on it all).
    """
    text = normalize(answer or "")
    pool, given = list(passages), len(passages) if given is None else min(given, len(passages))
    loop = _Loop(pool, given, verify, reverify, judge, thresholds, options)
    result = initial if initial is not None else verify(text, pool)
    attempts = [RevisionAttempt(0, text, result)]
    stop_reason = ""
    while True:
        current = attempts[-1]
        loop.protect(current.result)
        decision = loop.decide(current, len(attempts) - 1)
        if not decision.should_revise:
            stop_reason = decision.reason
            loop.check_final_citations(current, attempts)
            break
        if retrieve is not None and options.corrective_retrieval:
            decision = loop.retrieve_more(current, len(attempts) - 1, retrieve, query) or decision
        notes: list[str] = []
        if not decision.should_revise:
            # the extra evidence settled it: only cite the passages found (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
            stop_reason = decision.reason + " after corrective retrieval"
            new_text, edits, author = *loop.plan(current, replace(options, citations_only=True)), "offline"
        else:
            new_text, edits, author = loop.edit(current, decision, rewriter, query, notes)
        if not edits or new_text == current.text:
            stop_reason = stop_reason or "No applicable edits"
            break
        loop.unsoftenable += [
            set(content_stems(unsoften(e.claim_text))) for e in edits if e.action == "revert"
        ]
        attempts.append(
            RevisionAttempt(
                len(attempts), new_text, loop.verify_edited(new_text, current), edits, author, notes=notes
            )
        )
        if not decision.should_revise:
            break
    kept, warnings = terminate(attempts)
    return RevisionOutcome(
        original_text=answer or "",
        final_text=attempts[kept].text,
        final=attempts[kept].result,
        attempts=attempts,
        kept=kept,
        warnings=warnings,
        stop_reason=stop_reason,
        passages=pool,
        given=loop.given,
    )


@dataclass
class _Loop:
    """What the attempts of one revision loop share: the growing passage pool (``cite`` adds to it),
    the verifier and the judge, the passages corrective retrieval found, and the claims protected
    from removal or from softening again."""

    pool: list[Passage]
    given: int
    verify: Verify
    reverify: Reverify | None
    judge: Judge | None
    thresholds: Thresholds
    options: RevisionOptions
    retrieved_ids: set[str] = field(default_factory=set)
    protected: list[set[str]] = field(
        default_factory=list
    )  # claims once supported or weak are never removed later
    unsoftenable: list[set[str]] = field(default_factory=list)  # claims whose softening was taken back

    def __post_init__(self) -> None:
        if self.judge is None:

            def judge(claim_text: str, passage: Passage) -> ClaimVerdict | None:
                return next(iter(self.verify(claim_text, [passage]).claims), None)

            self.judge = judge

    def cite(self, passage: Passage) -> str:
        """The marker naming ``passage``: its own for a passage the request sent, else ``[n]``
        (its position in the pool, which it joins when new)."""
        position = next((i for i, p in enumerate(self.pool) if p.id == passage.id), None)
        if position is None:
            self.pool.append(passage)
            position = len(self.pool) - 1
        return marker_for(passage) if position < self.given else f"[{position + 1}]"

    def verify_edited(self, new_text: str, previous: RevisionAttempt) -> AuditResult:
        """Verify a revised text: claims the edit did not reword keep the verdicts they had on this pool."""
        if self.reverify is None:
            return self.verify(new_text, self.pool)
        return self.reverify(new_text, self.pool, verdicts_to_keep(previous.result))

    def protect(self, result: AuditResult) -> None:
        self.protected += [set(content_stems(c.claim.text)) for c in result.claims if c.verdict in COVERED]

    def decide(self, current: RevisionAttempt, revisions: int) -> RevisionDecision:
        current.decision = decide_revision(current.result.claims, revisions, self.thresholds, self.options)
        return current.decision

    def plan(self, current: RevisionAttempt, options: RevisionOptions) -> tuple[str, list[Edit]]:
        return plan_revision(
            current.text,
            current.result,
            self.pool,
            thresholds=self.thresholds,
            options=options,
            retrieved_ids=frozenset(self.retrieved_ids),
            protected=self.protected,
            unsoftenable=self.unsoftenable,
            judge=self.judge,
            cite=self.cite,
        )

    def check_final_citations(self, current: RevisionAttempt, attempts: list[RevisionAttempt]) -> None:
        """The text meets the thresholds, and its markers still follow the one support decision: a
        marker stays only where the judge finds the claim SUPPORTED by the passage it names."""
        new_text, edits = self.plan(current, replace(self.options, citations_only=True))
        if edits and new_text != current.text:
            attempts.append(
                RevisionAttempt(
                    len(attempts),
                    new_text,
                    self.verify_edited(new_text, current),
                    edits,
                    "offline",
                    notes=["citation markers checked against the final wording"],
                )
            )

    def retrieve_more(
        self, current: RevisionAttempt, revisions: int, retrieve: Retrieve, query: str
    ) -> RevisionDecision | None:
        """Corrective retrieval: passages found for the claims that need them join the pool and the
        attempt is verified again; return the new decision, or None when nothing was found."""
        new, records = corrective_retrieval(current.result.claims, self.pool, retrieve, query)
        current.retrieval = records
        if not new:
            return None
        current.notes.append(f"corrective retrieval added {len(new)} passage(s); re-verified")
        current.before_retrieval = current.summary
        self.pool.extend(new)
        self.retrieved_ids.update(p.id for p in new)
        current.result = self.verify(current.text, self.pool)  # re-verify with the extra evidence
        self.protect(current.result)
        return self.decide(current, revisions)

    def edit(
        self,
        current: RevisionAttempt,
        decision: RevisionDecision,
        rewriter: Rewriter | None,
        query: str,
        notes: list[str],
    ) -> tuple[str, list[Edit], str]:
        """The next attempt's text, edits and author: the LLM's rewrite when it is usable, else the
        offline strategies'."""
        if rewriter is not None:
            new_text, edits = self.rewrite(current, decision, rewriter, query, notes)
            if new_text is not None:
                return new_text, edits, "llm"
        return *self.plan(current, self.options), "offline"

    def rewrite(
        self,
        current: RevisionAttempt,
        decision: RevisionDecision,
        rewriter: Rewriter,
        query: str,
        notes: list[str],
    ) -> tuple[str | None, list[Edit]]:
        """The LLM's rewrite when every change traces to an instruction and every correction is
        backed by a passage, else (None, []) with the reason in ``notes`` (the offline path follows)."""
        try:
            candidate = normalize(
                rewriter(
                    query=query, answer=current.text, instructions=decision.instructions, passages=self.pool
                )
                or ""
            )
        except Exception as exc:  # the LLM is an edge: any failure means the offline path
            notes.append(f"LLM rewrite failed ({type(exc).__name__}): offline strategies used")
            return None, []
        traced, why = trace_changes(
            current.text, candidate, current.result.claims, decision.instructions, _Anchors(self.pool)
        )
        if traced and self.judge is not None:  # never None: ``__post_init__`` sets it
            why = _unbacked_correction(traced, _Anchors(self.pool), self.judge)
            traced = None if why else traced
        if traced:
            return candidate, traced
        notes.append(f"LLM rewrite rejected ({why or 'no change'}): offline strategies used")
        return None, []
