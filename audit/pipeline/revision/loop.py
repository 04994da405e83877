"""4. The loop and its termination (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): verify, decide, retrieve, edit, verify again; keep the
best version."""

from __future__ import annotations

from dataclasses import replace

from audit.constants import IMPORTANCE_MINOR, Thresholds
from audit.pipeline.revision.corrective import corrective_retrieval
from audit.pipeline.revision.decision import decide_revision
from audit.pipeline.revision.editing import plan_revision
from audit.pipeline.revision.model import (
    COVERED,
    NOT_FOUND,
    Judge,
    Retrieve,
    Reverify,
    RevisionAttempt,
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
def terminate(attempts: list[RevisionAttempt]) -> tuple[int, list[dict]]:
    """The attempt to keep (the best; on a tie the latest) and the seed's termination warnings."""
    keys = [quality_key(a.summary) for a in attempts]
    kept = max(range(len(attempts)), key=lambda i: (keys[i], i))
    warnings = []
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
    thresholds: Thresholds = Thresholds(),
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
    pool = list(passages)
    given = len(pool) if given is None else min(given, len(pool))
    if judge is None:

        def judge(claim_text: str, passage: Passage) -> ClaimVerdict | None:
            return next(iter(verify(claim_text, [passage]).claims), None)

    def cite(passage: Passage) -> str:
        position = next((i for i, p in enumerate(pool) if p.id == passage.id), None)
        if position is None:
            pool.append(passage)
            position = len(pool) - 1
        return marker_for(passage) if position < given else f"[{position + 1}]"

    def verify_edited(new_text: str, previous: RevisionAttempt) -> AuditResult:
        # claims the edit did not reword keep the verdicts they had on this pool
        if reverify is None:
            return verify(new_text, pool)
        return reverify(new_text, pool, verdicts_to_keep(previous.result))

    retrieved_ids: set[str] = set()
    result = initial if initial is not None else verify(text, pool)
    attempts = [RevisionAttempt(0, text, result)]
    protected: list[set[str]] = []  # claims once supported or weak are never removed later
    unsoftenable: list[set[str]] = []  # claims whose softening was taken back
    stop_reason = ""
    while True:
        current = attempts[-1]
        protected += [set(content_stems(c.claim.text)) for c in current.result.claims if c.verdict in COVERED]
        decision = decide_revision(current.result.claims, len(attempts) - 1, thresholds, options)
        current.decision = decision
        if not decision.should_revise:
            stop_reason = decision.reason
            # the text meets the thresholds, and its markers still follow the one support decision:
            # a marker stays only where the judge finds the claim SUPPORTED by the passage it names
            new_text, edits = plan_revision(
                current.text,
                current.result,
                pool,
                thresholds=thresholds,
                options=replace(options, citations_only=True),
                retrieved_ids=frozenset(retrieved_ids),
                protected=protected,
                unsoftenable=unsoftenable,
                judge=judge,
                cite=cite,
            )
            if edits and new_text != current.text:
                attempts.append(
                    RevisionAttempt(
                        len(attempts),
                        new_text,
                        verify_edited(new_text, current),
                        edits,
                        "offline",
                        notes=["citation markers checked against the final wording"],
                    )
                )
            break
        if retrieve is not None and options.corrective_retrieval:
            new, records = corrective_retrieval(current.result.claims, pool, retrieve, query)
            current.retrieval = records
            if new:
                current.notes.append(f"corrective retrieval added {len(new)} passage(s); re-verified")
                current.before_retrieval = current.summary
                pool.extend(new)
                retrieved_ids.update(p.id for p in new)
                current.result = verify(current.text, pool)  # re-verify with the extra evidence
                protected += [
                    set(content_stems(c.claim.text)) for c in current.result.claims if c.verdict in COVERED
                ]
                decision = decide_revision(current.result.claims, len(attempts) - 1, thresholds, options)
                current.decision = decision
        new_text, edits, author, notes = None, [], "offline", []
        plan_options = options
        if not decision.should_revise:
            # the extra evidence settled it: only cite the passages found (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
            stop_reason = decision.reason + " after corrective retrieval"
            plan_options = replace(options, citations_only=True)
        elif rewriter is not None:
            try:
                candidate = normalize(
                    rewriter(
                        query=query, answer=current.text, instructions=decision.instructions, passages=pool
                    )
                    or ""
                )
            except Exception as exc:  # the LLM is an edge: any failure means the offline path
                notes.append(f"LLM rewrite failed ({type(exc).__name__}): offline strategies used")
            else:
                traced, why = trace_changes(
                    current.text, candidate, current.result.claims, decision.instructions, _Anchors(pool)
                )
                if traced:
                    why = _unbacked_correction(traced, _Anchors(pool), judge)
                    traced = None if why else traced
                if traced:
                    new_text, edits, author = candidate, traced, "llm"
                else:
                    notes.append(f"LLM rewrite rejected ({why or 'no change'}): offline strategies used")
        if new_text is None:
            new_text, edits = plan_revision(
                current.text,
                current.result,
                pool,
                thresholds=thresholds,
                options=plan_options,
                retrieved_ids=frozenset(retrieved_ids),
                protected=protected,
                unsoftenable=unsoftenable,
                judge=judge,
                cite=cite,
            )
        if not edits or new_text == current.text:
            stop_reason = stop_reason or "No applicable edits"
            break
        unsoftenable += [set(content_stems(unsoften(e.claim_text))) for e in edits if e.action == "revert"]
        attempts.append(
            RevisionAttempt(
                len(attempts), new_text, verify_edited(new_text, current), edits, author, notes=notes
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
        given=given,
    )
