"""The LLM-backed methods: token caps, budgets, the breaker and the LLM judge's weight.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

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
