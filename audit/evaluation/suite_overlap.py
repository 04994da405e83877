"""Is any text of the contrast suite among the texts the cross-encoder trains on?

``python -m audit.evaluation.suite_overlap`` compares every sentence of the suite's premises and claims
(``contrast.load_suite``, the rows measured) with:
- the sentences the minimal pairs of steps 2-4 are made from (``nli_fit.training_documents``: DEV's
  evidence text and the demo knowledge base; every generated pair's premise is one or two of them and
  its claim an edit of one), exactly (lower case, punctuation dropped) and nearly (word Jaccard >=
  ``NEAR``, the share a reworded sentence keeps);
- the in-style rows of step 4 (``nli_attribution.load_rows``): a suite sentence of at least
  ``MIN_WORDS`` words found inside one of their premises or claims.
It prints the three counts and the near pairs; a suite row in training shows here as a count above 0.
"""

from __future__ import annotations

import re
from pathlib import Path

NEAR = 0.6
MIN_WORDS = 6


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def overlap(suite: list[dict], sentences: list[str], rows: list[dict]) -> dict:
    """{"exact": [...], "near": [(training sentence, suite sentence)], "inside": [...]} (module docstring)."""
    from audit.pipeline.extraction import split_sentences

    mine = {_norm(s): s for r in suite for t in (r["premise"], r["hypothesis"]) for s in split_sentences(t)}
    words = [(set(k.split()), s) for k, s in mine.items() if len(k.split()) >= 5]
    near = []
    for s in sentences:
        w = set(_norm(s).split())
        hit = next((s2 for w2, s2 in words if len(w & w2) >= NEAR * len(w | w2)), None)
        if hit is not None:
            near.append((s, hit))
    texts = [_norm(r["premise"]) + " | " + _norm(r["hypothesis"]) for r in rows]
    return {
        "exact": [s for s in sentences if _norm(s) in mine],
        "near": near,
        "inside": [k for k in mine if len(k.split()) >= MIN_WORDS and any(k in t for t in texts)],
    }


def main(claims: Path | None = None) -> int:
    from audit.evaluation.contrast import load_suite
    from audit.evaluation.entailment_fit import DEFAULT_CLAIMS, load_dev
    from audit.evaluation.nli_attribution import load_rows
    from audit.evaluation.nli_fit import training_documents

    sentences = [s for d in training_documents(load_dev(claims or DEFAULT_CLAIMS)) for s in d]
    rows = load_rows()
    found = overlap(load_suite(), sentences, rows)
    print(
        f"contrast suite against {len(sentences)} minimal-pair source sentences and {len(rows)} attribution rows: "
        f"{len(found['exact'])} equal, {len(found['near'])} near (word Jaccard >= {NEAR}), "
        f"{len(found['inside'])} suite sentences inside an attribution row"
    )
    for a, b in found["near"]:
        print(f"  near: {a!r} ~ {b!r}")
    return 0 if not any(found.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
