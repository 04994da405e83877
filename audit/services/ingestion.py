"""Knowledge-base ingestion: files and records in, chunked and embedded documents out.

One service per change: :func:`document_ingest` (create or update one document, idempotent by
content hash; :func:`documents_ingest` for several at once, all or none), :func:`document_delete`,
:func:`document_metadata_update` (the admin's edits), and :func:`ingest_paths` which reads files
(.txt, .md, .html, .jsonl) and reports per file, so one bad file never stops the others. Chunks
are embedded, and their sentences encoded for the judge (``audit.pipeline.encodings``) and parsed for the
role binding (``audit.pipeline.parse_store``) and stored where no earlier ingestion stored them, before
any transaction begins (:func:`documents_prepare`, several documents together); the rows are then written in one short transaction
(:func:`document_write`); :func:`kb_encodings_fill` encodes and parses what an older version left. Every change bumps
``Workspace.kb_version`` so search indexes in every process reload what changed
(``audit.selectors.kb_index``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeGuard

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F

from audit import constants
from audit.errors import InvalidInput
from audit.kb.encodings import ENCODINGS, PARSE_ROWS
from audit.models import Chunk, Document, Workspace
from audit.pipeline import json_limits, parse_store
from audit.pipeline.chunking import chunk_text, normalise_text, sha256_text
from audit.pipeline.encodings import encoding_key, precompute
from audit.pipeline.features import passage_sentences
from audit.pipeline.parse_store import parse_key
from audit.pipeline.web.page import html_to_text, meta_date
from audit.services.events import Actor, event_record

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl")


class IngestError(Exception):
    """A source that cannot be ingested; the message is one sentence naming the reason."""


@dataclass
class DocumentInput:
    """A document ready to ingest (already parsed from a file, a JSONL record or an API body)."""

    uri: str
    title: str
    text: str
    domain: str = "general"
    published_at: dt.date | None = None
    date_inferred: bool = False
    sensitive: bool = False
    source_path: str = ""


@dataclass
class IngestReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    chunks: int = 0
    encoded: int = 0  # chunk sentences encoded and stored for the judge (audit.pipeline.encodings)
    parsed: int = 0  # chunk sentences parsed and stored for the role binding (audit.pipeline.parse_store)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (source, reason)

    @property
    def ok(self) -> bool:
        return not self.failures


def chunk_settings() -> tuple[int, int]:
    size = settings.THEORIA.get("CHUNK_SIZE") or constants.CHUNK_SIZE_CHARS
    overlap = settings.THEORIA.get("CHUNK_OVERLAP", -1)
    return size, (constants.CHUNK_OVERLAP_CHARS if overlap is None or overlap < 0 else overlap)


def _embed(texts: list[str]) -> np.ndarray:
    from audit.pipeline.embedding import get_embedder

    return get_embedder().encode(texts)


def _encode_tokens(texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    from audit.pipeline.embedding import get_embedder

    return get_embedder().encode_with_tokens(texts)


@dataclass
class PreparedDocument:
    """A document normalised, chunked and (when its chunks changed) embedded: what
    :func:`document_write` stores. Preparing reads the database and writes nothing."""

    doc: DocumentInput
    content_hash: str
    metadata: dict[str, Any]
    pieces: list[Any]
    vectors: np.ndarray | None = None
    changed: bool = True  # the stored document does not hold these chunks: they need vectors


class _StaleVectors(Exception):
    """The stored document changed between preparing and writing: its chunks need vectors."""

    def __init__(self, prepared: PreparedDocument):
        super().__init__(prepared.doc.uri)
        self.prepared = prepared


def documents_prepare(
    *,
    workspace: Workspace,
    docs: list[DocumentInput],
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    embed: Callable[[list[str]], np.ndarray] = _embed,
    report: IngestReport | None = None,
) -> list[PreparedDocument | IngestError]:
    """Normalise and chunk each of ``docs``, then embed the chunks of those the stored documents do
    not already hold exactly, and encode and parse their sentences, all together (one embedding call,
    one encoding pass, one parse pass: the slow part, outside any transaction). A document that
    cannot be prepared (it holds no text) is its IngestError in the list, in its place; the others
    are prepared. ``report``, when given, counts the sentences encoded and parsed."""
    size, overlap = chunk_settings()
    size, overlap = chunk_size or size, overlap if chunk_overlap is None else chunk_overlap
    out: list[PreparedDocument | IngestError] = []
    for doc in docs:
        try:
            out.append(_chunked(workspace, doc, size, overlap))
        except IngestError as exc:
            out.append(exc)
    _encode([p for p in out if isinstance(p, PreparedDocument) and p.changed], embed, report)
    return out


def _chunked(workspace: Workspace, doc: DocumentInput, size: int, overlap: int) -> PreparedDocument:
    """One document normalised and chunked, and whether the stored one holds these chunks already."""
    text = normalise_text(doc.text)
    if not text:
        raise IngestError("it holds no text")
    prepared = PreparedDocument(
        doc=doc,
        content_hash=sha256_text(text),
        metadata={
            "title": doc.title[:500] or doc.uri,
            "domain": (doc.domain or "general").lower()[:64],
            "published_at": doc.published_at,
            "date_inferred": doc.date_inferred,
            "sensitive": doc.sensitive,
            "source_path": doc.source_path[:1000],
        },
        pieces=chunk_text(text, size=size, overlap=overlap),
    )
    prepared.changed = not _holds(Document.objects.filter(workspace=workspace, uri=doc.uri).first(), prepared)
    return prepared


def _encode(
    prepared: list[PreparedDocument],
    embed: Callable[[list[str]], np.ndarray],
    report: IngestReport | None = None,
) -> None:
    """The chunks' vectors of ``prepared``, in one call; their sentences that no earlier ingestion
    encoded (or parsed) are encoded (and parsed) and stored now, before the chunks' transaction (rows
    keyed by their text, which a failed ingestion leaves for the next one to find)."""
    texts = [p.text for d in prepared for p in d.pieces]
    if not texts:  # nothing to embed (no document, or none with a chunk): each gets its empty vectors
        for d in prepared:
            d.vectors = np.zeros((0, constants.EMBEDDING_DIM), dtype="<f4")
        return
    vectors = embed(texts).astype("<f4", copy=False)
    start = 0
    for d in prepared:
        d.vectors = vectors[start : start + len(d.pieces)]
        start += len(d.pieces)
    encoded, parsed = _store_sentences(texts)
    if report is not None:
        report.encoded += encoded
        report.parsed += parsed


def _store_sentences(texts: list[str]) -> tuple[int, int]:
    """Encode (for the judge) and parse (for the role binding) the sentences of the chunk ``texts`` that
    no earlier ingestion stored, and store them; returns how many were (encoded, parsed)."""
    return precompute(texts, ENCODINGS, _encode_tokens), parse_store.precompute(texts, PARSE_ROWS)


def _sentence_keys(text: str) -> Iterator[str]:
    """The keys of every row a chunk of ``text`` reads: its sentences' encodings and parses."""
    yield from (encoding_key(s) for s in passage_sentences(text))
    yield from (parse_key(s) for s in parse_store.passage_sentences(text))


