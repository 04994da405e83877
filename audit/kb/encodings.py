"""The knowledge base's sentence encodings in the database (:class:`DatabaseEncodings`).

The pipeline's :class:`audit.pipeline.encodings.EncodingStore` on the ``SentenceEncoding`` table: the
same on SQLite and PostgreSQL. The table holds the sentences' parses too (``audit.pipeline.parse_store``,
keys of their own, rows tagged with the parser's version). Ingestion writes it (``audit.services.ingestion``), every knowledge base
the search back ends build reads it (``audit.kb.search``).
"""

from __future__ import annotations

from collections.abc import Callable

from audit.models import SentenceEncoding
from audit.pipeline.encodings import encoder_version
from audit.pipeline.parse_store import parser_version

WRITE_BATCH = 200  # rows per INSERT (about 20 KB each)
DELETE_BATCH = 500  # keys per DELETE


class DatabaseEncodings:
    """Sentence encodings (and parses: ``audit.pipeline.parse_store``) by key, read and written
    through the ORM; a row written is tagged with ``version()``, the encoder's or the parser's."""

    def __init__(self, version: Callable[[], str] = encoder_version) -> None:
        self.version = version

    def read(self, keys: list[str]) -> dict[str, bytes]:
        rows = SentenceEncoding.objects.filter(key__in=keys).values_list("key", "data")
        return {key: bytes(data) for key, data in rows}

    def write(self, rows: dict[str, bytes]) -> None:
        version = self.version()
        SentenceEncoding.objects.bulk_create(
            [SentenceEncoding(key=k, data=v, encoder=version) for k, v in rows.items()],
            batch_size=WRITE_BATCH,
            ignore_conflicts=True,
        )

    def prune(self) -> int:
        """Delete the rows another encoder or parser version wrote (no key of these can reach them)."""
        deleted, _ = SentenceEncoding.objects.exclude(
            encoder__in=[encoder_version(), parser_version()]
        ).delete()
        return deleted

    def keep_only(self, keys: set[str]) -> int:
        """Delete every row whose key is not in ``keys``; returns how many."""
        deleted = 0
        stale = [
            k for k in SentenceEncoding.objects.values_list("key", flat=True).iterator() if k not in keys
        ]
        for start in range(0, len(stale), DELETE_BATCH):
            deleted += SentenceEncoding.objects.filter(key__in=stale[start : start + DELETE_BATCH]).delete()[
                0
            ]
        return deleted


# the encoder's rows; it reads any key, so the pipeline reads the parses through it too
ENCODINGS = DatabaseEncodings()
PARSE_ROWS = DatabaseEncodings(parser_version)  # the parser's rows: ingestion writes the parses through it
