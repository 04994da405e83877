"""The public entailment pairs the NLI cross-encoder learns from (never shipped: read from a folder).

``THEORIA_NLI_DIR`` (else ``shared/nli`` beside the checkout) holds one JSONL file per source,
``{"premise", "hypothesis", "label", "source"}``; its README gives sources and terms. Labels are
``entailment`` / ``contradiction`` / ``neutral``, and FEVER's ``not_entailment`` (contradiction or
neutral: the loss reads it as "not entailment").

Every source is split into a training part and a held-out part by a hash of a group key, so pairs
that share it never straddle the split: VitaminC by the page title before the premise's colon (its
contrastive pairs are revisions of one sentence), FEVER, Climate-FEVER and HealthVer by the claim,
SNLI by the premise (three hypotheses each).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

NLI_DIR = Path(os.environ.get("THEORIA_NLI_DIR") or Path(__file__).resolve().parents[3] / "shared" / "nli")
SOURCES = {  # file -> how its rows are grouped for the held-out split
    "vitaminc.jsonl": "title",
    "snli.jsonl": "premise",
    "fever_nli.jsonl": "hypothesis",
    "climate_fever.jsonl": "hypothesis",
    "healthver.jsonl": "hypothesis",
}
HELDOUT_SHARE = 0.10
LABEL_INDEX = {"entailment": 0, "contradiction": 1, "neutral": 2, "not_entailment": -1}
NOT_ENTAILMENT = -1  # FEVER's two-way label: contradiction or neutral


@dataclass(frozen=True)
class NLIPair:
    premise: str
    hypothesis: str
    label: int  # 0 entailment, 1 contradiction, 2 neutral, -1 not entailment
    source: str  # the file's stem: vitaminc, snli, fever_nli, …
    group: str


def _group(row: dict, how: str) -> str:
    if how == "title":
        premise = row["premise"]
        head, sep, _ = premise.partition(":")
        return head if sep and len(head) < 120 else premise
    return row[how]


def is_heldout(source: str, group: str, share: float = HELDOUT_SHARE) -> bool:
    digest = hashlib.sha256(f"{source}|{group}".encode()).hexdigest()
    return int(digest[:8], 16) / 0xFFFFFFFF < share


def load_nli(folder: Path = NLI_DIR) -> tuple[list[NLIPair], list[NLIPair]]:
    """(training pairs, held-out pairs) of every source file found in ``folder``.

    Raises FileNotFoundError naming the folder when it holds none of the files.
    """
    train, held = [], []
    found = 0
    for name, how in SOURCES.items():
        path = Path(folder) / name
        if not path.is_file():
            continue
        found += 1
        source = path.stem
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                row = json.loads(line)
                label = LABEL_INDEX.get(str(row.get("label")))
                premise, hypothesis = str(row.get("premise") or ""), str(row.get("hypothesis") or "")
                if label is None or not premise.strip() or not hypothesis.strip():
                    continue
                group = _group(row, how)
                pair = NLIPair(premise, hypothesis, label, source, group)
                (held if is_heldout(source, group) else train).append(pair)
    if not found:
        raise FileNotFoundError(
            f"no entailment data in {folder}: set THEORIA_NLI_DIR to the folder of vitaminc.jsonl, snli.jsonl, …"
        )
    return train, held
