"""Audit domain models, one module per topic, re-exported here."""

from .answers import Answer, Claim, Evidence, VerificationRun
from .api import IdempotencyKey
from .events import AuditEvent
from .kb import Chunk, Document
from .nightly import NightlyItem, NightlyReport
from .web import ExternalCall, WebCacheEntry
from .workspace import Conversation, UserProfile, Workspace

__all__ = [
    "Answer",
    "AuditEvent",
    "Chunk",
    "Claim",
    "Conversation",
    "Document",
    "Evidence",
    "ExternalCall",
    "IdempotencyKey",
    "NightlyItem",
    "NightlyReport",
    "UserProfile",
    "VerificationRun",
    "WebCacheEntry",
    "Workspace",
]