def _holds(document: Document | None, prepared: PreparedDocument) -> TypeGuard[Document]:
    """Whether ``document`` already holds exactly the prepared text and chunks."""
    return (
        document is not None
        and document.content_hash == prepared.content_hash
        and _same_chunks(document, prepared.pieces)
    )


def document_write(
    *, workspace: Workspace, prepared: PreparedDocument, actor: Actor = None
) -> tuple[Document, str]:
    """Store one prepared document (call inside a transaction: it only writes rows).

    Locks the stored document (``select_for_update``); returns (document, "created"|"updated"|
    "unchanged"). Raises ``_StaleVectors`` when the stored text changed since it was prepared and
    the new chunks were not embedded.
    """
    metadata = prepared.metadata
    existing = Document.objects.select_for_update().filter(workspace=workspace, uri=prepared.doc.uri).first()
    if _holds(existing, prepared):
        changed = [k for k, v in metadata.items() if getattr(existing, k) != v]
        if not changed:
            return existing, "unchanged"
        for key in changed:
            setattr(existing, key, metadata[key])
        existing.full_clean()
        existing.save(update_fields=changed + ["updated_at"])
        _bump_kb_version(workspace)
        event_record(
            action="kb.document_updated",
            obj=existing,
            actor=actor,
            workspace=workspace,
            details={"fields": changed},
        )
        return existing, "updated"
    if prepared.vectors is None:
        raise _StaleVectors(prepared)
    vectors = prepared.vectors
    if existing is None:
        document = Document(
            workspace=workspace, uri=prepared.doc.uri, content_hash=prepared.content_hash, **metadata
        )
        outcome = "created"
    else:
        document = existing
        for key, value in metadata.items():
            setattr(document, key, value)
        document.content_hash = prepared.content_hash
        outcome = "updated"
    document.full_clean()
    document.save()
    if outcome == "updated":
        document.chunks.all().delete()
    Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                ordinal=p.ordinal,
                text=p.text,
                start_offset=p.start,
                end_offset=p.end,
                content_hash=p.content_hash,
                embedding=vectors[i].tobytes(),
                search_vector=vectors[i],
            )
            for i, p in enumerate(prepared.pieces)
        ],
        batch_size=500,
    )
    _bump_kb_version(workspace)
    event_record(
        action=f"kb.document_{outcome}",
        obj=document,
        actor=actor,
        workspace=workspace,
        details={"uri": document.uri, "chunks": len(prepared.pieces), "hash": prepared.content_hash},
    )
    return document, outcome


