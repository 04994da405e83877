"""Fit the offline entailment model on the DEV claims, and measure it by grouped cross-validation.

``python manage.py fit_entailment`` (or ``python -m audit.evaluation.entailment_fit``) featurises
``claims_dev.jsonl`` (embeddings cached under ``var/``), reports 5-fold grouped CV figures
(groups = the benchmark README's group keys, so no question/claim/document straddles a fold)
and writes ``artifacts/entailment_model.json`` fitted on all rows. Every figure reported for
the fitted model comes from the out-of-fold predictions, never from rows it was fitted on.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
from tqdm import tqdm

from audit.evaluation.bench_data import BENCHMARKS_DIR, claim_evidence_texts, group_key, read_jsonl
from audit.pipeline.entailment_model import EntailmentModel, LinearHead
from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES, featurize
from audit.pipeline.text import content_stems

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CLAIMS = BENCHMARKS_DIR / "claims_dev.jsonl"
CACHE_DIR = REPO / "var" / "entailment_cache"
N_FOLDS = 5
C_SUPPORT = 0.5
C_REFUTE = 0.3


class CachedEmbed:
    """``encode_with_tokens`` through the process embedder, remembering results under var/.

    The DEV evidence takes minutes to embed on 2 cores; with this cache a refit takes seconds.
    """

    def __init__(self, cache_dir: Path = CACHE_DIR):
        self.dir = cache_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.table: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.dirty = False
        files = [self.dir / n for n in ("texts.json", "vecs.npy", "toks.npy", "offsets.npy")]
        if all(f.exists() for f in files):
            texts = json.loads(files[0].read_text())
            vecs, toks, offs = np.load(files[1]), np.load(files[2]), np.load(files[3])
            if len(texts) == len(vecs) == len(offs) - 1:
                toks = toks.astype(np.float32)
                self.table = {t: (vecs[i], toks[offs[i] : offs[i + 1]]) for i, t in enumerate(texts)}

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.table]
        if missing:
            from audit.pipeline.embedding import get_embedder

            vecs, toks = get_embedder().encode_with_tokens(missing)
            self.table.update(zip(missing, zip(vecs, toks)))
            self.dirty = True
        return np.stack([self.table[t][0] for t in texts]), [self.table[t][1] for t in texts]

    def save(self) -> None:
        if not self.dirty:
            return
        texts = list(self.table)
        (self.dir / "texts.json").write_text(json.dumps(texts))
        np.save(self.dir / "vecs.npy", np.stack([self.table[t][0] for t in texts]).astype(np.float32))
        lens = [len(self.table[t][1]) for t in texts]
        np.save(self.dir / "offsets.npy", np.concatenate([[0], np.cumsum(lens)]).astype(np.int64))
        np.save(self.dir / "toks.npy", np.concatenate([self.table[t][1] for t in texts]).astype(np.float16))
        self.dirty = False


def compute_idf(records: list[dict]) -> dict[str, float]:
    """IDF of word stems over the DEV evidence passages (unsupervised; labels are not read)."""
    df: Counter = Counter()
    n = 0
    seen = set()
    for rec in records:
        for text in claim_evidence_texts(rec):
            if text in seen:
                continue
            seen.add(text)
            n += 1
            df.update(set(content_stems(text)))
    idf = {w: round(math.log((n + 1) / (c + 1)) + 1.0, 3) for w, c in df.items() if c >= 2}
    return dict(sorted(idf.items(), key=lambda kv: kv[1])[:40000])


def load_dev(path: Path = DEFAULT_CLAIMS):
    good, bad = read_jsonl(path, ("id", "claim", "evidence", "label"))
    if bad:
        raise ValueError(f"{path}: line {bad[0].line_no}: {bad[0].reason}")
    return [rec for _, rec in good]


def dev_features(records: list[dict], idf: dict[str, float], embed=None) -> np.ndarray:
    embed = embed or CachedEmbed()
    bar = tqdm(total=len(records), desc="featurise", unit="claim", disable=None)
    X, _ = featurize(
        [(r["claim"], claim_evidence_texts(r)) for r in records], embed, idf, progress=bar.update
    )
    bar.close()
    if hasattr(embed, "save"):
        embed.save()
    return X


DATASET_WEIGHT_ALPHA = 0.5  # 0: classes balanced over the pool; 1: balanced within every dataset


def sample_weights(records: list[dict], y: np.ndarray, alpha: float = DATASET_WEIGHT_ALPHA) -> np.ndarray:
    """Weights that balance the classes, partly within each dataset (geometric mix by ``alpha``).

    The product is judged by per-dataset balanced accuracy with one threshold for all data, so
    no dataset's class ratio may pull the decision point; alpha = 0.5 was chosen by grouped CV.
    """
    ds = [r.get("dataset", "") for r in records]
    n_class = Counter(y.tolist())
    n_ds_class = Counter(zip(ds, y.tolist()))
    w = np.array(
        [
            (1.0 / n_ds_class[(d, c)]) ** alpha * (1.0 / n_class[c]) ** (1 - alpha)
            for d, c in zip(ds, y.tolist())
        ]
    )
    return w / w.mean()


# rows the NLI stacker learns from beside the DEV claims (``nli_fit``: minimal pairs, unrelated evidence)
GENERATED = "generated"
GENERATED_WEIGHT = 0.3  # their weight relative to their class balance (DEV's own rows weigh 1)


def stacker_weights(records: list[dict], y: np.ndarray) -> np.ndarray:
    """``sample_weights``, with the generated rows (dataset ``GENERATED``) at ``GENERATED_WEIGHT`` of theirs."""
    weights = sample_weights(records, y)
    weights[np.array([r.get("dataset") == GENERATED for r in records], dtype=bool)] *= GENERATED_WEIGHT
    return weights


def fit_head(X: np.ndarray, y: np.ndarray, C: float, weights: np.ndarray | None = None) -> LinearHead:
    from sklearn.linear_model import LogisticRegression

    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-6] = 1.0
    clf = LogisticRegression(C=C, class_weight=None if weights is not None else "balanced", max_iter=3000)
    clf.fit((X - mean) / scale, y, sample_weight=weights)
    return LinearHead(mean, scale, clf.coef_[0], clf.intercept_[0])


def refute_rows(records: list[dict]) -> np.ndarray:
    return np.array([r["dataset"] == "scifact" and r["label"] != "SUPPORTED" for r in records])


def fit(
    records: list[dict], X: np.ndarray, idf: dict[str, float], meta: dict | None = None
) -> EntailmentModel:
    y_sup = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    rmask = refute_rows(records)
    y_ref = np.array([r["label"] == "REFUTED" for r in records], dtype=int)
    weights = sample_weights(records, y_sup)
    support = fit_head(X, y_sup, C_SUPPORT, weights)
    fast_cols = [FEATURE_NAMES.index(n) for n in FAST_FEATURES]
    fast = fit_head(X[:, fast_cols], y_sup, C_SUPPORT, weights)
    refute = fit_head(X[rmask], y_ref[rmask], C_REFUTE)
    return EntailmentModel(support, refute, idf, meta, fast)


def cross_validate(
    records: list[dict], X: np.ndarray, idf: dict[str, float], n_folds: int = N_FOLDS, depth: str = "full"
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold support logits and refute probabilities (GroupKFold on the README keys)."""
    from sklearn.model_selection import GroupKFold

    groups = np.array([group_key(r) for r in records])
    z = np.zeros(len(records))
    pref = np.zeros(len(records))
    for train, test in GroupKFold(n_splits=n_folds).split(X, groups=groups):
        model = fit([records[i] for i in train], X[train], idf)
        z[test] = model.support_logit(X[test], depth)
        pref[test] = model.refute_prob(X[test])
    return z, pref


