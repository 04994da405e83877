"""Generation modes, verification depth profiles, structured answers, the async LLM step and the RAG score.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

import os

from audit.constants.judge import JUDGES, STRICTNESS_POINTS, VERIFICATION_DEPTHS

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
# unsupported_review (docs/SPEC_NOTES.md#human-escalation): which NEI claims go to people: "all" (default:
# every claim not labelled SUPPORTED opens a case or joins its open one) or "material" (minor NEI claims spared)
UNSUPPORTED_REVIEW_CHOICES = ("all", "material")
UNSUPPORTED_REVIEW = "all"
STRING_THRESHOLDS = {
    "verification_depth": VERIFICATION_DEPTHS,
    "judge": JUDGES,
    "strictness": ("", *STRICTNESS_POINTS),
    "verification_profile": tuple(VERIFICATION_PROFILES),
    "generation_mode": GENERATION_MODES,
    "deep_checks": DEEP_CHECKS,
    "auto_corrected_review": AUTO_CORRECTED_REVIEW_CHOICES,
    "unsupported_review": UNSUPPORTED_REVIEW_CHOICES,
}
# The two encoders' kernels (audit/pipeline/kernels.py): "auto" (bfloat16 where the processor has bf16
# instructions, AMX or AVX-512 BF16: 2x float32 for the bi-encoder, about 4x for the cross-encoder;
# float32 elsewhere, where torch emulates bfloat16 at about 6x float32's cost, and for the cross-encoder
# run by ONNX Runtime: 1 label of 1,098 moved on DEV), "bfloat16", "float32"
# or "int8" (dynamic int8 quantisation of the Linear layers, per output channel: not label-neutral for
# the cross-encoder, 5 % of pairs change class) or, for the cross-encoder only, "onnx" (float32 run by
# ONNX Runtime from a cached export, audit/pipeline/onnx_runner.py). bfloat16 against float32 on DEV, `evaluate
# --claims-only` under each and `compare_runs`: labels unmoved within the paired intervals
# (docs/ARCHITECTURE.md, "The cost of one reading").
EMBEDDING_DTYPE = os.environ.get("THEORIA_EMBEDDING_DTYPE", "auto")
NLI_KERNEL = os.environ.get("THEORIA_NLI_KERNEL", "auto")
MODEL_KERNELS = ("bfloat16", "float32", "int8", "onnx", "auto")
RETRIEVAL_FUSION_K = 60  # reciprocal-rank-fusion constant (dense + BM25)
CITED_PASSAGE_BONUS = 1.0  # a valid citation anchor puts its passage first
INDEX_DENSE_WEIGHT = 0.7  # hybrid index: fused = w * cosine + (1 - w) * BM25 / max BM25
INDEX_CANDIDATES_FACTOR = 4  # each side proposes k * this many candidates before fusion
# pgvector back end (audit/kb/pgvector.py): HNSW build parameters (pgvector's defaults) and the
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