def documents_ingest(
    *,
    workspace: Workspace,
    docs: list[DocumentInput],
    actor: Actor = None,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    embed: Callable[[list[str]], np.ndarray] = _embed,
    report: IngestReport | None = None,
) -> list[tuple[Document, str]]:
    """Create or update documents together: all of them or none.

    Every document is chunked and embedded first, outside any transaction; the rows are then
    written in one short transaction. Idempotent: an unchanged text and metadata change nothing;
    a changed text is re-chunked and re-embedded. When a concurrent ingestion changed one of the
    documents in between, its chunks are embedded after the transaction is left and it is tried
    again. Raises IngestError for an empty text. ``report``, when given, counts the sentences encoded
    and parsed.
    """
    prepared = documents_prepare(
        workspace=workspace,
        docs=docs,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        embed=embed,
        report=report,
    )
    for p in prepared:
        if isinstance(p, IngestError):
            raise p
    return _documents_write(
        workspace, [p for p in prepared if isinstance(p, PreparedDocument)], actor, embed, report
    )


def _documents_write(
    workspace: Workspace,
    prepared: list[PreparedDocument],
    actor: Actor,
    embed: Callable[[list[str]], np.ndarray],
    report: IngestReport | None,
) -> list[tuple[Document, str]]:
    """Write prepared documents in one transaction; one a concurrent ingestion changed in between is
    embedded after the transaction is left, and the whole is tried again."""
    while True:
        try:
            with transaction.atomic():
                return [document_write(workspace=workspace, prepared=p, actor=actor) for p in prepared]
        except _StaleVectors as stale:
            _encode([stale.prepared], embed, report)


def document_ingest(
    *,
    workspace: Workspace,
    doc: DocumentInput,
    actor: Actor = None,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    embed: Callable[[list[str]], np.ndarray] = _embed,
    report: IngestReport | None = None,
) -> tuple[Document, str]:
    """Create or update one document and its chunks; return (document, "created"|"updated"|"unchanged").

    See :func:`documents_ingest`: embedded outside any transaction, written in one short one.
    """
    return documents_ingest(
        workspace=workspace,
        docs=[doc],
        actor=actor,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        embed=embed,
        report=report,
    )[0]


ENCODE_BATCH_CHUNKS = 200  # chunks whose sentences are encoded and stored together