def main(argv: list[str] | None = None) -> int:
    import argparse

    from audit.evaluation import bench_eval

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--input", default=str(DEFAULT_CLAIMS))
    ap.add_argument("--no-write", action="store_true", help="report CV figures only")
    args = ap.parse_args(argv)
    records = load_dev(Path(args.input))
    idf = compute_idf(records)
    X = dev_features(records, idf)
    z, pref = cross_validate(records, X, idf)
    print(
        bench_eval.format_claim_table(records, z, pref, title="grouped 5-fold CV (out-of-fold), depth full")
    )
    z_fast, _ = cross_validate(records, X, idf, depth="fast")
    print(
        bench_eval.format_claim_table(
            records,
            z_fast,
            pref,
            title="grouped 5-fold CV (out-of-fold), depth fast (words only; the entailment head alone)",
        )
    )
    if not args.no_write:
        model = fit(
            records,
            X,
            idf,
            meta={
                "fitted_on": Path(args.input).name,
                "rows": len(records),
                "cv": "GroupKFold(5) on README group keys",
            },
        )
        model.save()
        print(f"wrote {Path(model_path()).relative_to(REPO)}")
    return 0


def model_path():
    from audit.pipeline.entailment_model import ARTIFACT_PATH

    return ARTIFACT_PATH


if __name__ == "__main__":
    raise SystemExit(main())
