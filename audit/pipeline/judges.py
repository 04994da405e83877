"""One judge interface for entailment: (claim, evidence passages) pairs in, a ``Judgement`` out.

A ``Judgement`` holds P(supported), P(refuted | not supported) and the evidence sentence the
judge aligned the claim with. The entailment method (``methods/entailment.py``) asks the judge a
workspace selects (``Thresholds.judge``, one of ``constants.JUDGES``) and turns the judgements into
the claim's score and the per-passage scores; the numeric and structural checks stay overrides in
``scoring.label_claim`` whatever the judge.

Judges:
- ``features``: the fitted feature model (``entailment_model.json``: logistic heads over
  ``features.FEATURE_NAMES``);
- ``learned``: frozen MiniLM word-piece states aligned by a small trained cross-attention head,
  stacked with the features (``learned_judge.py``; artefact ``learned_judge.npz``);
- ``nli``: the project's own NLI cross-encoder (MiniLM fine-tuned on public entailment data) reads the
  claim against its best evidence sentences and windows, stacked with the features and calibrated
  (``nli_judge.py``; artefacts ``artifacts/nli/``);
- ``cross-encoder``: a local sentence-transformers ``CrossEncoder`` (an NLI model or a one-logit
  relevance model) that the deployment points to by path (``THEORIA_CROSS_ENCODER_PATH``); offline;
- ``llm``: the default offline judge with the isolated LLM judge (``llm/judge.py``) weighed in
  (``llm/combine.py``); where no LLM can answer, the offline judgement stands and says so.
"""

from __future__ import annotations

import math
import threading
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from audit.constants import CROSS_ENCODER_PATH, CROSS_ENCODER_WINDOWS, JUDGE, JUDGES
from audit.pipeline.judge_base import (
    Judge,
    Judgement,
    JudgePair,
    Progress,
    best_aligned_sentence,
    encode_tokens_fn,
    judgements_of,
    linear_stack,
    model_digest,
)
from audit.pipeline.learned_judge import LearnedJudge
from audit.pipeline.nli_judge import NLIJudge

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

    from audit.pipeline.entailment_model import EntailmentModel, LinearHead
    from audit.pipeline.features import PreparedPair

__all__ = [
    "Judge",
    "JudgePair",
    "Judgement",
    "best_aligned_sentence",
    "encode_tokens_fn",
    "get_judge",
    "judgements_of",
    "linear_stack",
    "model_digest",
]


class FeatureJudge(Judge):
    """The fitted feature model (logistic heads over ``features.FEATURE_NAMES``)."""

    name = "features"

    def __init__(self, model: EntailmentModel | None = None) -> None:
        self._model = model

    @property
    def model(self) -> EntailmentModel:
        from audit.pipeline.entailment_model import default_model

        return self._model or default_model()

    def featurize(
        self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None
    ) -> tuple[np.ndarray, list[PreparedPair]]:
        from audit.pipeline.features import featurize

        depth = ctx.thresholds.verification_depth
        items = [
            (p.claim, p.passages) if p.allowed is None else (p.claim, p.passages, p.allowed) for p in pairs
        ]
        return featurize(
            items, None if depth == "fast" else encode_tokens_fn(ctx), self.model.idf, progress=progress
        )

    @property
    def version(self) -> str:
        model = self.model
        if getattr(self, "_version", (None,))[0] is not model:  # computed once per model
            heads = [h.as_dict() for h in (model.support, model.refute, model.fast) if h is not None]
            self._version = (model, f"{self.name}:{model_digest(heads)}")
        return self._version[1]

    def stack_inputs(
        self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None
    ) -> tuple[np.ndarray, list[str]]:
        X, _ = self.featurize(pairs, ctx, progress)
        inputs, names, _ = linear_stack(self.model, X, ctx.thresholds.verification_depth)
        return inputs, names

    def stacker_head(self, depth: str) -> LinearHead | None:
        return self.model.fast if depth == "fast" else self.model.support

    def judge(
        self,
        pairs: list[JudgePair],
        ctx: Any,
        progress: Progress | None = None,
        head: LinearHead | None = None,
    ) -> list[Judgement]:
        from audit.pipeline.entailment_model import confidence_from_logit
        from audit.pipeline.features import FEATURE_NAMES

        X, prepared = self.featurize(pairs, ctx, progress)
        model = self.model
        inputs, _, shipped = linear_stack(model, X, ctx.thresholds.verification_depth)
        z = (head or shipped).logit(inputs)
        pref = model.refute_prob(X)
        conf = confidence_from_logit(z, ctx.thresholds.audit_score_threshold)
        return judgements_of(
            prepared, conf, pref, z, [{"features": dict(zip(FEATURE_NAMES, map(float, row)))} for row in X]
        )


