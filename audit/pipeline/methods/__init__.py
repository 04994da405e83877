"""Verification method plug-ins; importing this package registers the offline methods."""

# importing the method modules registers them
from audit.pipeline.methods import conflict, cove, entailment, freshness, linguistic, numeric, structure
from audit.pipeline.methods.base import (
    REGISTRY,
    VerificationMethod,
    VerifyContext,
    get_method,
    record_results,
    register,
    results_for,
    verify_context,
)
from audit.pipeline.methods.llm import LLM_METHODS  # registers llm_judge, llm_cove, selfcheck (docs/LLM.md)

OFFLINE_METHODS = ("entailment", "numeric", "structure", "cove", "conflict", "freshness", "linguistic")

__all__ = [
    "LLM_METHODS",
    "OFFLINE_METHODS",
    "REGISTRY",
    "VerificationMethod",
    "VerifyContext",
    "conflict",
    "cove",
    "entailment",
    "freshness",
    "get_method",
    "linguistic",
    "numeric",
    "record_results",
    "register",
    "results_for",
    "structure",
    "verify_context",
]
