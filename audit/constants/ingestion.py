"""Knowledge-base ingestion (chunking, embedding, file limits) and the limits on JSON from users.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

# --- Knowledge-base ingestion (docs/SPEC_NOTES.md#evidence-and-retrieval: 8000 chars, 1000 overlap) ---------------------
# The seed's 8000-character chunks suit long web pages; a knowledge base of notes is searched
# better with paragraph-sized chunks, so the default is smaller and both are configurable
# (THEORIA_CHUNK_SIZE / THEORIA_CHUNK_OVERLAP or `ingest_kb --chunk-size/--overlap`).
CHUNK_SIZE_CHARS = 1200
CHUNK_OVERLAP_CHARS = 200
SEED_CHUNK_SIZE_CHARS = 8000
SEED_CHUNK_OVERLAP_CHARS = 1000
EMBEDDING_DIM = 384
EMBEDDING_BATCH_SIZE = 64
INGEST_MAX_FILE_BYTES = 20 * 1024 * 1024
# An uploaded file over INGEST_INLINE_MAX_BYTES, or holding more than INGEST_INLINE_MAX_DOCUMENTS
# documents, is ingested in the background: the upload answers 202 with the job's URL
# (GET /api/v1/jobs/<id>: progress in documents, then what was created, updated or unchanged), and the
# task writes INGEST_BATCH_DOCUMENTS documents per transaction. A 3 MB .txt took 108 s in the request
# and a .jsonl of 8,000 documents answered 500 after 300 s (the worker was killed) with all of them stored.
INGEST_INLINE_MAX_BYTES = 256 * 1024
INGEST_INLINE_MAX_DOCUMENTS = 50
INGEST_BATCH_DOCUMENTS = 100
# ingest_kb (services.ingestion.ingest_paths) prepares this many documents together, across files: their
# chunks embedded in one call, their sentences encoded and parsed in one pass each (docs/ARCHITECTURE.md,
# "Knowledge-base sentences parsed at ingestion"); each is still written in its own transaction, so one
# bad document never stops the others
INGEST_PREPARE_DOCUMENTS = 32
# JSON from users (API bodies, .jsonl records, JSON fields of the admin; audit.pipeline.json_limits):
# deeper nesting or longer integers are a 400 naming where (no setting or record needs either)
JSON_MAX_DEPTH = 32
JSON_MAX_INT_DIGITS = 18  # every integer setting fits (the largest, llm_token_budget, is at most 10**12)
