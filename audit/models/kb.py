"""The knowledge base: documents and their embedded chunks."""

from __future__ import annotations

import numpy as np
from django.db import models
from django.db.models import Q

from audit import constants
from audit.models.vector import VectorField

from .workspace import Workspace


class Document(models.Model):
    """A trusted source in a workspace's knowledge base.

    ``uri`` identifies the document within the workspace (``kb://<slug>`` for ingested files);
    ``content_hash`` (sha256 of the normalised text) makes re-ingestion idempotent.
    ``published_at`` is the publication date, or one inferred from the text or file when
    ``date_inferred`` is set; freshness checks read it. Snippets of ``sensitive`` documents are
    stored redacted on evidence rows (docs/SPEC_NOTES.md#escalation-to-audit-web).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=500)
    uri = models.CharField(max_length=1000)
    domain = models.CharField(max_length=64, default="general", db_index=True)
    published_at = models.DateField(null=True, blank=True)
    date_inferred = models.BooleanField(default=False)
    content_hash = models.CharField(max_length=71)  # "sha256:" + 64 hex
    sensitive = models.BooleanField(default=False)
    source_path = models.CharField(max_length=1000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "uri"], name="%(app_label)s_%(class)s_unique_uri"),
            models.CheckConstraint(
                condition=Q(content_hash__startswith="sha256:"), name="%(app_label)s_%(class)s_hash_prefixed"
            ),
        ]

    def __str__(self) -> str:
        return self.title


class Chunk(models.Model):
    """A passage of a document, with its character offsets and its embedding.

    The embedding is stored as little-endian float32 bytes (384 dimensions for
    all-MiniLM-L6-v2), which works the same on SQLite and PostgreSQL; the in-process search
    index loads it from here (``audit.selectors.kb_index``). With pgvector, ``search_vector``
    holds it too and search runs in the database.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    start_offset = models.PositiveIntegerField()
    end_offset = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=71)
    embedding = models.BinaryField()
    # The same vector as a pgvector column where PostgreSQL has the extension (searched in SQL,
    # audit.kb.pgvector); NULL elsewhere.
    search_vector = VectorField()

    class Meta:
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "ordinal"], name="%(app_label)s_%(class)s_unique_ordinal"
            ),
            models.CheckConstraint(
                condition=Q(end_offset__gte=models.F("start_offset")),
                name="%(app_label)s_%(class)s_offsets_ordered",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"

    @property
    def source_id(self) -> str:
        """Return the id under which this chunk appears in claim cards and the search index."""
        return f"kb_chunk_{self.pk}"

    def vector(self) -> np.ndarray:
        return self.decode_vector(self.embedding)

    @staticmethod
    def decode_vector(raw) -> np.ndarray:
        """The float32 vector stored in an ``embedding`` value (bytes or memoryview, as a query returns it)."""
        return np.frombuffer(bytes(raw), dtype="<f4").reshape(constants.EMBEDDING_DIM)


class SentenceEncoding(models.Model):
    """One knowledge-base sentence's encoding, computed at ingestion (``audit.pipeline.encodings``).

    ``key`` is the sha256 of the encoder's version and the sentence's text, so a sentence shared by
    several chunks is stored once and a new encoder reads nothing an old one stored. ``data`` is the
    sentence vector and its content word-pieces' vectors, little-endian float32. The sentence's parse
    for the role binding is a row of its own (``audit.pipeline.parse_store``: another key, the parser's
    version in ``encoder``, spaCy's serialised doc compressed in ``data``). The rows are derived
    from chunk texts and hold no text themselves. They are shared by every workspace, as the process's
    own caches are: an audit reads a row only for a sentence its own evidence holds (the key is the
    text's hash), and ``encode_kb --prune`` deletes a row only when no workspace's chunk holds its
    sentence; until then a deleted document's rows stay.
    """

    key = models.CharField(max_length=64, primary_key=True)
    data = models.BinaryField()
    # the encoder's (encodings.encoder_version) or parser's (parse_store.parser_version) version: the rows
    # an older one left are pruned by it
    encoder = models.CharField(max_length=200, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.key[:12]
