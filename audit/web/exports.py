"""Claim Cards as CSV or JSON text, streamed: pure generators over card dicts (no ORM, no HTTP).

The claim-card exports of the API and the pages (``iter_csv`` / ``iter_json``: the filtered list
and the daily file of low-confidence claims) write cards through these, so a file looks the same
wherever it comes from; the nightly report's bundle (``audit/web/nightly_export.py``) writes its own
tables through the same CSV writer (``csv_text``), so its cells are neutralised the same way.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Iterable, Iterator

# the Claim Card's own fields and its metrics, each one column of the same name
CARD_COLUMNS = (
    "answer_id",
    "claim_id",
    "mode",
    "label",
    "confidence",
    "p_supported",
    "machine_label",
    "reviewer_label",
    "text",
)
METRIC_COLUMNS = ("faithfulness", "answer_relevance", "context_precision", "selfcheck_disagreement")
CSV_COLUMNS = (
    *CARD_COLUMNS,
    *METRIC_COLUMNS,
    "verification_methods",
    "evidence_count",
    "evidence_source_ids",
    "evidence_uris",
    "evidence_hashes",
    "escalation_tickets",
    "drafted_at",
    "verified_at",
)

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> str:
    if value is None:
        return ""
    text = str(value)
    if text.startswith(_FORMULA_START) and not _is_number(text):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def card_row(card: dict) -> list[str]:
    """Flatten one Claim Card into the CSV columns (lists joined with " | ")."""
    metrics = card.get("metrics") or {}
    evidence = card.get("evidence") or []
    stamps = card.get("timestamps") or {}
    values = {
        **{k: card.get(k) for k in CARD_COLUMNS},
        **{k: metrics.get(k) for k in METRIC_COLUMNS},
        "verification_methods": " | ".join(card.get("verification_methods") or []),
        "evidence_count": len(evidence),
        "evidence_source_ids": " | ".join(e.get("source_id", "") for e in evidence),
        "evidence_uris": " | ".join(e.get("uri", "") for e in evidence),
        "evidence_hashes": " | ".join(e.get("hash", "") for e in evidence),
        "escalation_tickets": " | ".join(
            e["ticket"] for e in card.get("escalations") or [] if e.get("ticket")
        ),
        "drafted_at": stamps.get("drafted_at"),
        "verified_at": stamps.get("verified_at"),
    }
    return [values[column] for column in CSV_COLUMNS]


def iter_csv_rows(columns, rows: Iterable) -> Iterator[str]:
    """The one CSV writer of every export: header, then each row (a dict by column, or a list),
    every cell neutralised against formula injection. Yields the file one row at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate(0)
        return text

    writer.writerow([_cell(c) for c in columns])
    yield flush()
    for row in rows:
        values = [row.get(c) for c in columns] if isinstance(row, dict) else row
        writer.writerow([_cell(v) for v in values])
        yield flush()


def csv_text(columns, rows: Iterable) -> str:
    """The whole CSV file of ``rows`` as one string (see :func:`iter_csv_rows`)."""
    return "".join(iter_csv_rows(columns, rows))


def iter_csv(cards: Iterable[dict]) -> Iterator[str]:
    """Yield a CSV file of Claim Cards (header first) one row at a time."""
    return iter_csv_rows(CSV_COLUMNS, (card_row(card) for card in cards))


def iter_json(cards: Iterable[dict]) -> Iterator[str]:
    """Yield a JSON array of cards, one card per line, without holding the set in memory."""
    yield "["
    first = True
    for card in cards:
        yield ("\n" if first else ",\n") + json.dumps(card, ensure_ascii=False, default=str)
        first = False
    yield "\n]\n"


def iter_jsonl(rows: Iterable[dict]) -> Iterator[str]:
    """Yield one JSON object per line (the benchmark files' format: ``export_reviewed_examples``)."""
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
