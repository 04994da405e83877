"""The revision loop.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Answer revision (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop) ----------------
# COVERAGE_THRESHOLD, UNSUPPORTED_RATE_THRESHOLD and MAX_REVISIONS above decide when to stop.
SOFTENING_STYLES = (
    "hedge",
    "qualify",
    "parenthetical",
)  # docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop
DEFAULT_SOFTENING_STYLE = "hedge"
SOFTENING_HEDGE = "reportedly"
SOFTENING_QUALIFY = "Some evidence suggests that"
SOFTENING_PARENTHETICAL = "(unverified)"
UNSUPPORTED_QUALIFIER = (
    "(not found in the provided documents)"  # docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop
)
UNSUPPORTED_ACTIONS = ("remove", "qualify")  # what to do with a material claim nothing supports
DEFAULT_UNSUPPORTED_ACTION = "qualify"  # removing cost 21 annotator-supported DEV sentences, qualifying 3
# A revision whose every edit is a citation edit (citation correction, corrective retrieval) leaves
# the answer's words alone. Where revisions are held for approval, such a revision is served at
# once: "hold" never, "unregulated" outside the workspace's regulated domains (default: off in
# regulated domains), "serve" everywhere (Workspace.citation_only_revisions).
CITATION_ONLY_STRATEGIES = ("citation", "corrective_retrieval")
CITATION_ONLY_REVISIONS = "unregulated"
NO_ANSWER_NOTICE = "I cannot find support for this answer in the provided documents."  # docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop
CITATION_REPLACE_MARGIN = (
    0.15  # another passage must beat the cited one's entailment by this to take its place
)
CORRECTION_MIN_ALIGNMENT = (
    0.60  # share of a contradicted claim's other content words its correcting evidence sentence must hold
)
# A revised sentence is judged whole (audit.pipeline.revision.whole): the structural check examines
# up to this many of its words that no evidence sentence states as substitutions (a claim: one).
WHOLE_SENTENCE_MAX_MISSING = 3
CORRECTIVE_QUERIES_PER_CLAIM = (
    3  # docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop: targeted queries per unsupported claim
)
CORRECTIVE_PASSAGES_PER_QUERY = 3  # extra passages kept per targeted query
