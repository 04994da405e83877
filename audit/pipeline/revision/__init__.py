"""Answer revision: repair what the audit found, then say clearly what could not be repaired.

Plain Python (no Django); a package along the loop's own steps: ``model`` (records, codes,
ledger), ``decision`` (1), ``corrective`` (2), ``sentences`` / ``editing`` / ``citations`` (3),
``tracing`` (the LLM rewrite), ``loop`` (4) and ``wiring`` (``revise_audit``). The names below
are exported from here, so ``from audit.pipeline.revision import …`` keeps working. The loop, citation
correction (CiteFix), softening and corrective retrieval: docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop.

The loop (``revise_answer``) works on any verifier: ``verify(text, passages) -> AuditResult``
(the pipeline's audit entry point) and optionally ``retrieve(queries) -> list[Passage]`` (the
knowledge-base index or the web) and ``rewriter(...) -> str`` (the LLM's ``rewrite_answer``).

1. ``decide_revision`` — stop when the quality gates hold (evidence coverage ≥ 85 %, no
   contradiction, no critical claim without evidence, unsupported rate ≤ 5 %: docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop
   ) or after ``max_revisions`` revisions; otherwise one instruction per claim.
2. Corrective retrieval — targeted queries for the claims nothing supports; new passages join
   the pool and the same text is verified again before any edit is planned.
3. ``plan_revision`` — deterministic rewriting of the claim sentences (offline), or the LLM
   rewrite when one is configured and its output is traceable (every changed region lies in a
   sentence it was told to change and every citation marker names a passage); otherwise the
   offline edits. Strategies, per sentence:
   - contradicted claim: CORRECT only the contradicted span (a value, unit, date, entity,
     predicate or polarity) with what one evidence sentence states, when the rest of the claim
     aligns with that sentence and the corrected claim is SUPPORTED by that passage under the
     judge that labels claims; never another sentence in its place; else remove or mark it disputed;
   - claim nothing supports: REMOVE (the sentence or its clause) or QUALIFY ("not found in
     the provided documents"); a sentence that also states a supported fact is never removed;
   - weak claim: SOFTEN (hedge / qualify / parenthetical, configurable); a hedge that cost a
     claim its support is taken back in the next attempt and not tried again;
   - a claim any attempt found supported or weak is never removed later;
   - citation correction: REPLACE a marker whose passage does not support the claim with the
     better passage, ADD_ALTERNATE the better passage next to it, REMOVE a marker that names
     no passage or supports nothing in its sentence — "supports" meaning one decision: the judge
     says SUPPORTED on that passage (``_Support``).
4. ``terminate`` — NO_IMPROVEMENT when the revisions did not improve on the original (the
   better version is kept), UNSUPPORTED_CLAIMS for material claims still without evidence.

Every edit names the claim (id and text, in the attempt it was planned from) and the strategy
that caused it; ``RevisionOutcome.history_json()`` is what the run stores.
"""

from __future__ import annotations

from audit.pipeline.revision.corrective import corrective_retrieval, targeted_queries
from audit.pipeline.revision.decision import decide_revision
from audit.pipeline.revision.editing import is_protected, plan_revision, replay_edits
from audit.pipeline.revision.loop import revise_answer, terminate
from audit.pipeline.revision.model import (
    CONTRADICTED,
    COVERED,
    NOT_FOUND,
    SUPPORTED,
    WEAK,
    CitationAction,
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
    Strategy,
    Verify,
    claim_ledger,
    ledger_summary,
    quality_key,
)
from audit.pipeline.revision.sentences import (
    DISPUTED_QUALIFIER,
    PROTECTED_CONTAINMENT,
    _rewrite_markers,
    claim_key,
    marker_for,
    soften,
    unsoften,
    verdicts_to_keep,
)
from audit.pipeline.revision.tracing import trace_changes
from audit.pipeline.revision.whole import judge_revised_sentences, judge_whole
from audit.pipeline.revision.wiring import kb_retriever, llm_rewriter, revise_audit, revise_job

__all__ = [
    "CONTRADICTED",
    "COVERED",
    "DISPUTED_QUALIFIER",
    "NOT_FOUND",
    "PROTECTED_CONTAINMENT",
    "SUPPORTED",
    "WEAK",
    "CitationAction",
    "Edit",
    "Judge",
    "Retrieve",
    "Reverify",
    "RevisionAttempt",
    "RevisionDecision",
    "RevisionOptions",
    "RevisionOutcome",
    "RevisionWarning",
    "Rewriter",
    "Strategy",
    "Verify",
    "_rewrite_markers",
    "claim_key",
    "claim_ledger",
    "corrective_retrieval",
    "decide_revision",
    "is_protected",
    "judge_revised_sentences",
    "judge_whole",
    "kb_retriever",
    "ledger_summary",
    "llm_rewriter",
    "marker_for",
    "plan_revision",
    "quality_key",
    "replay_edits",
    "revise_answer",
    "revise_audit",
    "revise_job",
    "soften",
    "targeted_queries",
    "terminate",
    "trace_changes",
    "unsoften",
    "verdicts_to_keep",
]
