"""The learned judge: frozen MiniLM word-piece states aligned by a small cross-attention head.

For a (claim, evidence) pair the claim's content word-pieces attend over the pieces of its best
lexically aligned evidence sentences (``HEAD_SENTENCES`` of those ``features.prepare`` selects; their
states are the ones the feature model already embeds, so the head costs no model time). ESIM-style
per piece: [c, a, c - a, c * a] of the projected claim piece c and its soft-aligned evidence a, plus
the piece's best cosine, go through a small layer, are pooled (mean, max) and give three logits:
supported / refuted / not enough info. The head is trained (``learned_fit.py``) on pairs generated
from evidence text — supported compressions, clauses and paraphrases; contradictions by antonyms,
negating prefixes, number, entity and quantifier swaps, negation; not-enough-info by added specifics,
unstated obligations and sibling sentences — so it never sees a DEV label.

A stacker (the ``entailment_model`` logistic heads) then reads the feature model's features and the
head's three logits; it is fitted on the DEV claims, measured by grouped cross-validation. Its support
logit is mapped to P(supported) by Platt scaling fitted on the out-of-fold logits (calibrated: of the
claims at confidence 0.8, about 80% are supported). At the ``fast`` depth the words-only head decides.
Inference is NumPy; the artefact is ``artifacts/learned_judge.npz``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from audit.pipeline.judge_base import (
    Judge,
    Judgement,
    JudgePair,
    Progress,
    encode_tokens_fn,
    judgements_of,
    linear_stack,
    model_digest,
)

if TYPE_CHECKING:
    from audit.pipeline.entailment_model import EntailmentModel, LinearHead
    from audit.pipeline.features import PreparedPair

# texts -> (their vectors (n, d), their word-piece matrices), as ``features.featurize`` reads it
EncodeTokens = Callable[[list[str]], tuple[np.ndarray, list[np.ndarray]]]

ARTIFACT_PATH = Path(__file__).resolve().parent / "artifacts" / "learned_judge.npz"
HEAD_SENTENCES = 4  # evidence sentences (best lexical alignment first) the head attends over
MAX_CLAIM_PIECES = 48
MAX_EVIDENCE_PIECES = 192
HEAD_OUTPUTS = ("head_supported", "head_refuted", "head_nei")
UNALIGNED_COS = 0.55  # as features.TOKEN_ALIGNED


def head_inputs(prepared: PreparedPair, tok: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(claim pieces (m, 384), evidence pieces (n, 384)) of one prepared pair; unit vectors."""
    dim = 384
    claim = np.asarray(tok.get(prepared.claim, np.zeros((0, dim))), dtype=np.float32)[:MAX_CLAIM_PIECES]
    cset = set(prepared.claim_stems)
    order = sorted(prepared.selected, key=lambda i: (-len(cset & set(prepared.sent_stems[i])), i))
    mats = [
        np.asarray(tok[prepared.sentences[i]], dtype=np.float32)
        for i in order[:HEAD_SENTENCES]
        if len(tok.get(prepared.sentences[i], ()))
    ]
    ev = np.concatenate(mats)[:MAX_EVIDENCE_PIECES] if mats else np.zeros((0, dim), np.float32)
    return claim, ev


class HeadWeights:
    """The cross-attention head's parameters (NumPy), as trained by ``learned_fit.TorchHead``."""

    NAMES = ("log_tau", "proj_w", "proj_b", "mix_w", "mix_b", "out_w", "out_b")
    log_tau: np.ndarray
    proj_w: np.ndarray
    proj_b: np.ndarray
    mix_w: np.ndarray
    mix_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray

    def __init__(self, **arrays: ArrayLike) -> None:
        for n in self.NAMES:
            setattr(self, n, np.asarray(arrays[n], dtype=np.float32))

    def logits(self, claim: np.ndarray, ev: np.ndarray) -> np.ndarray:
        if not len(claim) or not len(ev):
            return np.zeros(3, dtype=np.float32)
        cos = claim @ ev.T  # (m, n)
        att = np.exp(float(np.exp(self.log_tau)) * (cos - cos.max(axis=1, keepdims=True)))
        att /= att.sum(axis=1, keepdims=True)
        cp = claim @ self.proj_w.T + self.proj_b
        ep = ev @ self.proj_w.T + self.proj_b
        a = att @ ep
        best = cos.max(axis=1, keepdims=True)
        m = np.concatenate([cp, a, cp - a, cp * a, best, (best < UNALIGNED_COS).astype(np.float32)], axis=1)
        h = np.maximum(m @ self.mix_w.T + self.mix_b, 0.0)
        pooled = np.concatenate([h.mean(axis=0), h.max(axis=0), [best.mean(), best.min()]])
        out: np.ndarray = pooled @ self.out_w.T + self.out_b
        return out


