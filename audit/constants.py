"""Every threshold, limit, SLA and weight of Theoria, once, with the seed value as default.

Plain Python (no Django): the pipeline, the services, the admin and the tests all import from
here. A workspace may override the verification thresholds in the database
(``Workspace.threshold_overrides``); :func:`thresholds_for` merges such overrides over these
defaults. Sources: docs/SPEC_NOTES.md (each value with its source in the design documents).
"""

from __future__ import annotations

import os

# --- Operating modes (docs/SPEC_NOTES.md#modes) -------------------------------------------------------------
MODE_NORMAL = "normal"
MODE_AUDIT_LOCAL = "audit-local"
MODE_AUDIT_WEB = "audit-web"
MODES = (MODE_NORMAL, MODE_AUDIT_LOCAL, MODE_AUDIT_WEB)

# --- Data retention and freshness (docs/SPEC_NOTES.md#freshness-and-retention) ---------------------------
DEFAULT_RETENTION_DAYS = 90
DEFAULT_FRESHNESS_MONTHS = {"neuroscience": 18, "general": 36}
FALLBACK_FRESHNESS_MONTHS = 36

# --- Nightly batch auditor and retention (docs/SPEC_NOTES.md#nightly-auditor, docs/SPEC_NOTES.md#freshness-and-retention) ------------------------
# The nightly job re-checks the day's REFUTED/NEI claims below LOW_CONFIDENCE_THRESHOLD.
NIGHTLY_LABELS = ("REFUTED", "NEI")
NIGHTLY_BATCH_SIZE = 256  # claims embedded, searched and committed together (one transaction)
NIGHTLY_TOP_FAILING_DOCUMENTS = 10  # rows of "top failing KB documents" in the report
NIGHTLY_REVIEW_LIMIT = 200  # at most this many "recommended for human review" rows in the report
NIGHTLY_WEB_MAX_CLAIMS = 50  # web checks per nightly run (weakest claims first), where the workspace allows
# The nightly pass runs the fast depth unless the workspace sets verification_depth itself: the
# full depth measured 16 claims/s against 250 fast (1,000 bench claims, 2 cores), far from the
# target of 10,000 claims in 2 minutes. The claims whose label the fast pass would change are
# re-verified at the full depth before the change is recorded, at most this many per run.
NIGHTLY_VERIFICATION_DEPTH = "fast"
NIGHTLY_FULL_DEPTH_MAX_CLAIMS = 300
RETENTION_DELETE_BATCH = 500  # answers deleted per statement