class CrossEncoderJudge(Judge):
    """A local sentence-transformers ``CrossEncoder`` read from ``path`` (never downloaded).

    The claim is scored against its ``CROSS_ENCODER_WINDOWS`` best lexically aligned evidence
    sentences and 2-sentence windows (premise = evidence, hypothesis = claim). A 3-label NLI model
    gives P(entailment) and P(contradiction) through its ``id2label``; a one-logit model gives
    P(supported) = sigmoid(logit) and no refutation. The best window decides.
    """

    name = "cross-encoder"

    def __init__(self, path: str | None = None) -> None:
        self.path = path if path is not None else CROSS_ENCODER_PATH
        self._model: CrossEncoder | None = None
        self._lock = threading.Lock()

    @property
    def version(self) -> str:
        from pathlib import Path

        return f"{self.name}:{Path(self.path).name or 'unset'}"

    @property
    def model(self) -> CrossEncoder:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = load_cross_encoder(self.path)
        return self._model

    def label_index(self) -> tuple[int | None, int | None]:
        """(entailment index, contradiction index) from the model's labels; (None, None) for one logit."""
        # the stubs type the wrapped transformers model as optional and its labels loosely: a loaded
        # CrossEncoder always has one, with a config
        wrapped: Any = self.model.model
        config = wrapped.config
        if getattr(config, "num_labels", 1) == 1:
            return None, None
        names = {int(i): str(n).lower() for i, n in config.id2label.items()}
        ent = next(
            (i for i, n in names.items() if n.startswith("entail") or n in ("supported", "support")), None
        )
        con = next(
            (i for i, n in names.items() if n.startswith("contradict") or n in ("refuted", "refute")), None
        )
        if ent is None:
            raise RuntimeError(
                f"cross-encoder at {self.path}: no entailment label among {sorted(names.values())}"
            )
        return ent, con

    def judge(self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None) -> list[Judgement]:
        from audit.pipeline.features import prepare

        ent, con = self.label_index()
        prepared = [prepare(p.claim, p.passages) for p in pairs]
        rows, owner = [], []
        for k, p in enumerate(prepared):
            order = sorted(p.selected, key=lambda i: -len(set(p.claim_stems) & set(p.sent_stems[i])))
            windows = [p.sentences[i] for i in order[:CROSS_ENCODER_WINDOWS]]
            windows += [p.sentences[a] + " " + p.sentences[b] for a, b in p.windows[:CROSS_ENCODER_WINDOWS]]
            for w in dict.fromkeys(windows):
                rows.append((w, p.claim))
                owner.append(k)
        out = [Judgement(0.0, 0.0, "", None, {"windows": 0}) for _ in pairs]
        if rows:
            scores = np.asarray(self.model.predict(rows, show_progress_bar=False), dtype=np.float64)
            if ent is None:
                p_ent = 1.0 / (1.0 + np.exp(-scores.reshape(-1)))
                p_con = np.zeros_like(p_ent)
            else:
                e = np.exp(scores - scores.max(axis=1, keepdims=True))
                probs = e / e.sum(axis=1, keepdims=True)
                p_ent = probs[:, ent]
                p_con = probs[:, con] if con is not None else np.zeros_like(p_ent)
            for r, k in enumerate(owner):
                j = out[k]
                j.details["windows"] += 1
                if p_ent[r] > j.p_supported or not j.sentence:
                    j.p_supported, j.sentence = float(p_ent[r]), rows[r][0]
                    j.p_refuted = float(min(1.0, p_con[r] / max(1e-9, 1.0 - p_ent[r])))
                    j.logit = float(math.log(max(p_ent[r], 1e-9) / max(1 - p_ent[r], 1e-9)))
        if progress:
            progress(len(pairs))
        return out


