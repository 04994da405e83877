"""Audit domain models, one module per topic, re-exported here.

May import: ``audit.kb.pgvector`` (the vector field) and the shared foundations; never services,
selectors or pages.
"""

from .answers import Answer, Claim, Evidence, VerificationRun
from .api import BackgroundJob, BackgroundJobStatus, IdempotencyKey
from .events import AuditEvent
from .kb import Chunk, Document, SentenceEncoding
from .learning import CalibrationVersion, LLMWeightVersion, ReviewedExample
from .nightly import NightlyItem, NightlyReport
from .web import ExternalCall, WebCacheEntry
from .workspace import Conversation, UserProfile, Workspace

__all__ = [
    "Answer",
    "AuditEvent",
    "BackgroundJob",
    "BackgroundJobStatus",
    "CalibrationVersion",
    "Chunk",
    "Claim",
    "Conversation",
    "Document",
    "Evidence",
    "ExternalCall",
    "IdempotencyKey",
    "LLMWeightVersion",
    "NightlyItem",
    "NightlyReport",
    "ReviewedExample",
    "SentenceEncoding",
    "UserProfile",
    "VerificationRun",
    "WebCacheEntry",
    "Workspace",
]