# --- Knowledge-base ingestion (docs/SPEC_NOTES.md#evidence-and-retrieval: 8000 chars, 1000 overlap) ---------------------
# The seed's 8000-character chunks suit long web pages; a knowledge base of notes is searched
# better with paragraph-sized chunks, so the default is smaller and both are configurable
# (THEORIA_CHUNK_SIZE / THEORIA_CHUNK_OVERLAP or `ingest_kb --chunk-size/--overlap`).
CHUNK_SIZE_CHARS = 1200
CHUNK_OVERLAP_CHARS = 200
SEED_CHUNK_SIZE_CHARS = 8000
SEED_CHUNK_OVERLAP_CHARS = 1000
EMBEDDING_DIM = 384
EMBEDDING_BATCH_SIZE = 64
INGEST_MAX_FILE_BYTES = 20 * 1024 * 1024
# JSON from users (API bodies, .jsonl records, JSON fields of the admin; audit.pipeline.json_limits):
# deeper nesting or longer integers are a 400 naming where (no setting or record needs either)
JSON_MAX_DEPTH = 32
JSON_MAX_INT_DIGITS = 18  # every integer setting fits (the largest, llm_token_budget, is at most 10**12)

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
# A claim (one sentence of the answer) longer than this is not verified: no method reads it, its
# label is NEI with the high risk flag "too_long_to_verify" (never dropped). The longest claim of
# the demo answers has 193 characters; one planted sentence of 100,000 characters ("1 2 " x 25,000,
# no full stop) cost 28-38 s of role-binding parse and cross-encoder time in a single audit.
MAX_VERIFIED_CLAIM_CHARS = 2_000
TOO_LONG_FLAG = "too_long_to_verify"  # its risk flag; such a claim is not sent to the web step either
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
# Structural contradiction checks (audit/pipeline/contradiction.py): claim vs its best-aligned evidence sentence
STRUCTURE_MIN_ALIGNMENT = (
    0.60  # share of the claim's content words an evidence sentence must hold before a rule may fire
)
STRUCTURE_CLAUSE_MIN_ALIGNMENT = (
    0.67  # ... and the clause that carries the aligned predicate (negation check)
)
STRUCTURE_ANTONYM_CLAUSE_SHARED = (
    2  # an antonym counts in a clause sharing this many other content words with the claim
)
STRUCTURE_SUBSTITUTION_MAX_COS = (
    0.60  # a slot filler this close (embedding cosine) to the claim's word is a synonym, not a substitution
)
STRUCTURE_CONTRADICTION_CAP = 0.05  # confidence ceiling of a claim a structural rule contradicts
STRUCTURE_P_REFUTED = 0.90  # P(contradicted) set by a structural contradiction (REFUTED at REFUTED_THRESHOLD)
STRUCTURE_ENTITY_MARGIN = (
    0.05  # a key entity of the claim missing from the evidence keeps confidence this far below the threshold
)
# Role binding (audit/pipeline/binding.py): who did what, read from a dependency parse
BINDING_SAME_ARG_COS = 0.80  # two argument phrases this close (embedding cosine) name the same thing
BINDING_SAME_PRED_COS = 0.60  # a predicate this close to the claim's may agree with it (never contradict)
BINDING_MAX_SENTENCES = 80  # evidence sentences the binding parses per claim (in passage order)
# ... and none longer than this (audit.pipeline.contradiction: a longer one is not parsed): the
# binding's parse grows with the sentence, and a claim longer than MAX_VERIFIED_CLAIM_CHARS is not read
BINDING_MAX_SENTENCE_CHARS = 2_000
# content of the claim no evidence sentence states (binding.unstated_content) keeps it below SUPPORTED
BINDING_UNSTATED_ON = True
BINDING_UNSTATED_MAX_COS = 0.50  # a word this close (embedding cosine) to an evidence word is stated
# tuned on DEV (docs/ARCHITECTURE.md, "Who did what, and nothing more"): from this many unstated names
BINDING_UNSTATED_SALIENT = 2
BINDING_UNSTATED_OTHER = 5  # ... or this many other unstated content words (0 = never)
MIN_SEARCH_RELEVANCE = 0.25  # searched (uncited) passages below this fused retrieval score are not evidence
LINGUISTIC_BASE = 0.50  # docs/SPEC_NOTES.md#labels-verdicts-and-confidence: base score
LINGUISTIC_STEP = 0.15  # docs/SPEC_NOTES.md#labels-verdicts-and-confidence: per high/low confidence indicator
ATOMIC_MIN_WORDS = 8  # docs/SPEC_NOTES.md#claims: skip decomposition below this many words
RETRIEVAL_TOP_K = 5  # passages kept per claim
RETRIEVE_MAX_TOP_K = 50  # POST /api/v1/retrieve: most passages one request may ask for
# "full": the entailment judge embeds the evidence sentences (most accurate); "fast": it reads the
# words only (no model time beyond the claims' own embeddings; see docs/ARCHITECTURE.md for both)
VERIFICATION_DEPTH = "full"
VERIFICATION_DEPTHS = ("full", "fast")
# The entailment judge (audit/pipeline/judges.py): "nli" (the default: a MiniLM cross-encoder trained
# on public entailment pairs, stacked with the features), "features" (the fitted feature model), "learned"
# (a cross-attention head over MiniLM word-piece states stacked with the features), "cross-encoder" (a local sentence-transformers CrossEncoder at CROSS_ENCODER_PATH) or "llm" (the
# isolated LLM judge; the features judge decides where no LLM answers). A workspace picks one.
JUDGE = "nli"
JUDGES = ("features", "learned", "nli", "cross-encoder", "llm")
# The NLI judge's cross-encoder reads, per claim, the evidence sentences and two-sentence windows that
# share most words with it (audit/pipeline/nli_judge.py): its cost per claim stays bounded
NLI_SENTENCES = 2
NLI_WINDOWS = 1
# Evidence that holds none of the claim's content words, in a text the cross-encoder does not read as
# entailing it (P(entailment) below NLI_UNRELATED_MAX_ENTAIL), never supports the claim: its calibrated
# P(supported) is at most NLI_UNRELATED_MAX_P (on DEV, 15 of the 53 such claims are supported: 28 %).
# A citation is judged on its passage alone, where an unrelated passage is common.
NLI_UNRELATED_MAX_ENTAIL = 0.5
NLI_UNRELATED_MAX_P = 0.28
# Strictness (operating point) of the judge's decision: a cut on its calibrated P(supported) at or
# above which a claim may be SUPPORTED. "balanced" is the judge's own DEV-chosen cut (best mean bAcc);
# each other point is the least strict cut whose macro DEV catch rate (of the claims gold does not call
# SUPPORTED, the share not labelled SUPPORTED) reaches its target. `manage.py evaluate --operating-points`
# computes the cuts and their DEV figures from grouped-CV predictions into OPERATING_POINTS_FILE beside
# the judge's artefact; the settings page reads that file. "" = the default: STRICTNESS_DEFAULT, or
# STRICTNESS_REGULATED in a workspace's regulated domains (Workspace.is_regulated).
STRICTNESS_POINTS = ("balanced", "strict", "regulated")
STRICTNESS_MIN_CATCH = {"strict": 0.80, "regulated": 0.85}
STRICTNESS_DEFAULT = "balanced"
STRICTNESS_REGULATED = "regulated"
OPERATING_POINTS_FILE = "operating_points.json"
# The NLI judge's cascade (audit/pipeline/cascade.py): the features head's calibrated P settles the pairs
# it is sure of, cut on DEV grouped-CV predictions so that each side's settled claims are at least this
# share right; the cross-encoder reads the rest. `manage.py evaluate --fit-cascade` writes CASCADE_FILE.
NLI_CASCADE = os.environ.get("THEORIA_NLI_CASCADE", "1") != "0"  # "0": the reader reads every pair
CASCADE_MIN_SETTLED_ACCURACY = 0.97
# The cheap signals settle only "not supported": a minimal edit ("some" -> "all", "may" -> "must", a dropped
# condition) shares every word with its source, so the features head is as sure of it as of a copy (on DEV
# the high side was 97.4 % right, but it let 5 of tests/judge/test_reading.py's hand cases through). A
# claim the cheap signals wrongly call unsupported goes to a person; one they wrongly call supported does not.
CASCADE_SETTLES_SUPPORTED = False
CASCADE_FILE = "cascade.json"
# `evaluate`'s intervals: percentile bootstrap over answers (groups), the same seed every run
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20261128
BOOTSTRAP_CONFIDENCE = 0.95
# a local CrossEncoder / NLI model folder, set by the deployment's admin (never downloaded)
CROSS_ENCODER_PATH = os.environ.get("THEORIA_CROSS_ENCODER_PATH", "")
CROSS_ENCODER_WINDOWS = 3  # best-aligned evidence sentences (and as many 2-sentence windows) scored per claim
# Generation modes of docs/SPEC_NOTES.md#verification-depths-and-profiles, for answers Theoria drafts with an LLM: "strict" (every
# sentence cited, nothing beyond the passages), "natural" (balanced), "classical" (free prose with
# [Title](url) links). strict/natural cite with human-readable keys: [Arxiv], [Arxiv-2] on a collision.
GENERATION_MODES = ("strict", "natural", "classical")
DEFAULT_GENERATION_MODE = "natural"
CITATION_KEY_MAX_CHARS = 24  # a key is letters and digits, at most this long (then "-2", "-3" on collisions)
# Verification depth profiles of docs/SPEC_NOTES.md#verification-depths-and-profiles ("Per-Depth Configuration") mapped onto the existing
# settings: verification_depth, the methods run (numeric QA = the "numeric" method), the LLM
# methods, the revision loop's max_revisions (stage 7; None keeps the workspace's), Audit-Web
# (stage 7's external search) and the generation mode used when none is chosen.
VERIFICATION_PROFILES = {
    "light": {
        "verification_depth": "fast",
        "numeric_qa": False,
        "llm_methods": False,
        "max_revisions": 0,
        "web": False,
        "generation_mode": "natural",
    },
    "medium": {
        "verification_depth": "full",
        "numeric_qa": True,
        "llm_methods": True,
        "max_revisions": 1,
        "web": True,
        "generation_mode": "natural",
    },
    "extended": {
        "verification_depth": "full",
        "numeric_qa": True,
        "llm_methods": True,
        "max_revisions": None,
        "web": True,
        "generation_mode": "strict",
    },
}
# Structured JSON answers (docs/SPEC_NOTES.md#structured-answers): every field with a
# sibling "<field>_source_refs" is a claim verified against the passages its refs name (stages 4-6)
STRUCTURED_REFS_SUFFIX = "_source_refs"
STRUCTURED_MAX_FIELDS = 50  # docs/SPEC_NOTES.md#structured-answers; more fields with refs is a 400
STRUCTURED_MAX_DEPTH = 16  # levels of nesting of an answer_json (objects and arrays); deeper is a 400
STRUCTURED_FIX_CANDIDATES = 3  # citation fix (stage 5): other passages tried per unsupported field
# Threshold overrides that take a word, not a number: name -> the values allowed (the API and the
# admin accept exactly these; see audit.services.modes.thresholds_check). The profile and the
# generation mode default to "" (no profile: the thresholds as set; generation: the profile's, else natural).
# asynchronous deep checks (docs/LLM.md): "sync" runs the LLM methods inside the request (under
# LLM_TIME_BUDGET_S); "async" answers with the offline Audit-Local result at once and runs the LLM
# methods (judge, CoVe, SelfCheck) in a django-q2 task that relabels the claim cards
DEEP_CHECKS = ("sync", "async")
DEEP_CHECKS_DEFAULT = "sync"
# auto_corrected_review (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop): which claims refuted as received but corrected by the revision
# loop go to people: "all" (default: a person confirms every correction) or "material" (minor claims
# whose correction verified SUPPORTED are spared; a refuted claim without one is always reviewed).
AUTO_CORRECTED_REVIEW_CHOICES = ("all", "material")
AUTO_CORRECTED_REVIEW = "all"
STRING_THRESHOLDS = {
    "verification_depth": VERIFICATION_DEPTHS,
    "judge": JUDGES,
    "strictness": ("", *STRICTNESS_POINTS),
    "verification_profile": tuple(VERIFICATION_PROFILES),
    "generation_mode": GENERATION_MODES,
    "deep_checks": DEEP_CHECKS,
    "auto_corrected_review": AUTO_CORRECTED_REVIEW_CHOICES,
}
# the embedding model runs in bfloat16 on CPU: 2x faster than float32 here, vectors at cosine 0.99995
EMBEDDING_DTYPE = os.environ.get("THEORIA_EMBEDDING_DTYPE", "bfloat16")
RETRIEVAL_FUSION_K = 60  # reciprocal-rank-fusion constant (dense + BM25)
CITED_PASSAGE_BONUS = 1.0  # a valid citation anchor puts its passage first
INDEX_DENSE_WEIGHT = 0.7  # hybrid index: fused = w * cosine + (1 - w) * BM25 / max BM25
INDEX_CANDIDATES_FACTOR = 4  # each side proposes k * this many candidates before fusion
# pgvector back end (audit/kb_pgvector.py): HNSW build parameters (pgvector's defaults) and the
# search breadth; recall@10 against exact search is measured by `manage.py bench --backend pgvector`.
PGVECTOR_HNSW_M = 16
PGVECTOR_HNSW_EF_CONSTRUCTION = 64
PGVECTOR_EF_SEARCH = 40
# keyword matches ranked per query: past this many (a phrase in thousands of chunks) the newest
# this-many are ranked (the same ones every time), which bounds the lexical leg's cost on large
# knowledge bases
PGVECTOR_LEXICAL_SCAN_CAP = 2000
# answer-level audit_score = weighted mean of these metrics (weights sum to 1)
AUDIT_SCORE_WEIGHTS = {
    "faithfulness": 0.5,
    "mean_confidence": 0.3,
    "answer_relevance": 0.1,
    "context_precision": 0.1,
}
# Weighted RAG verification score of docs/SPEC_NOTES.md#the-rag-score (audit/pipeline/rag_score.py): alignment of the answer
# with its top sources, citation coverage, fact verification; score = weighted mean (weights are
# normalised by their sum, so an override need not sum to 1)
RAG_SCORE_WEIGHTS = {"alignment": 0.4, "citation_coverage": 0.3, "fact_score": 0.3}
RAG_ALIGNMENT_SOURCES = 5  # docs/SPEC_NOTES.md#the-rag-score: alignment reads the top 5 chunks
RAG_CITATION_PATTERN_STEP = 0.1  # docs/SPEC_NOTES.md#the-rag-score: each citation pattern ("according to", "[Source: 1]") adds this ...
RAG_CITATION_PATTERN_MAX = 0.3  # ... up to this bonus
RAG_NEUTRAL_SCORE = 0.5  # docs/SPEC_NOTES.md#the-rag-score: a part that cannot run scores this
# --- LLM-backed methods (docs/LLM.md; docs/SPEC_NOTES.md#claims, docs/SPEC_NOTES.md#labels-verdicts-and-confidence) ----------------------
# Deployment values (base URL, key, model, timeout, retries, concurrency) are Django settings
# (THEORIA["LLM_*"]); these are the method parameters.
LLM_TEMPERATURE = 0.0  # deterministic prompts (extraction, judge, CoVe)
LLM_SEED = 7  # sent with every deterministic call; servers that support it repeat themselves
LLM_MAX_TOKENS = 800  # completion cap of a call whose task names no cap of its own
# completion cap per task (docs/LLM.md): a batched task gets ``base + per_item * items``, capped at
# LLM_MAX_TOKENS_CEILING; small caps keep a looping model from burning the budget and the clock
LLM_TASK_MAX_TOKENS = {
    "extract_claims": (80, 60),  # + 60 a sentence of the answer
    "judge": (40, 90),  # + 90 a claim of the batch
    "cove_questions": (30, 60),  # + 60 a claim
    "cove_answer": (30, 70),  # + 70 a question
    "cove_compare": (30, 40),  # + 40 a claim
    "selfcheck_sample": (220, 0),
    "selfcheck_judge": (30, 25),  # + 25 a claim
    "draft_answer": (350, 0),
    "rewrite_answer": (120, 0),  # + the answer's own length, see drafting.rewrite_answer
    "probe": (24, 0),
    "minicheck": (4, 0),  # one word: Yes or No
}
LLM_MAX_TOKENS_CEILING = 1500
# calls in flight to one endpoint from all audits of the process (setting THEORIA_LLM_CONCURRENCY):
# 1 suits servers that serve one request at a time (llama.cpp with one slot); waiting for a slot
# counts against the audit's LLM time budget
LLM_CONCURRENCY = 1
LLM_BATCH_CLAIMS = 8  # claims per batched call (judge, CoVe questions, CoVe comparison)
LLM_MIN_COMPLETION_TOKENS = 16  # a call left fewer tokens than this by the budget is not made
# time budget of an audit's synchronous part (setting THEORIA_LLM_TIME_BUDGET_S overrides): past it
# no LLM call is started, the offline verdicts stand and the methods not done say "budget"
LLM_TIME_BUDGET_S = 20.0
LLM_MIN_CALL_S = 0.5  # a call is not started with less time than this left in the budget
# per-endpoint circuit breaker (docs/LLM.md#failures-timeouts-and-cost): it trips on outages, not on
# one bad answer. LLM_BREAKER_FAILURES transport failures in a row (timeouts, connection resets, 5xx
# or 429 after retries) open it for the cool-down; 401/403/404 and a refused connection open it at
# once. An unusable reply (empty, invalid JSON, breaking the schema) is the task's failure (repaired
# once, then the task falls back): it opens the circuit only through the failure rate of the
# endpoint's last LLM_BREAKER_WINDOW outcomes, at least LLM_BREAKER_FAILURE_RATE of at least
# LLM_BREAKER_MIN_OUTCOMES (a server answering garbage; a weak model's occasional bad reply does not)
LLM_BREAKER_FAILURES = 3
LLM_BREAKER_COOLDOWN_S = 30.0
LLM_BREAKER_WINDOW = 20
LLM_BREAKER_MIN_OUTCOMES = 10
LLM_BREAKER_FAILURE_RATE = 0.8
LLM_ASYNC_TIME_BUDGET_S = 300.0  # the LLM time of one asynchronous deep check
LLM_RETRY_BACKOFF_S = 0.5  # first back-off on 429/5xx without Retry-After; doubles each retry
LLM_RETRY_MAX_WAIT_S = 10.0  # a Retry-After longer than this is not waited for: the call fails
LLM_EVIDENCE_PASSAGES = 3  # passages the isolated judge sees per claim
LLM_EVIDENCE_CHARS = 1200  # characters per passage sent to the LLM
# isolated verification verdict (docs/SPEC_NOTES.md#labels-verdicts-and-confidence) -> (P(supported), P(refuted), FEVER label, finer
# verdict); scoring weighs the two probabilities with the offline judge's (LLM_JUDGE_WEIGHT below).
LLM_JUDGE_VERDICTS = {
    "SUPPORTED": (0.95, 0.0, "SUPPORTED", "supported"),
    "PARTIAL": (0.60, 0.05, "NEI", "weak"),
    "UNSUPPORTED": (0.20, 0.10, "NEI", "not_found"),
    "CONTRADICTED": (0.05, 0.95, "REFUTED", "contradicted"),
}
# The LLM judge's verdict is one signal beside the offline judge's (docs/LLM.md#weighing-the-llm-judge):
# where both agree, or the offline judge is unsure (its confidence within LLM_OFFLINE_CONFIDENT_MARGIN
# of the SUPPORTED threshold, or its P(refuted) that close to the REFUTED one), the confidence moves
# by LLM_JUDGE_WEIGHT towards the LLM's; where the LLM disagrees with a confident offline verdict,
# the offline verdict stands and the claim goes to review ("llm_disagreement"). The weight and the
# margin are fitted per workspace, endpoint and model (`evaluate --judge llm --fit`, stored as an
# LLMWeightVersion, audit/services/llm_weight.py); until a fit exists these apply: weight 0 (the LLM
# moves no verdict) and margin 0 (every disagreement with the offline verdict goes to review).
LLM_JUDGE_WEIGHT = 0.0
LLM_OFFLINE_CONFIDENT_MARGIN = 0.0
# the fit's grid (docs/LLM.md#fitting-the-llms-weight): every (weight, margin) pair is scored by the
# 2-class balanced accuracy of the labels it gives; ties go to the smaller weight, then the larger
# margin (fewer review cases), so an uninformative endpoint is fitted to weight 0 and sends nothing to
# review. The held-out figures come from grouped folds (by answer): LLM_FIT_FOLDS of them
LLM_FIT_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
LLM_FIT_MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 1.0)
LLM_FIT_FOLDS = 5
LLM_FIT_MIN_CLAIMS = 20  # fewer answered claims than this: no fit is stored
LLM_FIT_MAX_CALLS = 300  # default bound on the fit's LLM calls (--max-calls)
# The MiniCheck-style LLM judge (audit/pipeline/llm/minicheck.py, THEORIA_LLM_JUDGE_PROMPT=minicheck): a
# claim is read against chunks of at most MINICHECK_CHUNK_CHARS characters (about 250 words) of its
# evidence, at most MINICHECK_MAX_CHUNKS of them (one call each); the reading stops at the first chunk
# that supports it
MINICHECK_CHUNK_CHARS = 1500
MINICHECK_MAX_CHUNKS = 4
LLM_JUDGE_PROMPTS = ("batched", "minicheck")
COVE_MAX_QUESTIONS = (
    2  # verification questions per claim (docs/SPEC_NOTES.md#verification-depths-and-profiles)
)
SELFCHECK_SAMPLES = 3  # k alternate answers (docs/SPEC_NOTES.md#verification-depths-and-profiles)
SELFCHECK_TEMPERATURE = 0.7  # controlled temperature of the samples
DRAFT_MAX_SENTENCES = 4  # offline extractive draft: sentences kept
IMPORTANCE_CRITICAL = "critical"
IMPORTANCE_MATERIAL = "material"
IMPORTANCE_MINOR = "minor"

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

