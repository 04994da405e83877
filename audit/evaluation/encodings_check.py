"""``python -m audit.evaluation.encodings_check [--chunks N] [--answers N]``: stored encodings and parses change no verdict.

Builds the bench's knowledge base (``manage.py bench``, cached under ``var/``), stores its sentences'
encodings and parses as ingestion does (``pipeline/encodings.py``, ``pipeline/parse_store.py``), then
audits the bench's answers twice from empty caches: with every evidence sentence encoded and parsed when
read, and with the stored ones read. Prints the number of claims, how many kept their label and their
structural findings (the role binding's and the negation check's, read on the parses), and the largest
change of a confidence. A figure, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def compare(n_chunks: int, n_answers: int, cache_dir: Path, err=None) -> dict[str, float]:
    """Audit the bench's answers without and with the stored encodings and parses: claims, same labels,
    same structural findings, largest and mean change of a confidence."""
    from dataclasses import replace

    from audit.evaluation.cli import (
        BENCH_POOL_SENTENCES,
        bench_answers,
        bench_knowledge_base,
        clear_text_caches,
    )
    from audit.pipeline.audit import audit_answer

    err = err or sys.stderr
    stored, texts = bench_knowledge_base(n_chunks, cache_dir, err, min(BENCH_POOL_SENTENCES, n_chunks // 5))
    readings = []
    for kb in (replace(stored, encodings=None), stored):
        clear_text_caches()
        readings.append(
            [
                (v.claim.text, v.label, float(v.confidence), _structure(v))
                for query, answer in bench_answers(texts, n_answers, 10)
                for v in audit_answer(query, answer, [], kb=kb).claims
            ]
        )
    computed, read = readings
    if [c[0] for c in computed] != [c[0] for c in read]:
        raise RuntimeError("the two runs extracted different claims")
    change = np.abs(np.array([c[2] for c in computed]) - np.array([c[2] for c in read]))
    return {
        "claims": len(computed),
        "same_label": sum(a[1] == b[1] for a, b in zip(computed, read)),
        "same_findings": sum(a[3] == b[3] for a, b in zip(computed, read)),
        "largest_change": float(change.max()) if len(change) else 0.0,
        "mean_change": float(change.mean()) if len(change) else 0.0,
    }


def _structure(verdict) -> str:
    """The structure method's verdict and details on one claim, as text (what the parses decide)."""
    import json

    found = [m for m in verdict.methods if m.method == "structure"]
    return json.dumps([(m.verdict, m.details) for m in found], sort_keys=True, default=str)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--answers", type=int, default=30)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "theoria.settings.base")
    import django

    django.setup()
    got = compare(args.chunks, args.answers, ROOT / "var")
    print(
        f"{got['claims']} claims: {got['same_label']} kept their label and {got['same_findings']} their structural "
        f"findings with the stored encodings and parses; largest change "
        f"of a confidence {got['largest_change']:.2e}, mean {got['mean_change']:.2e}"
    )


if __name__ == "__main__":
    main()
