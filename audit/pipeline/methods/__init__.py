"""Verification method plug-ins; importing this package registers the offline methods."""

from audit.pipeline.methods import (conflict, cove, entailment, freshness,  # noqa: F401
                                    linguistic, numeric, structure)
from audit.pipeline.methods.base import (REGISTRY, VerificationMethod, VerifyContext, get_method, register,  # noqa: F401
                                         verify_context)
from audit.pipeline.methods.llm import LLM_METHODS  # registers llm_judge, llm_cove, selfcheck (docs/LLM.md)

OFFLINE_METHODS = ("entailment", "numeric", "structure", "cove", "conflict", "freshness", "linguistic")

__all__ = ["LLM_METHODS", "OFFLINE_METHODS", "REGISTRY", "VerificationMethod", "VerifyContext", "get_method",
           "register"]