# --- Audit-Web: controlled verification against allow-listed web sources (docs/SPEC_NOTES.md#escalation-to-audit-web) --
WEB_TIMEOUT_S = 10.0  # wall-clock limit of one external call, redirects and body included
WEB_MAX_RESPONSE_BYTES = 5 * 1024 * 1024  # body cap, enforced while streaming
WEB_MAX_REDIRECTS = 5  # each hop is checked against the allow-list and the address policy
WEB_CACHE_TTL_SECONDS = 24 * 3600  # a cached response is reused for this long
WEB_CACHE_MAX_BODY_BYTES = 2 * 1024 * 1024  # larger responses are used but not cached
WEB_RESULTS_PER_PROVIDER = 3  # documents kept per provider and claim
WEB_MAX_CLAIMS_PER_ANSWER = 10  # weakest first; the rest keep their local result
WEB_QUERY_MAX_TERMS = 10  # content words of the claim sent as the search query
WEB_PASSAGE_MAX_CHARS = 4000  # text of one web document handed to the verifier
WEB_SELFCHECK_METRIC = "selfcheck_disagreement"  # claim metric compared to the threshold
WEB_STALE_FLAG = "outdated_source"  # claim risk flag that escalates on its own

# --- Human escalation (docs/SPEC_NOTES.md#human-escalation; used by escalation/policy.py) -----------------------
# Tier -> (clock, amount): "wall" seconds, "business" seconds inside the workspace's business
# hours, or "business_days" (a day = the length of the calendar's working day).
SLA_CLOCK_WALL = "wall"
SLA_CLOCK_BUSINESS = "business"
SLA_CLOCK_BUSINESS_DAYS = "business_days"
SLA_BY_TIER = {
    1: (SLA_CLOCK_WALL, 30 * 60),  # L1 on-call analyst: 30 minutes to acknowledge and triage
    2: (SLA_CLOCK_BUSINESS, 4 * 3600),  # L2 domain expert: 4 business hours
    3: (SLA_CLOCK_BUSINESS_DAYS, 1),  # L3 compliance lead: 1 business day
}
# A tier listed here has two clocks: its SLA_BY_TIER clock is to acknowledge, and acknowledging
# starts its resolution clock. At the other tiers the SLA_BY_TIER clock runs until the case is
# resolved. Either clock's breach is a breach (the sweep marks and alerts it).
SLA_ACKNOWLEDGE_TIERS = (1,)
# Resolution target per tier. L1 (project choice): 4 business hours from the acknowledgement to
# resolve or escalate, as long as L2 has. L2 and L3: their SLA_BY_TIER clock.
SLA_RESOLUTION_BY_TIER = {1: (SLA_CLOCK_BUSINESS, 4 * 3600), 2: SLA_BY_TIER[2], 3: SLA_BY_TIER[3]}
SLA_AT_RISK_SHARE = 0.80  # a case is "at risk" once this share of its tier's SLA is used
ESCALATION_TICKET_PREFIX = "COMP-ESC"
# Default business calendar of a workspace without its own (Mon-Fri 09:00-17:00 UTC).
DEFAULT_CALENDAR_TIMEZONE = "UTC"
DEFAULT_WORKING_DAYS = (0, 1, 2, 3, 4)  # Monday = 0
DEFAULT_WORKDAY_START = "09:00"
DEFAULT_WORKDAY_END = "17:00"
# Risk score of a case in [0, 1]: weighted sum of the claim's importance, label, lack of
# confidence and whether its domain is regulated (weights sum to 1).
RISK_WEIGHTS = {"importance": 0.35, "label": 0.25, "doubt": 0.25, "regulated": 0.15}
RISK_IMPORTANCE = {IMPORTANCE_CRITICAL: 1.0, IMPORTANCE_MATERIAL: 0.6, IMPORTANCE_MINOR: 0.2}
RISK_LABEL = {"REFUTED": 1.0, "NEI": 0.6, "SUPPORTED": 0.2}
NOTIFICATION_MAX_ATTEMPTS = 3
WEBHOOK_TIMEOUT_S = 5.0
WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024  # a webhook's reply is not used; reading stops past this
EMAIL_TIMEOUT_S = 10  # SMTP connect/send timeout (Django EMAIL_TIMEOUT)
# A notification left "sending" this long (the sender crashed mid-send) is retried exactly once.
NOTIFICATION_STUCK_AFTER_S = 10 * 60

