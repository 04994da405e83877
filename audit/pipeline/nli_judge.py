"""The NLI judge (the default): a cross-encoder reads the claim against its best evidence, stacked with the features.

For each (claim, evidence passages) pair:
1. the feature model's features (``features.featurize``: similarity, word and entity coverage, numbers,
   negation, word-piece alignment at the full depth; words only at the fast depth);
2. the NLI cross-encoder (``nli_model.py``) reads the claim against the few evidence texts that rank
   best for it, ``NLI_SENTENCES`` sentences and ``NLI_WINDOWS`` two-sentence windows chosen by word
   overlap with the claim (at the fast depth ``NLI_FAST_SENTENCES`` and ``NLI_FAST_WINDOWS``, the reading
   its own support head was fitted on, ``audit/evaluation/fast_reading.py``), so its cost per
   claim is bounded whatever the evidence's length (a claim read
   against one of its passages alone, for the evidence links, the conflict check and citations, reads
   that passage's best sentence only: ``NLI_PASSAGE_SENTENCES``, ``NLI_PASSAGE_WINDOWS``); from their entailment / contradiction /
   neutral probabilities come ``NLI_FEATURE_NAMES``;
3. a stacker (logistic heads, ``artifacts/nli/stacker.json``) reads both: the support head gives the
   support logit, Platt scaling turns it into P(supported) (calibrated on out-of-fold logits: of the
   claims it gives 0.7, about 70 % are supported), and the refute head P(refuted | not supported).

Two numbers come out, because the workspace threshold is a threshold on an audit score, not on a
probability: ``details["p_supported"]`` is the calibrated probability (the claim card shows it, the
reliability diagram and ``evaluate``'s ECE read it), and the judgement's ``p_supported`` (the claim's
confidence) is that probability moved so that the decision point lands on the workspace's
``audit_score_threshold`` (``NLIStacker.audit_score``): SUPPORTED is exactly "P(supported) at or above
the decision point", whatever the threshold. The point is the workspace's operating point
(``strictness``, ``operating_points.py``: a cut chosen on DEV for the catch rate it gives), by default
the one chosen on DEV for the best mean bAcc. Labelling at 0.8 on the calibrated probability itself would call SUPPORTED only claims 80 %
likely to be, and most supported claims would fall to NEI (docs/ARCHITECTURE.md has the figures).

The stacker is fitted on the DEV claims and measured by grouped cross-validation
(``audit/evaluation/nli_fit.py``, ``manage.py fit_nli``); the numeric and structural checks still
override every judge in ``scoring.label_claim``.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from audit.constants import (
    NLI_CASCADE,
    NLI_CHUNK_MIN_WORDS,
    NLI_CHUNK_WORDS,
    NLI_CHUNKS,
    NLI_FAST_SENTENCES,
    NLI_FAST_WINDOWS,
    NLI_PASSAGE_SENTENCES,
    NLI_PASSAGE_WINDOWS,
    NLI_SENTENCES,
    NLI_UNRELATED_MAX_ENTAIL,
    NLI_UNRELATED_MAX_P,
    NLI_WINDOWS,
)
from audit.pipeline.cascade import STAGE_CHEAP, STAGE_READER, Cascade, shipped_cascade
from audit.pipeline.entailment_model import LinearHead, confidence_from_logit
from audit.pipeline.features import (
    FAST_FEATURES,
    FEATURE_NAMES,
    PreparedPair,
    featurize,
    stem_coverage,
    stem_coverages,
)
from audit.pipeline.judge_base import Judge, encode_tokens_fn, judgements_of
from audit.pipeline.nli_model import ARTIFACT_DIR, CONTRADICTION, ENTAILMENT, NEUTRAL, get_nli_model
from audit.pipeline.operating_points import shipped_operating_points
from audit.pipeline.text import content_stems

STACKER_FILE = "stacker.json"
WINDOW_SEEDS = 3  # windows are built around the sentences sharing most words with the claim
NLI_FEATURE_NAMES = [
    "nli_entail_max",  # the best entailment over the texts read
    "nli_contra_at_best",  # contradiction of the text that entails most
    "nli_neutral_at_best",
    "nli_contra_max",
    "nli_entail_first",  # the text that shares most words with the claim
    "nli_contra_first",
    "nli_entail_logit",  # log-odds of the best entailment
    "nli_contra_logit",  # log-odds of the strongest contradiction
    "nli_coverage",  # share of the claim's content words the texts read contain
    # the reading counts most where the texts read hold the claim's words: a minimal edit of a
    # sentence the model read whole, rather than a claim whose support lies elsewhere
    "nli_entail_logit_x_coverage",
    "nli_contra_logit_x_coverage",
]


def passage_chunks(
    p: PreparedPair, budget: int = NLI_CHUNK_WORDS, least: int = NLI_CHUNK_MIN_WORDS
) -> list[str]:
    """Every passage cut into runs of whole sentences that fit the cross-encoder beside the claim (at most
    ``budget`` words with the claim's, at least ``least`` of evidence), in passage order; a sentence longer
    than that is a chunk of its own (the tokenizer cuts it)."""
    room = max(least, budget - len(p.claim.split()))
    breaks = set(p.passage_breaks)
    chunks: list[str] = []
    run: list[str] = []
    words = 0
    for i, sent in enumerate(p.sentences):
        n = len(sent.split())
        if run and (i in breaks or words + n > room):
            chunks.append(" ".join(run))
            run, words = [], 0
        run.append(sent)
        words += n
    if run:
        chunks.append(" ".join(run))
    return chunks


def best_chunks(p: PreparedPair, k: int) -> list[str]:
    """The ``k`` chunks of ``passage_chunks`` covering most of the claim's content words (ties: passage order)."""
    chunks = passage_chunks(p)
    if k <= 0 or not chunks:
        return []
    cst = p.claim_stems
    cov = [stem_coverage(cst, set(content_stems(c))) for c in chunks]
    return [chunks[i] for i in sorted(range(len(chunks)), key=lambda i: (-cov[i], i))[:k]]


def candidate_texts(
    p: PreparedPair, sentences: int = NLI_SENTENCES, windows: int = NLI_WINDOWS, chunks: int = NLI_CHUNKS
) -> list[str]:
    """The evidence texts the cross-encoder reads for one claim: the sentences sharing most content
    words with it, then the two-sentence windows (within one passage) covering most of its words, then
    with ``chunks`` the passage chunks covering most of them (``best_chunks``)."""
    if not p.sentences:
        return []
    cst = p.claim_stems
    sets = [set(s) for s in p.sent_stems]
    cov = stem_coverages(cst, sets)
    order = sorted(range(len(p.sentences)), key=lambda i: (-cov[i], i))
    out = [p.sentences[i] for i in order[:sentences]]
    breaks = set(p.passage_breaks)
    pairs = {
        (a, a + 1)
        for i in order[:WINDOW_SEEDS]
        for a in (i - 1, i)
        if a >= 0 and a + 1 < len(p.sentences) and (a + 1) not in breaks
    }
    ranked = sorted(pairs, key=lambda ab: (-stem_coverage(cst, sets[ab[0]] | sets[ab[1]]), ab))
    for a, b in ranked[:windows]:
        out.append(f"{p.sentences[a]} {p.sentences[b]}")
    out += best_chunks(p, chunks)
    return list(dict.fromkeys(out))


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def nli_features(probs: np.ndarray, coverage: float = 0.0) -> np.ndarray:
    """``NLI_FEATURE_NAMES`` from the (texts, 3) probabilities of one claim's candidates (first = best
    ranked) and the share of the claim's content words those texts contain."""
    if not len(probs):
        probs = np.array([[0.0, 0.0, 1.0]], dtype=np.float32)
        coverage = 0.0
    best = int(np.argmax(probs[:, ENTAILMENT]))
    entail, contra = _logit(float(probs[best, ENTAILMENT])), _logit(float(probs[:, CONTRADICTION].max()))
    return np.array(
        [
            probs[best, ENTAILMENT],
            probs[best, CONTRADICTION],
            probs[best, NEUTRAL],
            probs[:, CONTRADICTION].max(),
            probs[0, ENTAILMENT],
            probs[0, CONTRADICTION],
            entail,
            contra,
            coverage,
            entail * coverage,
            contra * coverage,
        ],
        dtype=np.float32,
    )


def text_coverage(p: PreparedPair, texts: list[str]) -> float:
    """Share of the claim's content words found in ``texts`` (sentences or windows of ``p``)."""
    if not p.claim_stems or not texts:
        return 0.0
    stems = {s: set(st) for s, st in zip(p.sentences, p.sent_stems)}
    read: set[str] = set()
    for t in texts:
        read |= stems.get(t) or set(content_stems(t))
    return stem_coverage(p.claim_stems, read)


class NLIStacker:
    """Logistic heads over the features and the NLI features, and the Platt calibration of each support head."""

    def __init__(
        self,
        support: LinearHead,
        refute: LinearHead,
        fast: LinearHead,
        calibration: tuple[float, float],
        fast_calibration: tuple[float, float],
        idf: dict[str, float],
        meta: dict | None = None,
    ):
        self.support, self.refute, self.fast = support, refute, fast
        self.calibration, self.fast_calibration = calibration, fast_calibration
        self.idf = idf
        self.meta = meta or {}
        self.fast_columns = [FEATURE_NAMES.index(n) for n in FAST_FEATURES] + [
            len(FEATURE_NAMES) + k for k in range(len(NLI_FEATURE_NAMES))
        ]

    def support_logit(self, XN: np.ndarray, depth: str = "full") -> np.ndarray:
        if depth == "fast":
            return self.fast.logit(np.asarray(XN)[:, self.fast_columns])
        return self.support.logit(XN)

    def calibrated(self, z: np.ndarray, depth: str = "full") -> np.ndarray:
        a, b = self.fast_calibration if depth == "fast" else self.calibration
        return 1.0 / (1.0 + np.exp(-(a * np.asarray(z, dtype=np.float64) + b)))

    def refute_prob(self, XN: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.refute.logit(XN)))

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "unversioned"))

    @property
    def decision_threshold(self) -> float:
        """The calibrated P(supported) at which SUPPORTED is decided, chosen on DEV (best mean bAcc)."""
        return float(self.meta.get("best_threshold", 0.5))

    def audit_score(self, p: np.ndarray, threshold: float, cut: float | None = None) -> np.ndarray:
        """The confidence compared with the workspace's ``audit_score_threshold``: P(supported) moved so
        that the decision point lands on ``threshold``, so SUPPORTED means P(supported) >= the point.
        The point is ``cut``, the workspace's operating point (``operating_points.py``: its strictness),
        else ``decision_threshold``, the one chosen on DEV (the ``balanced`` point)."""
        t = min(max(self.decision_threshold if cut is None else cut, 1e-6), 1 - 1e-6)
        p = np.clip(np.asarray(p, dtype=np.float64), 1e-9, 1 - 1e-9)
        return confidence_from_logit(np.log(p / (1 - p)) - math.log(t / (1 - t)), threshold)

    def save(self, path: Path) -> None:
        payload = {
            "features": FEATURE_NAMES,
            "nli_features": NLI_FEATURE_NAMES,
            "fast_features": FAST_FEATURES,
            "support": self.support.as_dict(),
            "refute": self.refute.as_dict(),
            "fast": self.fast.as_dict(),
            "calibration": list(self.calibration),
            "fast_calibration": list(self.fast_calibration),
            "idf": self.idf,
            "meta": self.meta,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload, separators=(",", ":"), sort_keys=True))

    @classmethod
    def load(cls, path: Path) -> NLIStacker:
        if not Path(path).is_file():
            raise RuntimeError(f"{path} is missing; build it with `python manage.py fit_nli`")
        payload = json.loads(Path(path).read_text())
        if (
            payload["features"] != FEATURE_NAMES
            or payload["nli_features"] != NLI_FEATURE_NAMES
            or payload["fast_features"] != FAST_FEATURES
        ):
            raise RuntimeError(f"{path} was fitted on other features; refit with `python manage.py fit_nli`")
        return cls(
            LinearHead(**payload["support"]),
            LinearHead(**payload["refute"]),
            LinearHead(**payload["fast"]),
            tuple(payload["calibration"]),
            tuple(payload["fast_calibration"]),
            payload["idf"],
            payload.get("meta"),
        )


