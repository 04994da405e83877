"""Redact sensitive content from snippets that are stored or shown (docs/SPEC_NOTES.md#escalation-to-audit-web).

Plain Python. Two levels: personal data patterns (e-mail addresses, phone numbers, national
identifiers, card numbers) are always masked in stored snippets; a passage from a document
marked *sensitive* is stored only as its hash plus a masked preview.
"""

from __future__ import annotations

import re

from audit.pipeline.chunking import sha256_text

_PATTERNS = [
    # the local part is matched from its first character only, so "1.1.1.1…" is scanned once
    ("email", re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("card", re.compile(r"\b(?:\d[ -]?){13,16}\b")),
    ("ssn", re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),
    ("phone", re.compile(r"(?<![\w.])\+?\d{1,3}[ .-]?\(?\d{2,4}\)?[ .-]\d{3,4}[ .-]\d{3,4}\b")),
]

SENSITIVE_PREVIEW_WORDS = 6


def redact_pii(text: str) -> str:
    """Mask personal data patterns: ``[redacted email]`` etc."""
    for name, pattern in _PATTERNS:
        text = pattern.sub(f"[redacted {name}]", text)
    return text


def stored_snippet(text: str, *, sensitive: bool) -> str:
    """Return the snippet to store for a passage: PII-masked, or hash + short preview if sensitive."""
    if not sensitive:
        return redact_pii(text)
    words = redact_pii(text).split()
    preview = " ".join(words[:SENSITIVE_PREVIEW_WORDS])
    return f"[sensitive source, content withheld: {sha256_text(text)}] {preview} …"