# --- Analyst pages and dashboard (docs/SPEC_NOTES.md#analyst-pages) ----------------------------------------------------
UI_CLAIMS_PER_PAGE = 50  # rows of a claim list page
UI_CASES_PER_PAGE = 50  # rows of the escalation queue page
UI_EVIDENCE_MIN_ALIGNMENT = (
    0.4  # a passage bears on a claim when its best sentence holds this share of the claim's content words
)
UI_NIGHTLY_REPORTS_LISTED = 60  # days of nightly reports listed on the report page
UI_PROPOSALS_LISTED = 20  # held revisions shown on the queue page (oldest first; the rest on the answers)
UI_HOME_DEADLINES = 3  # next deadlines on the home page
# The word diff of a revised answer (answer page, queue page) costs bounded time on any text: the
# common start and end are matched in one pass, the changed sentences in between are aligned, then
# the words of each changed stretch. Beyond these bounds the page says the texts are too long to
# compare instead of aligning them (difflib costs the product of the two lengths on repetitive text).
DIFF_MAX_CHANGED_SENTENCES = 300  # changed sentences (either side) aligned sentence by sentence
DIFF_MAX_WORD_CELLS = 400_000  # words × words compared over all changed stretches of one diff
# Success metrics (docs/SPEC_NOTES.md#success-metrics) (the dashboard's KPI tiles).
SUCCESS_SUPPORTED_SHARE_MIN = 0.90  # audited claims SUPPORTED without human intervention
SUCCESS_MISSING_EVIDENCE_SHARE_MAX = 0.05  # audited claims escalated because evidence was missing
SUCCESS_AUDIT_LATENCY_MS_MAX = 2000.0  # mean latency an Audit-Local audit adds to an answer
SUCCESS_BACKLOG_CHANGE_MAX = -0.30  # knowledge-base correction backlog change over a quarter
SUCCESS_BACKLOG_WINDOW_DAYS = 90  # the quarter the backlog change is measured over
DASHBOARD_DEFAULT_RANGE_DAYS = 30  # the dashboard shows the last 30 days unless a range is given
DASHBOARD_MAX_RANGE_DAYS = 366  # a longer range is refused (400): the charts plot one point per day
# the dashboard's figures are cached per workspace and range until a row changes, and at most this long
DASHBOARD_CACHE_SECONDS = 120
# Queue-aging buckets of the dashboard: (upper bound in seconds, label); the last is open-ended.
QUEUE_AGING_BUCKETS = (
    (30 * 60, "< 30 min"),
    (4 * 3600, "30 min – 4 h"),
    (24 * 3600, "4 h – 1 day"),
    (3 * 24 * 3600, "1 – 3 days"),
    (None, "> 3 days"),
)

