"""Split a document's text into overlapping passages with character offsets (docs/SPEC_NOTES.md#evidence-and-retrieval).

Plain Python. Chunks end at a paragraph or sentence boundary when one lies in the last part of
the window, so a passage rarely cuts a sentence in half; consecutive chunks overlap by about
``overlap`` characters so a fact near a boundary is whole in at least one chunk.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

from audit.constants import CHUNK_OVERLAP_CHARS, CHUNK_SIZE_CHARS

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


@dataclass(frozen=True)
class TextChunk:
    ordinal: int
    text: str
    start: int
    end: int

    @property
    def content_hash(self) -> str:
        return sha256_text(self.text)


def normalise_text(text: str) -> str:
    """Return NFC text with unified newlines and no trailing spaces (what hashes are taken of)."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def sha256_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _best_break(text: str, start: int, hard_end: int, min_end: int) -> int:
    """Return the end of the chunk: the last paragraph, sentence or word break in [min_end, hard_end]."""
    window = text[min_end:hard_end]
    para = window.rfind("\n\n")
    if para != -1:
        return min_end + para
    last = None
    for match in _SENTENCE_END.finditer(window):
        last = match.start()
    if last is not None:
        return min_end + last
    space = window.rfind(" ")
    if space != -1:
        return min_end + space
    return hard_end


def chunk_text(
    text: str, *, size: int = CHUNK_SIZE_CHARS, overlap: int = CHUNK_OVERLAP_CHARS
) -> list[TextChunk]:
    """Split ``text`` into chunks of at most ``size`` characters overlapping by ~``overlap``.

    Offsets index into ``text`` itself (``text[c.start:c.end]`` is the chunk before trimming).
    Raises ValueError for a size below 50 or an overlap not smaller than half the size.
    """
    if size < 50:
        raise ValueError("chunk size must be at least 50 characters")
    if overlap < 0 or overlap >= size // 2:
        raise ValueError("chunk overlap must be between 0 and half the chunk size")
    chunks: list[TextChunk] = []
    start = 0
    n = len(text)
    while start < n:
        while start < n and text[start].isspace():
            start += 1
        if start >= n:
            break
        hard_end = min(start + size, n)
        end = hard_end if hard_end == n else _best_break(text, start, hard_end, start + size * 2 // 3)
        piece = text[start:end].strip()
        if piece:
            chunks.append(TextChunk(ordinal=len(chunks), text=piece, start=start, end=end))
        if end >= n:
            break
        next_start = max(end - overlap, start + 1)
        # Begin the overlap at a word boundary.
        space = text.find(" ", next_start, end)
        start = space + 1 if space != -1 and overlap else next_start
    return chunks
