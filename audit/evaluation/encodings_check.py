"""``python -m audit.evaluation.encodings_check [--chunks N] [--answers N]``: stored encodings change no verdict.

Builds the bench's knowledge base (``manage.py bench``, cached under ``var/``), stores its sentences'
encodings as ingestion does (``pipeline/encodings.py``), then audits the bench's answers twice from empty
caches: with every evidence sentence encoded when read, and with the stored encodings read. Prints the
number of claims, how many kept their label and the largest change of a confidence. A figure, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def compare(n_chunks: int, n_answers: int, cache_dir: Path, err=None) -> dict[str, float]:
    """Audit the bench's answers without and with the stored encodings: claims, same labels, largest
    and mean change of a confidence."""
    from audit.evaluation.cli import (
        BENCH_POOL_SENTENCES,
        bench_answers,
        bench_encodings,
        build_bench_kb,
        clear_text_caches,
    )
    from audit.pipeline.audit import audit_answer
    from audit.pipeline.index import HybridIndex
    from audit.pipeline.retrieval import KnowledgeBase
    from audit.pipeline.types import Passage

    err = err or sys.stderr
    ids, texts, vectors = build_bench_kb(n_chunks, cache_dir, err, min(BENCH_POOL_SENTENCES, n_chunks // 5))
    index = HybridIndex()
    index.add(ids, texts, vectors)

    def lookup(wanted: list[str]) -> dict[str, Passage]:
        return {i: Passage(id=i, text=index.text(i) or "", source_type="kb") for i in wanted if i in index}

    store = bench_encodings(texts, cache_dir, err)
    readings = []
    for encodings in (None, store):
        kb = KnowledgeBase(index=index, lookup=lookup, vectors=index.vectors, encodings=encodings)
        clear_text_caches()
        readings.append(
            [
                (v.claim.text, v.label, float(v.confidence))
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
        "largest_change": float(change.max()) if len(change) else 0.0,
        "mean_change": float(change.mean()) if len(change) else 0.0,
    }


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
        f"{got['claims']} claims: {got['same_label']} kept their label with the stored encodings; largest change "
        f"of a confidence {got['largest_change']:.2e}, mean {got['mean_change']:.2e}"
    )


if __name__ == "__main__":
    main()