# --- Learning from reviewers (docs/ARCHITECTURE.md "Learning from reviewers") ---------------------
# Every case resolution and revision review is a labelled example; `calibrate` refits a
# workspace's decision threshold, confidence calibration (Platt on the judge's support logit) and
# the judge's stacker weights from them, by grouped cross-validation.
# With fewer reviewed examples than CALIBRATION_MIN_EXAMPLES, or fewer than CALIBRATION_MIN_PER_CLASS
# that the reviewers found SUPPORTED (or not), nothing is fitted and `calibrate` says how many more.
CALIBRATION_MIN_EXAMPLES = 60
CALIBRATION_MIN_PER_CLASS = 15
CALIBRATION_MAX_EXAMPLES = 2000  # the newest this-many examples are used (a refit stays cheap)
CALIBRATION_FOLDS = 5  # grouped folds (by answer: no answer straddles a fold)
# A candidate is kept only when, out of fold, its 2-class balanced accuracy beats the judge as shipped
# by this margin, the lower end of a paired bootstrap interval of that gain (over answers) is above
# zero, and its ECE is no worse than this tolerance. A refit that only flattens the confidences
# (reviewers who disagree at random) decides no better and is declined.
CALIBRATION_MIN_BACC_GAIN = 0.02
CALIBRATION_MAX_ECE_LOSS = 0.02
CALIBRATION_BOOTSTRAP_ROUNDS = 400
CALIBRATION_BOOTSTRAP_CONFIDENCE = 0.90  # two-sided: the 5th percentile of the gain must be above 0
CALIBRATION_STACKER_L2 = 4.0  # pull of the refitted stacker toward the shipped weights (standardised inputs)
CALIBRATION_PLATT_L2 = 1.0  # pull of (a, b) toward (1, 0)
# The decision threshold is searched in this range (a calibrated confidence under 0.5 says the claim is
# more likely unsupported: SUPPORTED never needs less) ...
CALIBRATION_THRESHOLD_RANGE = (0.50, 0.95)
CALIBRATION_THRESHOLD_STEP = 0.01  # ... at this step (ties: the value nearest the threshold in force)
CALIBRATION_ECE_BINS = 10  # equal-width bins of the expected calibration error and the reliability diagram
# Reviewer agreement and label drift (dashboard, daily check): a domain whose reviewers agreed with
# the machine less than REVIEW_DRIFT_MIN_AGREEMENT over the last REVIEW_DRIFT_WINDOW_DAYS days (at
# least REVIEW_DRIFT_MIN_EXAMPLES decisions) alerts the workspace's notification targets, once a window.
REVIEW_DRIFT_WINDOW_DAYS = 14
REVIEW_DRIFT_MIN_AGREEMENT = 0.70
REVIEW_DRIFT_MIN_EXAMPLES = 10