@lru_cache(maxsize=1)
def default_stacker() -> NLIStacker:
    return NLIStacker.load(ARTIFACT_DIR / STACKER_FILE)


def read_candidates(
    prepared: list[PreparedPair], model=None, reads: list[tuple[int, int]] | None = None
) -> tuple[np.ndarray, list[list[str]]]:
    """(the NLI features of each prepared pair, the texts read for each), one batched model call.
    ``reads``: the (sentences, two-sentence windows) read for each pair (default ``NLI_SENTENCES``,
    ``NLI_WINDOWS`` for every one)."""
    model = model or get_nli_model()
    texts = [
        candidate_texts(p, sentences=s, windows=w)
        for p, (s, w) in zip(prepared, reads or [(NLI_SENTENCES, NLI_WINDOWS)] * len(prepared))
    ]
    flat = [(t, p.claim) for p, ts in zip(prepared, texts) for t in ts]
    probs = model.probabilities(flat) if flat else np.zeros((0, 3), np.float32)
    out, k = [], 0
    for p, ts in zip(prepared, texts):
        out.append(nli_features(probs[k : k + len(ts)], text_coverage(p, ts)))
        k += len(ts)
    N = np.stack(out) if out else np.zeros((0, len(NLI_FEATURE_NAMES)), np.float32)
    return N, texts


