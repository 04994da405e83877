"""The judge interface every entailment judge implements, and the helpers the feature-based judges
share (``judges.py`` builds the judges by name; ``learned_judge.py`` and ``nli_judge.py`` import
only this module, so no judge module imports the factory that imports it)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from audit.pipeline.embedding import get_embedder
from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES

Progress = Callable[[int], None]  # told as batches of n pairs are done


@dataclass
class JudgePair:
    claim: str
    passages: list[str]
    # sentences the joint judgement of the same claim already read: a per-passage pair may reuse
    # them (the feature judges embed nothing new); a hint, judges may ignore it
    allowed: set[str] | None = None


@dataclass
class Judgement:
    p_supported: float  # P(the evidence supports the claim), calibrated to the workspace threshold
    p_refuted: float  # P(the evidence contradicts the claim | it does not support it)
    sentence: str = ""  # the evidence sentence (or window) the claim was aligned with
    logit: float | None = None  # the judge's support logit where it has one (0 = class-balanced point)
    # judge-specific (features, the judge that decided…)
    details: dict[str, Any] = field(default_factory=dict)


class Judge:
    """Base class: ``judge(pairs, ctx, progress)`` returns one ``Judgement`` per pair, in order.

    ``progress(n)`` is told as batches of n pairs are done. ``ctx`` is the ``VerifyContext`` (its
    thresholds, ``encode_tokens`` cache, ``llm`` client). ``version`` names the fitted artefact, so a
    claim card and a workspace calibration can say which judge produced a label.

    The linear-stacker hook (optional; ``audit.pipeline.calibration`` refits a workspace's stacker
    through it): a judge whose support logit is a ``LinearHead`` over rows of inputs implements
    ``stack_inputs(pairs, ctx) -> (X, names)`` (the rows its head reads for these pairs, at the
    context's depth) and ``stacker_head(depth)`` (that head), and its ``judge`` accepts ``head=``:
    a replacement head over the same inputs, whose logit then becomes ``Judgement.logit``. A judge
    without a stacker leaves ``stacker_head`` returning None; its calibration refits only the
    threshold and the Platt scaling of ``Judgement.logit``.
    """

    name = ""

    def judge(self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None) -> list[Judgement]:
        raise NotImplementedError

    @property
    def version(self) -> str:
        return self.name

    def stack_inputs(
        self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None
    ) -> tuple[np.ndarray, list[str]]:
        raise NotImplementedError(f"the {self.name} judge has no linear stacker")

    def stacker_head(self, depth: str) -> Any:
        return None


def model_digest(*parts: Any) -> str:
    """A short, stable digest of a fitted model's parameters (arrays, dicts, numbers): its version."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
        else:
            h.update(json.dumps(part, sort_keys=True, default=float).encode())
    return h.hexdigest()[:12]


def linear_stack(model: Any, X: np.ndarray, depth: str) -> tuple[np.ndarray, list[str], Any]:
    """(the inputs, their names, the head) of an ``EntailmentModel``'s support logit at ``depth``
    over full feature rows ``X`` (the features, plus any columns a stacker appends)."""
    if depth == "fast":
        if model.fast is None:
            raise RuntimeError("this entailment model has no fast head; refit it")
        return np.asarray(X)[:, model.fast_columns], list(FAST_FEATURES), model.fast
    extra = [f"input_{i}" for i in range(len(FEATURE_NAMES), np.asarray(X).shape[1])]
    return np.asarray(X), list(FEATURE_NAMES) + extra, model.support


def best_aligned_sentence(claim_stems: list[str], sentences: list[str], sent_stems: list[list[str]]) -> str:
    """The evidence sentence sharing most content words with the claim (first among equals)."""
    if not sentences:
        return ""
    cset = set(claim_stems)
    best = max(range(len(sentences)), key=lambda i: (len(cset & set(sent_stems[i])), -i))
    return sentences[best]


def judgements_of(
    prepared: Sequence[Any],
    conf: Sequence[float] | np.ndarray,
    pref: Sequence[float] | np.ndarray,
    z: Sequence[float] | np.ndarray,
    details: list[dict[str, Any]],
) -> list[Judgement]:
    """One ``Judgement`` per prepared pair of a feature-based judge: its confidence, refute probability and
    support logit, the best lexically aligned evidence sentence, and the judge's own details."""
    return [
        Judgement(
            float(conf[k]),
            float(pref[k]),
            best_aligned_sentence(p.claim_stems, p.sentences, p.sent_stems),
            float(z[k]),
            details[k],
        )
        for k, p in enumerate(prepared)
    ]


def encode_tokens_fn(ctx: Any) -> Callable[..., Any]:
    """The context's way to encode texts with their word pieces: the one it was given, else the
    process embedder reading first what ingestion stored (``ctx.encodings``)."""
    given: Callable[..., Any] | None = getattr(ctx, "encode_tokens", None)
    if given is not None:
        return given
    store = getattr(ctx, "encodings", None)
    if store is not None:
        return partial(get_embedder().encode_with_tokens, store=store)
    return get_embedder().encode_with_tokens