from dataclasses import dataclass, field, fields, replace  # noqa: E402


@dataclass(frozen=True)
class Thresholds:
    """The verification thresholds in force for one audit (defaults = seed values)."""

    audit_score_threshold: float = AUDIT_SCORE_THRESHOLD
    selfcheck_disagreement_threshold: float = SELFCHECK_DISAGREEMENT_THRESHOLD
    low_confidence_threshold: float = LOW_CONFIDENCE_THRESHOLD
    coverage_threshold: float = COVERAGE_THRESHOLD
    unsupported_rate_threshold: float = UNSUPPORTED_RATE_THRESHOLD
    max_revisions: int = MAX_REVISIONS
    max_claims_per_answer: int = MAX_CLAIMS_PER_ANSWER
    similarity_threshold: float = SIMILARITY_THRESHOLD
    weak_threshold: float = WEAK_THRESHOLD
    refuted_threshold: float = REFUTED_THRESHOLD
    conflict_threshold: float = CONFLICT_THRESHOLD
    numeric_boost: float = NUMERIC_BOOST
    numeric_rel_tolerance: float = NUMERIC_REL_TOLERANCE
    numeric_approx_tolerance: float = NUMERIC_APPROX_TOLERANCE
    retrieval_top_k: int = RETRIEVAL_TOP_K
    verification_depth: str = VERIFICATION_DEPTH
    judge: str = JUDGE
    strictness: str = (
        ""  # "" or one of STRICTNESS_POINTS ("": balanced; regulated domains: STRICTNESS_REGULATED)
    )
    verification_profile: str = ""  # "" or a key of VERIFICATION_PROFILES
    generation_mode: str = ""  # "" or one of GENERATION_MODES
    deep_checks: str = DEEP_CHECKS_DEFAULT  # the workspace's default for requests naming no "deep"
    freshness_months: dict = field(default_factory=lambda: dict(DEFAULT_FRESHNESS_MONTHS))
    fallback_freshness_months: int = FALLBACK_FRESHNESS_MONTHS
    audit_score_weights: dict = field(default_factory=lambda: dict(AUDIT_SCORE_WEIGHTS))
    rag_score_weights: dict = field(default_factory=lambda: dict(RAG_SCORE_WEIGHTS))
    sla_at_risk_share: float = SLA_AT_RISK_SHARE
    auto_corrected_review: str = AUTO_CORRECTED_REVIEW
    # The workspace's calibration in force (an ``audit.pipeline.calibration.Calibration``), attached
    # by ``audit.selectors.api.thresholds_for``; not a setting: no override, form or API sets it.
    calibration: object = field(default=None, compare=False, metadata={"internal": True})

    def updated(self, overrides: dict | None) -> "Thresholds":
        """A copy with the known keys of ``overrides`` applied; unknown keys raise ValueError."""
        if not overrides:
            return self
        names = {f.name for f in setting_fields()}
        unknown = set(overrides) - names
        if unknown:
            raise ValueError(f"unknown threshold(s): {', '.join(sorted(unknown))}")
        values = dict(overrides)
        for key, allowed in STRING_THRESHOLDS.items():
            if key in values and values[key] not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}")
        for key in ("freshness_months", "audit_score_weights", "rag_score_weights"):
            if key in values:
                values[key] = {**getattr(self, key), **values[key]}
        return replace(self, **values)

    def freshness_for(self, domain: str | None) -> int:
        return int(self.freshness_months.get((domain or "").lower(), self.fallback_freshness_months))

    def is_weak(self, label: str, confidence: float) -> bool:
        """The weak-claim rule: REFUTED or NEI below ``low_confidence_threshold`` (a claim at the bar
        is not weak). ``audit.selectors.weak_claims.weak_claims_q`` is the same rule in SQL."""
        return label in NIGHTLY_LABELS and confidence < self.low_confidence_threshold


