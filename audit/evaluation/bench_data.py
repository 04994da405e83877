"""Loading the shared benchmark files (claim and answer JSONL) with per-line error reporting."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

CLAIM_LABELS = ("SUPPORTED", "REFUTED", "NEI")
# The folder of the labelled benchmark files (claims_dev.jsonl, answers_dev.jsonl), which are not
# part of the repository: the THEORIA_BENCHMARKS_DIR setting, else shared/benchmarks beside the
# checkout (the team's machines and CI). Every command that reads them also takes the file as an argument.
BENCHMARKS_DIR = Path(
    os.environ.get("THEORIA_BENCHMARKS_DIR") or Path(__file__).resolve().parents[3] / "shared" / "benchmarks"
)


@dataclass
class BadLine:
    line_no: int
    reason: str


def read_jsonl(path: str | Path, required: tuple[str, ...]) -> tuple[list[tuple[int, dict]], list[BadLine]]:
    """(line number, record) for every good line, and a BadLine for every bad one (1-based)."""
    good, bad = [], []
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                bad.append(BadLine(no, f"not valid JSON ({exc.msg} at column {exc.colno})"))
                continue
            if not isinstance(rec, dict):
                bad.append(BadLine(no, "not a JSON object"))
                continue
            missing = [k for k in required if k not in rec]
            if missing:
                bad.append(BadLine(no, f"missing field(s): {', '.join(missing)}"))
                continue
            good.append((no, rec))
    return good, bad


def claim_evidence_texts(rec: dict) -> list[str]:
    out = []
    for ev in rec.get("evidence") or []:
        if isinstance(ev, dict):
            out.append(str(ev.get("text") or ""))
        elif isinstance(ev, str):
            out.append(ev)
    return [t for t in out if t.strip()]


def group_key(rec: dict) -> str:
    """The benchmark README's grouping key: no group straddles a CV fold."""
    ds = rec.get("dataset", "")
    meta = rec.get("meta") or {}
    if ds in ("expertqa",) or ds.startswith("attrbench"):
        key = meta.get("question") or rec.get("query") or rec["id"]
    elif ds == "scifact-rationale":
        key = rec.get("claim", rec["id"])
    elif ds.startswith("summedits"):
        key = "|".join(claim_evidence_texts(rec))[:2000]
    else:  # scifact, wice: the original claim id
        key = rec["id"]
    family = ds.split("-")[0] if ds.startswith(("attrbench", "summedits")) else ds
    return hashlib.sha256(f"{family}|{key}".encode()).hexdigest()