@lru_cache(maxsize=4)
def load_cross_encoder(path: str) -> CrossEncoder:
    from pathlib import Path

    if not path:
        raise RuntimeError(
            "no cross-encoder configured: set THEORIA_CROSS_ENCODER_PATH to a local model folder"
        )
    if not Path(path).is_dir():
        raise RuntimeError(f"cross-encoder path {path} is not a folder")
    from sentence_transformers import CrossEncoder

    encoder: CrossEncoder = CrossEncoder(path, device="cpu", local_files_only=True)
    return encoder


class LLMJudge(Judge):
    """The offline judge with the isolated LLM judge (``audit.pipeline.llm.judge``) weighed in.

    The LLM is one signal, not the verdict (docs/LLM.md#weighing-the-llm-judge): every pair is
    judged by the offline ``fallback`` (default: the default offline judge, ``constants.JUDGE``), the
    joint pair of each claim also by the LLM (once: the per-passage pairs are the offline judge's
    alone), and the two are weighed by ``llm.combine.weigh``. ``details["decided_by"]`` says which
    judges decided, ``details["llm_verdict"]`` the LLM's verdict, ``details["llm_disagreement"]``
    a disagreement with a confident offline verdict (the offline figures stand, the claim goes to
    review); where no LLM answers, the offline judgement stands and ``llm_not_run`` says why.
    """

    name = "llm"

    def __init__(self, fallback: Judge | None = None) -> None:
        self._fallback = fallback

    @property
    def version(self) -> str:
        return f"{self.fallback.version}+{self.name}"

    @property
    def fallback(self) -> Judge:
        if self._fallback is None:
            self._fallback = get_judge(JUDGE if self.name != JUDGE else "nli")
        return self._fallback

    def judge(self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None) -> list[Judgement]:
        from audit.pipeline.llm.combine import DISAGREEMENT_FLAG, weigh, weighing_of
        from audit.pipeline.llm.judge import judge_claims

        out = self.fallback.judge(pairs, ctx)
        client = getattr(ctx, "llm", None)
        joint = [k for k, p in enumerate(pairs) if p.allowed is None]
        thresholds = ctx.thresholds  # the job's (``verify_context`` always sets them)
        results = judge_claims(
            client,
            [(pairs[k].claim, pairs[k].passages) for k in joint],
            threshold=thresholds.audit_score_threshold,
        )
        for k, res in zip(joint, results):
            j = out[k]
            if not res.ran:
                j.details.update(
                    {"decided_by": self.fallback.name, "llm_not_run": res.details.get("reason", "")}
                )
                continue
            llm_score = res.score
            assert llm_score is not None  # a claim the LLM judged has its score
            weighed = weigh(
                j.p_supported,
                j.p_refuted,
                float(llm_score),
                res.details.get("p_refuted", 0.0),
                threshold=thresholds.audit_score_threshold,
                refuted_threshold=thresholds.refuted_threshold,
                **weighing_of(res.details),
            )
            before = (j.p_supported, j.p_refuted)
            j.p_supported, j.p_refuted = weighed.confidence, weighed.p_refuted
            j.details.update(
                {
                    "offline_p_supported": before[0],
                    "offline_p_refuted": before[1],
                    "decided_by": f"{self.fallback.name}+{self.name}",
                    "llm_verdict": res.details.get("judge_verdict") or res.details.get("fever_label"),
                    "llm_score": float(llm_score),
                    "llm_p_refuted": res.details.get("p_refuted"),
                    "llm_weight": res.details.get("weight"),
                    DISAGREEMENT_FLAG: weighed.disagreement,
                }
            )
        if progress:
            progress(len(pairs))
        return out


def get_judge(name: str | None = None, **kwargs: Any) -> Judge:
    """The judge called ``name`` (default ``constants.JUDGE``); ValueError for an unknown name."""
    name = name or JUDGE
    if name not in JUDGES:
        raise ValueError(f"unknown judge {name!r}; use one of {', '.join(JUDGES)}")
    if not kwargs:
        return _shared_judge(name)
    return _make(name, **kwargs)


def _make(name: str, **kwargs: Any) -> Judge:
    if name == "features":
        return FeatureJudge(**kwargs)
    if name == "learned":
        return LearnedJudge(**kwargs)
    if name == "nli":
        return NLIJudge(**kwargs)
    if name == "cross-encoder":
        return CrossEncoderJudge(**kwargs)
    return LLMJudge(**kwargs)


@lru_cache(maxsize=None)
def _shared_judge(name: str) -> Judge:
    return _make(name)
