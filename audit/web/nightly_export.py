"""CSV/JSON bundle of a nightly report (docs/SPEC_NOTES.md#nightly-auditor: daily bundles of low-confidence claims).

The bundle is a zip with ``report.json`` (the stored report and its figures) and one CSV per
table: every re-checked claim, the claims recommended for human review, label drift, top
failing knowledge-base documents and stale sources.
"""

from __future__ import annotations

import io
import json
import zipfile

from audit.models import NightlyItem, NightlyReport
from audit.web.exports import csv_text

CLAIM_COLUMNS = [
    "claim",
    "answer",
    "claim_id",
    "importance",
    "text",
    "old_label",
    "old_confidence",
    "new_label",
    "new_confidence",
    "changed",
    "web_checked",
    "documents",
]


def _csv(rows: list[dict], columns: list[str]) -> str:
    return csv_text(columns, rows)  # the exports' one writer: formula cells neutralised


def claim_rows(report: NightlyReport) -> list[dict]:
    """One row per processed claim of the report."""
    items = (
        NightlyItem.objects.filter(report=report, processed=True)
        .select_related("claim__answer")
        .order_by("id")
    )
    return [
        {
            "claim": item.claim_id,
            "answer": item.claim.answer.public_id,
            "claim_id": item.claim.claim_id,
            "importance": item.claim.importance,
            "text": item.claim.text,
            "old_label": item.old_label,
            "old_confidence": round(item.old_confidence, 4),
            "new_label": item.new_label,
            "new_confidence": round(item.new_confidence or 0.0, 4),
            "changed": item.changed,
            "web_checked": bool(item.result.get("web")),
            "documents": " ".join(str(d) for d in item.result.get("documents", [])),
        }
        for item in items
    ]


def claims_csv(report: NightlyReport) -> str:
    return _csv(claim_rows(report), CLAIM_COLUMNS)


def bundle_zip(report: NightlyReport, *, header: dict) -> bytes:
    """Return the zip bundle of ``report`` as bytes; ``header`` is the report as the API shows it."""
    body = report.report or {}
    review_cols = [
        "claim",
        "answer",
        "claim_id",
        "importance",
        "text",
        "old_label",
        "new_label",
        "old_confidence",
        "new_confidence",
    ]
    tables = {
        "claims.csv": claims_csv(report),
        "review_recommended.csv": _csv(body.get("review_recommended", []), review_cols),
        "label_drift.csv": _csv(body.get("label_drift", {}).get("claims", []), review_cols),
        "top_failing_documents.csv": _csv(
            body.get("top_failing_documents", []),
            ["document_id", "title", "uri", "failing_claims", "refuted", "nei"],
        ),
        "stale_sources.csv": _csv(
            body.get("stale_sources", []),
            ["document_id", "title", "uri", "domain", "published_at", "age_months", "limit_months"],
        ),
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("report.json", json.dumps(header, indent=2, sort_keys=True, default=str))
        for name, text in tables.items():
            zf.writestr(name, text)
    return buf.getvalue()


def bundle_filename(report: NightlyReport) -> str:
    return f"theoria-nightly-{report.workspace.slug}-{report.date.isoformat()}.zip"
