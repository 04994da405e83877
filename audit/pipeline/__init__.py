"""Theoria's offline verification pipeline (plain Python, no Django).

Public interface::

    from audit.pipeline import audit_answer, verify_claim, verify_claims, extract_claims
    from audit.pipeline.embedding import get_embedder      # get_embedder().encode(texts)
    from audit.pipeline.index import HybridIndex, VectorIndex
    from audit.pipeline.retrieval import KnowledgeBase
    from audit.pipeline.types import Passage, ClaimDraft, EvidenceHit, MethodResult, ClaimVerdict, AuditResult
    from audit.pipeline.methods import REGISTRY, VerificationMethod, register
    from audit.pipeline.submission import submission  # one audit request, computed in one call

May import: only itself and the standard/scientific libraries: no Django, no model, no service.
"""

from audit.pipeline.audit import audit_answer, verify_claim, verify_claims
from audit.pipeline.extraction import claims_json, extract_claims
from audit.pipeline.retrieval import KnowledgeBase
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, MethodResult, Passage

__all__ = [
    "AuditResult",
    "ClaimDraft",
    "ClaimVerdict",
    "EvidenceHit",
    "KnowledgeBase",
    "MethodResult",
    "Passage",
    "audit_answer",
    "claims_json",
    "extract_claims",
    "verify_claim",
    "verify_claims",
]