def kb_encodings_fill(
    *, workspace: Workspace | None = None, progress: Callable[[int], object] | None = None
) -> tuple[int, int]:
    """Encode, and parse, and store the sentences of every chunk (of ``workspace``, else of all) that no
    ingestion stored: after an upgrade, or when the encoder's or the parser's version changed. Returns
    how many were (encoded, parsed); ``progress(n)`` is told after each batch of n chunks."""
    chunks = Chunk.objects.order_by("pk")
    if workspace is not None:
        chunks = chunks.filter(document__workspace=workspace)
    encoded, parsed, last = 0, 0, 0
    while batch := list(chunks.filter(pk__gt=last).values_list("pk", "text")[:ENCODE_BATCH_CHUNKS]):
        last = batch[-1][0]
        counts = _store_sentences([text for _, text in batch])
        encoded, parsed = encoded + counts[0], parsed + counts[1]
        if progress is not None:
            progress(len(batch))
    return encoded, parsed


def kb_encodings_prune() -> int:
    """Delete the sentence encodings and parses no chunk reads any more: those another encoder or parser
    version stored, and those of sentences no chunk of any workspace still holds (deleted or changed
    documents). Returns how many were deleted."""
    deleted = ENCODINGS.prune()
    wanted: set[str] = set()
    last = 0
    while batch := list(Chunk.objects.order_by("pk").filter(pk__gt=last).values_list("pk", "text")[:1000]):
        last = batch[-1][0]
        wanted.update(key for _, text in batch for key in _sentence_keys(text))
    return deleted + ENCODINGS.keep_only(wanted)


def _same_chunks(document: Document, pieces: list[Any]) -> bool:
    """Whether the stored chunks are exactly these (same text, same chunking parameters)."""
    stored = list(
        document.chunks.order_by("ordinal").values_list("content_hash", "start_offset", "end_offset")
    )
    return stored == [(p.content_hash, p.start, p.end) for p in pieces]


def _bump_kb_version(workspace: Workspace) -> None:
    Workspace.objects.filter(pk=workspace.pk).update(kb_version=F("kb_version") + 1)


DOCUMENT_METADATA = ("title", "domain", "published_at", "sensitive")


@transaction.atomic
def document_metadata_update(*, document: Document, actor: Actor = None, **values: Any) -> Document:
    """Change a document's title, domain, publication date or sensitivity (the admin console).

    Bumps ``kb_version`` so every search index reloads the document's description at once (a
    new domain is searched under it, a new date ages its evidence); one ``kb.document_updated``
    event lists the fields with their old and new values. Nothing is written when nothing changed.
    """
    unknown = sorted(set(values) - set(DOCUMENT_METADATA))
    if unknown:
        raise InvalidInput(
            unknown[0], "is not document metadata that can be edited; re-ingest the document instead."
        )
    if "domain" in values:
        values["domain"] = (values["domain"] or "general").strip().lower()[:64]
    document = Document.objects.select_for_update().get(pk=document.pk)
    changes = {k: v for k, v in values.items() if getattr(document, k) != v}
    if not changes:
        return document
    before = {k: getattr(document, k) for k in changes}
    for key, value in changes.items():
        setattr(document, key, value)
    if "published_at" in changes:
        document.date_inferred = False  # a date someone set is no longer one read from the text
    document.full_clean()
    document.save(
        update_fields=[*changes, *(["date_inferred"] if "published_at" in changes else []), "updated_at"]
    )
    _bump_kb_version(document.workspace)
    event_record(
        action="kb.document_updated",
        obj=document,
        actor=actor,
        workspace=document.workspace,
        details={
            "fields": sorted(changes),
            "changes": {k: {"from": _plain(before[k]), "to": _plain(changes[k])} for k in changes},
        },
    )
    return document