class LearnedModel:
    """Head weights + the stacker (an ``EntailmentModel`` over features and head logits) + calibration."""

    def __init__(
        self,
        head: HeadWeights,
        stacker: EntailmentModel,
        calibration: tuple[float, float],
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.head = head
        self.stacker = stacker
        self.calibration = calibration  # (a, b): P(supported) = sigmoid(a * logit + b)
        self.meta = meta or {}

    @property
    def idf(self) -> dict[str, float]:
        return self.stacker.idf

    def head_logits(self, prepared: list[PreparedPair], tok: dict[str, np.ndarray]) -> np.ndarray:
        return (
            np.stack([self.head.logits(*head_inputs(p, tok)) for p in prepared])
            if prepared
            else np.zeros((0, 3), np.float32)
        )

    def calibrated(self, z: np.ndarray) -> np.ndarray:
        a, b = self.calibration
        return 1.0 / (1.0 + np.exp(-(a * np.asarray(z, dtype=np.float64) + b)))

    def save(self, path: Path = ARTIFACT_PATH) -> None:
        s = self.stacker
        payload = {
            "support": s.support.as_dict(),
            "refute": s.refute.as_dict(),
            "fast": s.fast.as_dict() if s.fast else None,
            "idf": s.idf,
            "meta": self.meta,
            "calibration": list(self.calibration),
        }
        arrays = {n: getattr(self.head, n) for n in HeadWeights.NAMES}
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            np.savez_compressed(
                fh,
                stacker=np.frombuffer(json.dumps(payload).encode(), dtype=np.uint8),
                **{k: v.astype(np.float16 if v.size > 1000 else np.float32) for k, v in arrays.items()},
            )

    @classmethod
    def load(cls, path: Path = ARTIFACT_PATH) -> "LearnedModel":
        from audit.pipeline.entailment_model import EntailmentModel, LinearHead

        if not Path(path).is_file():
            raise RuntimeError(f"{path} is missing; build it with `python manage.py fit_learned_judge`")
        with np.load(path) as data:
            payload = json.loads(bytes(data["stacker"]).decode())
            head = HeadWeights(**{n: data[n] for n in HeadWeights.NAMES})
        fast = payload.get("fast")
        stacker = EntailmentModel(
            LinearHead(**payload["support"]),
            LinearHead(**payload["refute"]),
            payload["idf"],
            payload.get("meta"),
            LinearHead(**fast) if fast else None,
        )
        return cls(head, stacker, tuple(payload["calibration"]), payload.get("meta"))


@lru_cache(maxsize=1)
def default_learned_model() -> LearnedModel:
    return LearnedModel.load(ARTIFACT_PATH)


class _Recorder:
    """Wraps ``encode_tokens`` and keeps the piece matrices it returned (the head reads them)."""

    def __init__(self, encode: EncodeTokens) -> None:
        self.encode = encode
        self.tok: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        vecs, toks = self.encode(texts)
        self.tok.update(zip(texts, toks))
        return vecs, toks


class LearnedJudge(Judge):
    name = "learned"

    def __init__(self, model: LearnedModel | None = None) -> None:
        self._model = model

    @property
    def model(self) -> LearnedModel:
        return self._model or default_learned_model()

    @property
    def version(self) -> str:

        model, s = self.model, self.model.stacker
        if getattr(self, "_version", (None,))[0] is not model:  # computed once per model
            heads = [h.as_dict() for h in (s.support, s.refute, s.fast) if h is not None]
            arrays = [getattr(model.head, n) for n in HeadWeights.NAMES]
            self._version = (model, f"{self.name}:{model_digest(heads, list(model.calibration), *arrays)}")
        return self._version[1]

    def _stack(
        self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None
    ) -> tuple[np.ndarray, np.ndarray, list[PreparedPair]]:
        """(the features and head logits of every pair, the prepared pairs), at the context's depth."""
        from audit.pipeline.features import featurize

        model = self.model
        items = [
            (p.claim, p.passages) if p.allowed is None else (p.claim, p.passages, p.allowed) for p in pairs
        ]
        rec = None if ctx.thresholds.verification_depth == "fast" else _Recorder(encode_tokens_fn(ctx))
        X, prepared = featurize(items, rec, model.idf, progress=progress)
        H = np.zeros((len(pairs), 3), np.float32) if rec is None else model.head_logits(prepared, rec.tok)
        return np.concatenate([X, H], axis=1), H, prepared

    def stack_inputs(
        self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None
    ) -> tuple[np.ndarray, list[str]]:
        from audit.pipeline.features import FEATURE_NAMES

        XH, _, _ = self._stack(pairs, ctx, progress)
        depth = ctx.thresholds.verification_depth
        inputs, names, _ = linear_stack(self.model.stacker, XH, depth)
        return inputs, names if depth == "fast" else list(FEATURE_NAMES) + list(HEAD_OUTPUTS)

    def stacker_head(self, depth: str) -> LinearHead | None:
        s = self.model.stacker
        return s.fast if depth == "fast" else s.support

    def judge(
        self,
        pairs: list[JudgePair],
        ctx: Any,
        progress: Progress | None = None,
        head: LinearHead | None = None,
    ) -> list[Judgement]:

        model = self.model
        XH, H, prepared = self._stack(pairs, ctx, progress)
        inputs, _, shipped = linear_stack(model.stacker, XH, ctx.thresholds.verification_depth)
        z = (head or shipped).logit(inputs)
        pref = model.stacker.refute_prob(XH)
        conf = model.calibrated(z)
        return judgements_of(
            prepared, conf, pref, z, [{"head": dict(zip(HEAD_OUTPUTS, map(float, row)))} for row in H]
        )
