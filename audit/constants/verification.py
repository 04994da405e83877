"""The verification pipeline's defaults: labels, confidence, claims per answer, numeric checks.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Verification pipeline (docs/SPEC_NOTES.md#evidence-and-retrieval, #labels-verdicts-and-confidence) ---
# Owned by the pipeline (audit/pipeline/). Everything below is a default; a workspace may
# override any field of `Thresholds` by name through `Workspace.threshold_overrides`.
AUDIT_SCORE_THRESHOLD = (
    0.80  # SUPPORTED needs confidence >= this (docs/SPEC_NOTES.md#labels-verdicts-and-confidence)
)
SELFCHECK_DISAGREEMENT_THRESHOLD = 0.40  # docs/SPEC_NOTES.md#escalation-to-audit-web
LOW_CONFIDENCE_THRESHOLD = 0.60  # nightly re-check / escalation intake (docs/SPEC_NOTES.md#nightly-auditor)
COVERAGE_THRESHOLD = (
    0.85  # quality gate: evidence coverage (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
)
UNSUPPORTED_RATE_THRESHOLD = (
    0.05  # quality gate: unsupported rate (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
)
MAX_REVISIONS = 2  # docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop
# An answer with more claims is refused (HTTP 413) before any verification: one audit of 1,000
# claims ran a minute; a workspace may raise or lower this (threshold max_claims_per_answer).
MAX_CLAIMS_PER_ANSWER = 200
# An answer (the text sent to be audited) longer than this is refused (HTTP 413) before anything is
# read: 878 KB answers made their answer page 7.9 MB and the queue page of 20 of them 129 MB, and
# 400 KB of sentences just under MAX_VERIFIED_CLAIM_CHARS held a worker for three minutes.
MAX_ANSWER_CHARS = 200_000
# An answer at least this long is an expensive audit (seconds to minutes of CPU): one user runs at
# most EXPENSIVE_AUDITS_PER_USER of them at once; another is refused (429, Retry-After) while they
# run, so one client cannot hold every web worker. A slot not given back (a killed worker) is freed
# after EXPENSIVE_AUDIT_SLOT_S.
EXPENSIVE_AUDIT_CHARS = 20_000
EXPENSIVE_AUDITS_PER_USER = 1
EXPENSIVE_AUDIT_SLOT_S = 600
EXPENSIVE_AUDIT_RETRY_AFTER_S = 10
# A claim (one sentence of the answer) longer than this is not verified: no method reads it, its
# label is NEI with the high risk flag "too_long_to_verify" (never dropped). The longest claim of
# the demo answers has 193 characters; one planted sentence of 100,000 characters ("1 2 " x 25,000,
# no full stop) cost 28-38 s of role-binding parse and cross-encoder time in a single audit.
MAX_VERIFIED_CLAIM_CHARS = 2_000
TOO_LONG_FLAG = "too_long_to_verify"  # its risk flag; such a claim is not sent to the web step either
# The cost budget of one audit: the claims of an answer are read in the answer's order while their
# cost together stays within AUDIT_READ_BUDGET_CHARS, a claim costing its characters plus
# AUDIT_READ_COST_PER_CLAIM (a short claim against large evidence costs its search, its judge and
# its binding whatever its length). Every later claim is not read (no search, no method), its label
# is NEI with the high risk flag "over_read_budget" (never dropped), the run lists each of them, and
# the revision loop does not run on such an answer. Every stage (numbers, retrieval, judge, binding)
# reads only the claims inside the budget, so an audit's CPU is bounded by it whatever the answer's
# length (python -m tools.cost_probe prints it per family); the demo's longest answer costs 2,600.
AUDIT_READ_BUDGET_CHARS = 8_000
AUDIT_READ_COST_PER_CLAIM = 300
OVER_BUDGET_FLAG = "over_read_budget"  # its risk flag; such a claim is not sent to the web step either
# The evidence one claim's role binding parses: its evidence sentences in passage order until their
# characters pass this (coordinated clauses of 907 KB held the binding two minutes for 200 claims).
BINDING_MAX_EVIDENCE_CHARS = 20_000
# An audit whose estimated cost (audit.pipeline.cost: characters of the answer up to the read budget,
# plus the evidence sent with it weighted by AUDIT_COST_EVIDENCE_WEIGHT, plus AUDIT_COST_PER_SENTENCE
# per sentence) passes AUDIT_INLINE_COST_BUDGET runs on the task queue: the request answers 202 with
# the URL to poll, and the web worker is free at once. At most QUEUED_AUDITS_PER_USER of one user's
# queued audits wait or run at once (another is refused, 429 with Retry-After).
AUDIT_INLINE_COST_BUDGET = 8_000
AUDIT_COST_EVIDENCE_WEIGHT = 0.05
AUDIT_COST_PER_SENTENCE = 20
QUEUED_AUDITS_PER_USER = 2
QUEUED_AUDIT_RETRY_AFTER_S = 30
# The Retry-After of a job not yet finished (the 202 that queued it, each poll of GET /api/v1/jobs/<id>):
# how long a client waits before it polls again.
JOB_POLL_RETRY_AFTER_S = 2
SIMILARITY_THRESHOLD = (
    0.70  # semantic match of a claim to a passage (docs/SPEC_NOTES.md#declared-but-not-read)
)
WEAK_THRESHOLD = 0.50  # finer verdict "weak" from here up to AUDIT_SCORE_THRESHOLD (docs/SPEC_NOTES.md#labels-verdicts-and-confidence)
REFUTED_THRESHOLD = 0.50  # P(contradicted | not supported) at or above which the label is REFUTED
CONFLICT_THRESHOLD = 0.60  # two relevant sources whose support scores differ by this much conflict
NUMERIC_BOOST = 0.20  # docs/SPEC_NOTES.md#evidence-and-retrieval: relevance boost for passages with numbers a claim shares
NUMERIC_REL_TOLERANCE = 0.02  # docs/SPEC_NOTES.md#numeric-checks: rounding tolerance (3.2B vs 3.19B)
NUMERIC_APPROX_TOLERANCE = 0.10  # with "about", "approximately", "~", "nearly"
NUMERIC_RELEVANT_OVERLAP = (
    0.40  # an evidence sentence sharing this share of a claim's words can contradict its numbers
)
CONTRADICTION_CAP = 0.05  # confidence ceiling of a claim contradicted by numbers or by conflicting sources
# A claim's quantities compared with the evidence, at most (in order; the rest are counted as
# "unchecked"): each is compared with every quantity of the evidence, so a list of 30,000 numbers
# cost the product of the two counts (one audit of "1 2 " x 30,000: 53 s).
NUMERIC_MAX_CLAIM_QUANTITIES = 40
NUMERIC_ABSENT_MARGIN = (
    0.05  # a claim quantity found nowhere in the evidence keeps confidence this far below the threshold
)
