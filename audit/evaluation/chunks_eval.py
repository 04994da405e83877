"""Whole passages read in chunks, measured at the reader (``nli_judge.passage_chunks``, ``NLI_CHUNKS``).

``python -m audit.evaluation.chunks_eval [--every N] [--model DIR] [--most K]`` reads every DEV claim
(every N-th answer group) against the chunks of its evidence passages (runs of whole sentences that fit
the cross-encoder beside the claim, AlignScore and MiniCheck's way), the ``K`` chunks sharing most words
with the claim, and prints the AUROC of the reader's best P(entailment) (SUPPORTED vs not) per dataset
and macro for:
- today's reading (the sentences and the window the judge reads, ``candidate_texts``);
- the best of the top k chunks alone, for k = 1, 2, 4, … up to ``K``;
- today's reading and the top k chunks together (the best over both: ``NLI_CHUNKS = k``);
each with the paired change against today's reading and its interval over answers. The reader alone:
no stacker, no checks. Nothing here is fitted on DEV.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def chunk_readings(model, records: list[dict], most: int) -> list[np.ndarray]:
    """Per claim, P(entailment) of its top ``most`` chunks, best covering first (``best_chunks``)."""
    from audit.evaluation.bench_data import claim_evidence_texts
    from audit.pipeline.features import prepare
    from audit.pipeline.nli_judge import best_chunks
    from audit.pipeline.nli_model import ENTAILMENT

    chunks = [best_chunks(prepare(r["claim"], claim_evidence_texts(r)), most) for r in records]
    flat = list(dict.fromkeys((c, r["claim"]) for r, cs in zip(records, chunks) for c in cs))
    probs: dict[tuple[str, str], float] = {}
    for start in range(0, len(flat), 256):
        part = flat[start : start + 256]
        probs.update(zip(part, model.probabilities(part)[:, ENTAILMENT]))
        print(f"  chunks read: {min(start + 256, len(flat))} of {len(flat)}", file=sys.stderr, flush=True)
    return [np.array([probs[(c, r["claim"])] for c in cs]) for r, cs in zip(records, chunks)]


def main(argv: list[str] | None = None, out=None) -> int:
    from audit.evaluation.bench_data import group_key
    from audit.evaluation.cli import subsample_groups
    from audit.evaluation.entailment_fit import DEFAULT_CLAIMS, load_dev
    from audit.evaluation.nli_fit import dev_nli_features
    from audit.evaluation.ranking import auroc_report, paired_auroc_difference
    from audit.pipeline.nli_judge import NLI_FEATURE_NAMES
    from audit.pipeline.nli_model import ARTIFACT_DIR, NLIModel

    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="python -m audit.evaluation.chunks_eval", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--claims", type=Path, default=DEFAULT_CLAIMS)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--model", type=Path, default=ARTIFACT_DIR)
    parser.add_argument("--most", type=int, default=4, help="chunks read per claim at most")
    args = parser.parse_args(argv)
    if args.most < 1:
        parser.error("--most must be at least 1")
    records = load_dev(args.claims)
    if args.every > 1:
        records = subsample_groups(records, args.every)
    model = NLIModel(args.model)
    # today's reading: the cache ``reader_compare`` and ``parts_eval`` read too (var/nli/)
    today = dev_nli_features(records, model, log=lambda *_: None)[
        :, NLI_FEATURE_NAMES.index("nli_entail_max")
    ]
    today = today.astype(np.float64)
    readings = chunk_readings(model, records, args.most)
    ds = [r["dataset"] for r in records]
    gold = [r["label"] == "SUPPORTED" for r in records]
    groups = [group_key(r) for r in records]
    n_chunks = np.array([len(c) for c in readings])
    print(
        f"Whole passages in chunks (reader {model.version}, {len(records)} DEV claims, every {args.every}. answer "
        f"group; chunks read per claim: mean {n_chunks.mean():.1f}): AUROC of the best P(entailment), "
        "SUPPORTED vs not, [95 % interval over answers]; change = paired against today's reading",
        file=out,
    )
    base = auroc_report(ds, gold, today, groups)
    ks = sorted({k for k in (1, 2, 4, 8, 16) if k < args.most} | {args.most})
    variants = [("today (2 sentences, 1 window)", today)]
    for k in ks:
        top = np.array([c[:k].max() if len(c) else 0.0 for c in readings])
        variants.append((f"top {k} chunk(s) alone", top))
        variants.append((f"today + top {k} chunk(s)", np.maximum(today, top)))
    for title, scores in variants:
        report = auroc_report(ds, gold, scores, groups)
        change = paired_auroc_difference(ds, gold, today, scores, groups)
        print(f"-- {title}", file=out)
        for name in base:
            a, c = report[name], change[name]
            print(
                f"   {name:30s} {100 * a[0]:5.1f} [{100 * a[1]:5.1f}, {100 * a[2]:5.1f}]  "
                f"change {100 * c[0]:+5.1f} [{100 * c[1]:+5.1f}, {100 * c[2]:+5.1f}]",
                file=out,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
