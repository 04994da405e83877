"""The judge: structural contradiction checks, role binding, the NLI reader, strictness and the cascade.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

import os

# Structural contradiction checks (audit/pipeline/contradiction.py): claim vs its best-aligned evidence sentence
STRUCTURE_MIN_ALIGNMENT = (
    0.60  # share of the claim's content words an evidence sentence must hold before a rule may fire
)
STRUCTURE_CLAUSE_MIN_ALIGNMENT = (
    0.67  # ... and the clause that carries the aligned predicate (negation check)
)
# the predicate polarity rule (contradiction.predicate_polarity); "0" reads negation by the clause rule
# alone: the switch `evaluate --claims-only` and `bench` are run with to measure the rule's gain and cost
NEGATION_PREDICATE_ON = os.environ.get("THEORIA_NEGATION_PREDICATE", "1") != "0"
NEGATION_PREDICATE_MIN_ALIGNMENT = 0.75  # predicate polarity (binding.polarity): share of the claim's other content lemmas the sentence holds
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
# At the fast depth it reads as many (the fast support head is fitted on this reading and on words-only
# features: `manage.py fit_nli --fast-head`). One sentence and no window, the reading floor's one pass a
# claim, cut the fast depth to 1.6-1.9x the floor but let 17 of the contrast suite's 808 minimal edits
# through as SUPPORTED (3 the other way): docs/ARCHITECTURE.md "One sentence a claim, measured and not shipped"
NLI_FAST_SENTENCES = 2
NLI_FAST_WINDOWS = 1
# A claim read against one of its passages alone (the per-passage judgements behind the evidence links,
# the conflict check and citations; the joint judgement decides the label) reads that passage's
# sentences only, no window: those windows were 28 % of the cross-encoder's pairs in `manage.py bench`;
# and only its one sentence sharing most words with the claim: a second was 1,118 of the 1,883 texts an
# answer's pairs read in `manage.py bench` (59 %; docs/ARCHITECTURE.md "Fewer passage readings, one parse pass")
NLI_PASSAGE_WINDOWS = 0
NLI_PASSAGE_SENTENCES = 1
# Whole passages read in chunks (AlignScore, MiniCheck): each passage is cut into runs of whole
# sentences that fit the cross-encoder beside the claim (NLI_CHUNK_WORDS words of evidence and claim
# together, the claim's words taken off; at least NLI_CHUNK_MIN_WORDS of evidence), and the
# NLI_CHUNKS chunks sharing most words with the claim are read besides the sentences and windows
# (the best reading is the best over all). 0 reads no chunk: measured on DEV at the reader
# (`python -m audit.evaluation.chunks_eval`, docs/ARCHITECTURE.md "A sharper reader").
NLI_CHUNKS = 0
NLI_CHUNK_WORDS = 90
NLI_CHUNK_MIN_WORDS = 30
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
# `evaluate`'s ranking figures: the catch rate at this macro false-alarm rate, one cut on P(supported)
RANKING_FALSE_ALARM = 0.25
# a local CrossEncoder / NLI model folder, set by the deployment's admin (never downloaded)
CROSS_ENCODER_PATH = os.environ.get("THEORIA_CROSS_ENCODER_PATH", "")
CROSS_ENCODER_WINDOWS = 3  # best-aligned evidence sentences (and as many 2-sentence windows) scored per claim