def is_regulated(domain: str | None, regulated_domains) -> bool:
    """Whether ``domain`` is one of ``regulated_domains`` (case-insensitive; no domain is never
    regulated): the one rule behind Audit-Local's trigger, a case's risk and reasons, and the
    revisions a workspace holds (``Workspace.is_regulated``)."""
    return bool(domain) and domain.lower() in {str(d).lower() for d in regulated_domains or ()}


def setting_fields():
    """The fields of :class:`Thresholds` a workspace may override (every one but the internal ones)."""
    return [f for f in fields(Thresholds) if not f.metadata.get("internal")]


# --- Ranges of the settings a workspace may change (API, admin console; checked again when read) ---
# Whole-number thresholds and their inclusive ranges; every other number threshold is a share in
# [0, 1], and the values of the dict-valued ones are ranged below. A stored value outside its
# range (written before a check existed, or by hand) is ignored when read: the default applies.
INT_THRESHOLD_RANGES = {
    "max_revisions": (0, 10),
    "retrieval_top_k": (1, 100),
    "max_claims_per_answer": (1, 5000),
    "fallback_freshness_months": (1, 1200),
}
# Shares whose 0 would be meaningless: at 0 every case would be "at risk" the moment it opens.
SHARES_ABOVE_ZERO = frozenset({"sla_at_risk_share"})
FRESHNESS_MONTHS_RANGE = (1, 1200)  # a domain's maximum source age (freshness_months, freshness_policy)
WEIGHT_RANGE = (0.0, 100.0)  # one weight of audit_score_weights / rag_score_weights
RETENTION_DAYS_RANGE = (1, 36500)  # Workspace.retention_days: one day to a hundred years
LLM_TOKEN_BUDGET_MAX = 10**12