def unrelated_cap(p: np.ndarray, N: np.ndarray) -> np.ndarray:
    """``p`` (calibrated P(supported)) capped at ``NLI_UNRELATED_MAX_P`` where the texts read share no
    content word with the claim and none is read as entailing it (``N``: the ``NLI_FEATURE_NAMES`` rows)."""
    unrelated = (N[:, NLI_FEATURE_NAMES.index("nli_coverage")] <= 0.0) & (
        N[:, NLI_FEATURE_NAMES.index("nli_entail_max")] < NLI_UNRELATED_MAX_ENTAIL
    )
    return np.where(unrelated, np.minimum(p, NLI_UNRELATED_MAX_P), p)


class NLIJudge(Judge):
    """Features + the cross-encoder's reading, stacked and calibrated (``NLIStacker``)."""

    name = "nli"

    def __init__(
        self,
        stacker: NLIStacker | None = None,
        model=None,
        cascade: bool = NLI_CASCADE,
        features_model=None,
        fast_reading: tuple[int, int] | None = None,
    ):
        """``cascade``: let the cheap signals settle the pairs they are sure of (``cascade.py``) where the
        shipped cuts exist; False: the cross-encoder reads every pair. ``features_model``: the feature
        model whose support head gives the cheap signal (default the shipped one; a CV fold's own).
        ``fast_reading``: the (sentences, windows) read per claim at the fast depth (default
        ``NLI_FAST_SENTENCES``, ``NLI_FAST_WINDOWS``; another one is for measuring, with a fast head
        fitted on it: ``fit_nli --fast-head --fast-after``)."""
        self._stacker = stacker
        self._model = model
        self._cascade = cascade
        self._features_model = features_model
        self._fast_reading = fast_reading or (NLI_FAST_SENTENCES, NLI_FAST_WINDOWS)

    @property
    def features_model(self):
        from audit.pipeline.entailment_model import default_model

        return self._features_model or default_model()

    @property
    def stacker(self) -> NLIStacker:
        return self._stacker or default_stacker()

    @property
    def version(self) -> str:
        model = self._model or get_nli_model()
        return f"nli:{model.version}+{self.stacker.version}"

    def _stack(
        self, pairs, ctx, progress=None, cascade: Cascade | None = None
    ) -> tuple[np.ndarray, list[PreparedPair], np.ndarray | None]:
        """The stacker's full rows (features then ``NLI_FEATURE_NAMES``) of each pair, the prepared pairs,
        and with ``cascade`` the cheap P(supported) of each pair, NaN where the reader read it (the rows of
        the pairs it settled hold no reading: zeros)."""
        depth = ctx.thresholds.verification_depth
        items = [
            (p.claim, p.passages) if p.allowed is None else (p.claim, p.passages, p.allowed) for p in pairs
        ]
        X, prepared = featurize(
            items, None if depth == "fast" else encode_tokens_fn(ctx), self.stacker.idf, progress=progress
        )
        cheap = None
        todo = np.arange(len(prepared))
        if cascade is not None:
            p_cheap = cascade.probability(self.features_model.support.logit(X))
            settled = cascade.settled(p_cheap)
            cheap = np.where(settled, p_cheap, np.nan)
            todo = np.flatnonzero(~settled)
        N = np.zeros((len(prepared), len(NLI_FEATURE_NAMES)), dtype=np.float32)
        if len(todo):
            # a per-passage pair (``allowed`` set) reads that passage's best sentence only
            joint = self._fast_reading if depth == "fast" else (NLI_SENTENCES, NLI_WINDOWS)
            reads = [
                joint if pairs[i].allowed is None else (NLI_PASSAGE_SENTENCES, NLI_PASSAGE_WINDOWS)
                for i in todo
            ]
            N[todo], _ = read_candidates([prepared[i] for i in todo], self._model, reads)
        return np.concatenate([X, N], axis=1), prepared, cheap

    def stack_inputs(self, pairs, ctx, progress=None) -> tuple[np.ndarray, list[str]]:
        """The rows the support head reads at the context's depth, and their names (the calibration hook)."""
        XN, _, _ = self._stack(pairs, ctx, progress)
        if ctx.thresholds.verification_depth == "fast":
            return XN[:, self.stacker.fast_columns], list(FAST_FEATURES) + NLI_FEATURE_NAMES
        return XN, list(FEATURE_NAMES) + NLI_FEATURE_NAMES

    def stacker_head(self, depth: str):
        return self.stacker.fast if depth == "fast" else self.stacker.support

    def judge(self, pairs, ctx, progress=None, head=None):
        """``head``: a workspace's refitted support head over the same inputs (``audit.pipeline.calibration``)."""
        if not pairs:
            return []
        depth = ctx.thresholds.verification_depth
        # the cascade's cuts were chosen for the shipped heads at the full depth
        cascade = shipped_cascade() if self._cascade and head is None and depth == "full" else None
        XN, prepared, cheap = self._stack(pairs, ctx, progress, cascade)
        stacker = self.stacker
        if head is None:
            z = stacker.support_logit(XN, depth)
        else:
            z = head.logit(XN[:, stacker.fast_columns] if depth == "fast" else XN)
        version = self.version
        p = unrelated_cap(stacker.calibrated(z, depth), XN[:, len(FEATURE_NAMES) :])
        p_refuted = stacker.refute_prob(XN)
        read = np.ones(len(p), dtype=bool) if cheap is None else np.isnan(cheap)
        if not read.all():  # the pairs the cheap signals settled: their P and refutation are the features'
            p = np.where(read, p, cheap)
            z = np.where(read, z, np.log(np.clip(p, 1e-9, 1.0) / np.clip(1.0 - p, 1e-9, 1.0)))
            p_refuted = np.where(
                read, p_refuted, self.features_model.refute_prob(XN[:, : len(FEATURE_NAMES)])
            )
        details = [
            {
                "p_supported": round(float(pk), 4),  # calibrated: of claims at 0.7, about 70 % are supported
                "judge_version": version,
                "stage": STAGE_READER if r else STAGE_CHEAP,
                **({"nli": {n: round(float(v), 4) for n, v in zip(NLI_FEATURE_NAMES, row)}} if r else {}),
            }
            for pk, r, row in zip(p, read, XN[:, len(FEATURE_NAMES) :])
        ]
        points = shipped_operating_points()
        cut = points.cut(ctx.thresholds.strictness, self, depth) if points is not None else None
        score = stacker.audit_score(p, ctx.thresholds.audit_score_threshold, cut)
        return judgements_of(prepared, score, p_refuted, z, details)