def _plain(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


@transaction.atomic
def document_delete(*, document: Document, actor: Actor = None) -> None:
    """Delete a document and its chunks, and make every search index drop them."""
    workspace = document.workspace
    details = {"uri": document.uri, "title": document.title, "hash": document.content_hash}
    pk = document.pk
    document.delete()
    _bump_kb_version(workspace)
    event_record(
        action="kb.document_deleted",
        object_type="audit.document",
        object_id=pk,
        actor=actor,
        workspace=workspace,
        details=details,
    )


# --- Reading files ----------------------------------------------------------------------------

_DATE_LINE = re.compile(
    r"^(?:published|publication date|date|updated|last updated)\s*[:=]\s*(\d{4}-\d{2}-\d{2})", re.I | re.M
)
_ISO_DATE = re.compile(r"\b((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")


def infer_date(text: str) -> dt.date | None:
    """Return a publication date stated in the text ("Published: 2024-03-01"), else None."""
    match = _DATE_LINE.search(text[:2000])
    if match:
        try:
            return dt.date.fromisoformat(match.group(1))
        except ValueError:
            return None
    return None


def _parse_date(value: object, where: str) -> dt.date | None:
    if value in (None, ""):
        return None
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise IngestError(f"{where}: published date {value!r} is not YYYY-MM-DD") from None


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split simple ``---`` front matter (key: value lines) from a Markdown or text file."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end == -1:
        return {}, text
    meta = {}
    for line in text[4:end].splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return meta, text[end + 4 :].lstrip("\n")


def _bool(value: object) -> bool:
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def _slug(path: Path) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.stem.lower()).strip("-") or "document"