def _number(value) -> bool:
    """A finite int or float (never a bool). An int of any size is finite: ``math.isfinite`` would
    convert it to a float first and overflow on a 400-digit one."""
    import math

    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def whole_number_problem(value, low: int, high: int) -> str | None:
    """Why ``value`` is not a whole number in [low, high] (None when it is)."""
    if not _number(value) or int(value) != value:
        return f"must be a whole number between {low} and {high}."
    if not low <= value <= high:
        return f"must be between {low} and {high}."
    return None


def threshold_problem(name: str, value) -> tuple[str, str] | None:
    """(key, message) of what makes ``value`` unusable as threshold ``name``; None when it is usable.

    The one check of a threshold override: finite numbers, whole numbers where whole numbers are
    meant, each in its documented range, known words for the string-valued ones.
    """
    default = getattr(Thresholds(), name, None)
    if not any(f.name == name for f in setting_fields()):
        return name, f"unknown threshold(s): {name}; see audit.constants.Thresholds."
    if name in STRING_THRESHOLDS:
        allowed = STRING_THRESHOLDS[name]
        return (
            None
            if isinstance(value, str) and value in allowed
            else (name, f"must be one of {', '.join(allowed)}.")
        )
    if isinstance(default, dict):
        if not isinstance(value, dict):
            return name, "must be an object."
        weights = name.endswith("_weights")
        for key, item in value.items():
            if weights and key not in default:
                return f"{name}.{key}", f"is not a weight; use {', '.join(default)}."
            if weights:
                low, high = WEIGHT_RANGE
                if not _number(item) or not low <= item <= high:
                    return f"{name}.{key}", f"must be a number between {low:g} and {high:g}."
            elif problem := whole_number_problem(item, *FRESHNESS_MONTHS_RANGE):
                return f"{name}.{key}", problem
        if weights and not sum({**default, **value}.values()) > 0:
            return name, "needs at least one weight above 0."
        return None
    if name in INT_THRESHOLD_RANGES:
        problem = whole_number_problem(value, *INT_THRESHOLD_RANGES[name])
        return (name, problem) if problem else None
    if name in SHARES_ABOVE_ZERO and _number(value) and value == 0:
        return name, "must be above 0 and at most 1: at 0 every case would be at risk the moment it opens."
    if not _number(value) or not 0.0 <= value <= 1.0:
        return name, "must be a number between 0 and 1."
    return None


def threshold_problems(overrides) -> list[tuple[str, str]]:
    """Every (key, message) of :func:`threshold_problem` over a dict of overrides, not only the first."""
    if not isinstance(overrides, dict):
        return [("threshold_overrides", "must be an object.")]
    return [problem for name, value in overrides.items() if (problem := threshold_problem(name, value))]


def usable_overrides(overrides) -> dict:
    """The stored overrides that pass :func:`threshold_problem` (whole numbers as ints): what is read.

    A bad stored value never breaks an audit, the nightly job or a purge: it is skipped, so the
    default applies, and the settings page shows the override beside what is in force.
    """
    if not isinstance(overrides, dict):
        return {}
    out = {}
    for name, value in overrides.items():
        if threshold_problem(name, value) is None:
            out[name] = int(value) if name in INT_THRESHOLD_RANGES else value
    return out
