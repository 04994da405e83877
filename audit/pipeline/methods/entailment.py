"""Entailment of a claim by its evidence — the core offline judge.

Features from ``audit.pipeline.features`` (embedding similarity to evidence sentences and
windows, content-word/phrase alignment, entity/number/date agreement, negation and antonym
mismatch) go through the fitted model in ``artifacts/entailment_model.json``. The claim is
judged against all its evidence together (``score``/``p_refuted``) and against each of its top
passages alone (``per_hit``: used for the evidence links and the conflict check).
"""

from __future__ import annotations

import numpy as np

from audit.pipeline.entailment_model import confidence_from_logit, default_model
from audit.pipeline.features import FEATURE_NAMES, featurize, prepare
from audit.pipeline.methods.base import VerificationMethod, VerifyContext, register
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult

PER_HIT_LIMIT = 3  # passages judged one by one per claim


def _encode_tokens_fn(ctx: VerifyContext):
    if getattr(ctx, "encode_tokens", None) is not None:
        return ctx.encode_tokens
    from audit.pipeline.embedding import get_embedder

    return get_embedder().encode_with_tokens


@register
class EntailmentMethod(VerificationMethod):
    name = "entailment"
    display_name = "Entailment (offline judge)"

    def __init__(self, model=None):
        self._model = model

    @property
    def model(self):
        return self._model or default_model()

    def verify_many(self, items: list[tuple[ClaimDraft, list[EvidenceHit]]],
                    ctx: VerifyContext) -> list[MethodResult]:
        model = self.model
        threshold = ctx.thresholds.audit_score_threshold
        pairs: list[tuple[str, list[str]]] = []
        slots: list[tuple[int, int | None]] = []  # (item index, hit index or None for joint)
        for i, (claim, hits) in enumerate(items):
            if not hits:
                continue
            texts = [h.passage.text for h in hits]
            pairs.append((claim.text, texts))
            slots.append((i, None))
            if len(hits) > 1:
                joint = prepare(claim.text, texts)
                allowed = {joint.sentences[k] for k in joint.selected}
                for j, hit in enumerate(hits[:PER_HIT_LIMIT]):
                    pairs.append((claim.text, [hit.passage.text], allowed))
                    slots.append((i, j))
        results = [MethodResult(self.name, ran=True, score=0.0, verdict="not_found",
                                details={"reason": "no evidence"}) for _ in items]
        if not pairs:
            return results
        done = [0]

        def tick(n_pairs: int) -> None:  # report claims, not (claim, passage) pairs
            if ctx.progress is None:
                return
            done[0] += n_pairs
            finished = sum(1 for i, _ in slots[: done[0]] if _ is None) - tick.reported
            if finished:
                tick.reported += finished
                ctx.progress(finished)

        tick.reported = 0
        depth = ctx.thresholds.verification_depth
        X, prepared = featurize(pairs, None if depth == "fast" else _encode_tokens_fn(ctx), model.idf,
                                progress=tick)
        z = model.support_logit(X, depth)
        pref = model.refute_prob(X)
        conf = confidence_from_logit(z, threshold)
        for k, (i, j) in enumerate(slots):
            claim, hits = items[i]
            p = prepared[k]
            if j is None:
                res = results[i]
                res.score = float(conf[k])
                res.details = {"logit": float(z[k]), "p_refuted": float(pref[k]),
                               "features": dict(zip(FEATURE_NAMES, map(float, X[k]))), "per_hit": {}}
                res.verdict = ("supported" if conf[k] >= threshold else
                               "contradicted" if pref[k] >= ctx.thresholds.refuted_threshold else "not_found")
                if len(hits) == 1:
                    self._fill_hit(hits[0], conf[k], X[k], p)
            else:
                self._fill_hit(hits[j], conf[k], X[k], p)
                results[i].details["per_hit"][hits[j].passage.id] = {
                    "score": float(conf[k]), "p_refuted": float(pref[k]), "logit": float(z[k])}
        return results

    @staticmethod
    def _fill_hit(hit: EvidenceHit, conf: float, x: np.ndarray, prepared) -> None:
        hit.entailment = float(conf)
        hit.similarity = float(x[FEATURE_NAMES.index("cos_best_sent")])
        if prepared.sentences:
            best = max(range(len(prepared.sentences)),
                       key=lambda i: len(set(prepared.claim_stems) & set(prepared.sent_stems[i])))
            hit.best_sentence = prepared.sentences[best]