def _read_text(path: Path) -> str:
    if not path.exists():
        raise IngestError("the file does not exist")
    if not path.is_file():
        raise IngestError("it is not a regular file")
    if path.stat().st_size > constants.INGEST_MAX_FILE_BYTES:
        raise IngestError(f"it is larger than {constants.INGEST_MAX_FILE_BYTES // (1024 * 1024)} MB")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestError(f"it cannot be read ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise IngestError("it is not UTF-8 text") from None


def documents_from_file(path: Path, *, domain: str | None = None) -> Iterator[DocumentInput]:
    """Yield the documents a file holds; raise IngestError for an unusable file."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise IngestError(
            f"the type {suffix or '(none)'} is not supported (use {', '.join(SUPPORTED_SUFFIXES)})"
        )
    raw = _read_text(path)
    if not raw.strip():
        raise IngestError("it is empty")
    if suffix == ".jsonl":
        yield from _documents_from_jsonl(path, raw, domain)
        return
    if suffix in (".html", ".htm"):
        title, text, page_meta = html_to_text(raw)
        page_date = meta_date(page_meta)
        meta: dict[str, Any] = {"published": page_date} if page_date else {}
    else:
        meta, text = _front_matter(raw)
        heading = re.search(r"^#\s+(.+)$", text, re.M)
        title = heading.group(1).strip() if heading else ""
    if not text.strip():
        raise IngestError("it holds no text")
    published = _parse_date(meta.get("published") or meta.get("date"), str(path))
    inferred = None if published else infer_date(text)
    yield DocumentInput(
        uri=meta.get("uri") or f"kb://{_slug(path)}",
        title=meta.get("title") or title or path.stem.replace("_", " ").replace("-", " "),
        text=text,
        domain=(domain or meta.get("domain") or "general"),
        published_at=published or inferred,
        date_inferred=bool(inferred),
        sensitive=_bool(meta.get("sensitive", "false")),
        source_path=str(path),
    )


def _documents_from_jsonl(path: Path, raw: str, domain: str | None) -> Iterator[DocumentInput]:
    """Records: {id, title?, text, uri?, domain?, published_at?, sensitive?}; or benchmark rows.

    A benchmark claim row contributes its ``evidence`` passages and an answer row its
    ``contexts``; passages shared by several rows are ingested once (same uri).
    """
    stem = _slug(path)
    seen: set[str] = set()
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json_limits.loads(line)
        except json_limits.JSONLimitError as exc:
            raise IngestError(
                f"line {number}{' field ' + exc.path if exc.path else ''} {exc.message.rstrip('.')}"
            ) from None
        except ValueError as exc:
            raise IngestError(f"line {number} is not valid JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(record, dict):
            raise IngestError(f"line {number} is not a JSON object")
        for doc in _records_to_documents(record, stem, number, domain, str(path)):
            if doc.uri not in seen:
                seen.add(doc.uri)
                yield doc


def _records_to_documents(
    record: dict[str, Any], stem: str, number: int, domain: str | None, source: str
) -> Iterable[DocumentInput]:
    row_domain = domain or record.get("domain") or "general"
    if isinstance(record.get("evidence"), list):  # benchmark claim format
        for passage in record["evidence"]:
            text = (passage or {}).get("text", "")
            if text.strip():
                yield DocumentInput(
                    uri=f"kb://{stem}/{sha256_text(normalise_text(text))[7:23]}",
                    title=passage.get("title") or f"{record.get('dataset', stem)} passage",
                    text=text,
                    domain=row_domain,
                    source_path=source,
                )
        return
    if isinstance(record.get("contexts"), list):  # benchmark answer format
        for context in record["contexts"]:
            if isinstance(context, str) and context.strip():
                header, _, body = context.partition("\n\n")
                yield DocumentInput(
                    uri=f"kb://{stem}/{sha256_text(normalise_text(context))[7:23]}",
                    title=header.strip()[:500] or "context",
                    text=body or context,
                    domain=row_domain,
                    source_path=source,
                )
        return
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise IngestError(f"line {number} has no text")
    rid = str(record.get("id") or number)
    yield DocumentInput(
        uri=record.get("uri") or f"kb://{stem}/{rid}",
        title=record.get("title") or rid,
        text=text,
        domain=row_domain,
        published_at=_parse_date(record.get("published_at"), f"line {number}"),
        sensitive=bool(record.get("sensitive", False)),
        source_path=source,
    )


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named, and the supported files inside named folders (sorted, recursive)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)
            )
        else:
            files.append(path)
    return files


def ingest_paths(
    *,
    workspace: Workspace,
    paths: Iterable[str | Path],
    actor: Actor = None,
    domain: str | None = None,
    chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Ingest files and folders; failures are collected per file (and per document) and never stop
    the others. Documents are prepared ``INGEST_PREPARE_DOCUMENTS`` at a time, across files (their
    chunks embedded, encoded and parsed together), and each is written in its own transaction."""
    report = IngestReport()
    pending: list[tuple[Path, DocumentInput]] = []
    batch = constants.INGEST_PREPARE_DOCUMENTS
    for path in expand_paths(paths):
        try:
            pending += [(path, doc) for doc in documents_from_file(path, domain=domain)]
        except IngestError as exc:
            report.failures.append((str(path), str(exc)))
            continue
        while len(pending) >= batch:
            _ingest_each(workspace, pending[:batch], actor, (chunk_size, chunk_overlap), report, progress)
            pending = pending[batch:]
    _ingest_each(workspace, pending, actor, (chunk_size, chunk_overlap), report, progress)
    return report


def _ingest_each(
    workspace: Workspace,
    batch: list[tuple[Path, DocumentInput]],
    actor: Actor,
    chunking: tuple[int | None, int | None],
    report: IngestReport,
    progress: Callable[[int], None] | None,
) -> None:
    """Prepare ``batch`` together, then write each document in its own transaction, counting it in
    ``report`` (or its failure)."""
    if not batch:
        return
    prepared = documents_prepare(
        workspace=workspace,
        docs=[doc for _, doc in batch],
        chunk_size=chunking[0],
        chunk_overlap=chunking[1],
        embed=_embed,
        report=report,
    )
    for (path, doc), item in zip(batch, prepared):
        try:
            if isinstance(item, IngestError):
                raise item
            document, outcome = _documents_write(workspace, [item], actor, _embed, report)[0]
        except IngestError as exc:
            report.failures.append((f"{path} ({doc.uri})", str(exc)))
            continue
        setattr(report, outcome, getattr(report, outcome) + 1)
        if outcome != "unchanged":
            report.chunks += document.chunks.count()
        if progress:
            progress(1)
