"""Entailment of a claim by its evidence — the core offline judge, through ``audit.pipeline.judges``.

The workspace's judge (``Thresholds.judge``: the fitted feature model by default, the learned
judge, a local cross-encoder or the LLM judge) scores the claim against all its evidence together
(``score``/``p_refuted``) and against each of its top passages alone (``per_hit``: used for the
evidence links, citations and the conflict check). The same judge does both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from audit.pipeline.calibration import Calibration, calibrated_judge
from audit.pipeline.judges import Judge, Judgement, JudgePair, get_judge
from audit.pipeline.methods.base import ROLE_SUPPORT, VerificationMethod, VerifyContext, register
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult

if TYPE_CHECKING:
    from audit.pipeline.entailment_model import EntailmentModel

PER_HIT_LIMIT = 3  # passages judged one by one per claim


@register
class EntailmentMethod(VerificationMethod):
    name = "entailment"
    label_role = ROLE_SUPPORT
    display_name = "Entailment (offline judge)"

    def __init__(self, model: EntailmentModel | None = None, judge: Judge | None = None) -> None:
        """``judge`` replaces the workspace's judge; ``model`` is a feature model for the features judge
        (a cross-validation fold's model)."""
        if model is not None and judge is None:
            judge = get_judge("features", model=model)
        self._judge = judge

    def judge_for(self, ctx: VerifyContext) -> Judge:
        """The judge given, else the workspace's, under the workspace's calibration where it applies
        (``audit.pipeline.calibration``: the confidence the claim gets is the calibrated one)."""
        if self._judge is not None:
            return self._judge
        judge = get_judge(ctx.thresholds.judge)
        # Thresholds.calibration is typed object (the constants import no pipeline code): it holds a
        # Calibration or None
        calibration = cast("Calibration | None", ctx.thresholds.calibration)
        return calibrated_judge(judge, calibration, ctx.thresholds.verification_depth)

    def verify_many(
        self, items: list[tuple[ClaimDraft, list[EvidenceHit]]], ctx: VerifyContext
    ) -> list[MethodResult]:
        from audit.pipeline.features import prepare

        judge = self.judge_for(ctx)
        threshold = ctx.thresholds.audit_score_threshold
        pairs: list[JudgePair] = []
        slots: list[tuple[int, int | None]] = []  # (item index, hit index or None for joint)
        for i, (claim, hits) in enumerate(items):
            if not hits:
                continue
            texts = [h.passage.text for h in hits]
            pairs.append(JudgePair(claim.text, texts))
            slots.append((i, None))
            if len(hits) > 1:
                joint = prepare(claim.text, texts)
                allowed = {joint.sentences[k] for k in joint.selected}
                for h, hit in enumerate(hits[:PER_HIT_LIMIT]):
                    pairs.append(JudgePair(claim.text, [hit.passage.text], allowed))
                    slots.append((i, h))
        results = [
            MethodResult(
                self.name, ran=True, score=0.0, verdict="not_found", details={"reason": "no evidence"}
            )
            for _ in items
        ]
        if not pairs:
            return results
        done, reported = [0], [0]
        # VerifyContext.progress is typed object: it holds a callable(n) or None
        progress = cast("Callable[[int], object] | None", ctx.progress)

        def tick(n_pairs: int) -> None:  # report claims, not (claim, passage) pairs
            if progress is None:
                return
            done[0] += n_pairs
            finished = sum(1 for i, _ in slots[: done[0]] if _ is None) - reported[0]
            if finished:
                reported[0] += finished
                progress(finished)

        judgements = judge.judge(pairs, ctx, progress=tick)
        for (i, j), jd in zip(slots, judgements):
            claim, hits = items[i]
            if j is None:
                res = results[i]
                res.score = jd.p_supported
                res.details = {
                    "judge": judge.name,
                    "judge_version": judge.version,
                    "calibration": None,  # the version that rescaled the confidence (below), if one did
                    "threshold": threshold,
                    "logit": jd.logit,
                    "p_refuted": jd.p_refuted,
                    "sentence": jd.sentence[:300],
                    **jd.details,
                    "per_hit": {},
                }
                res.verdict = (
                    "supported"
                    if jd.p_supported >= threshold
                    else "contradicted"
                    if jd.p_refuted >= ctx.thresholds.refuted_threshold
                    else "not_found"
                )
                if len(hits) == 1:
                    self._fill_hit(hits[0], jd)
            else:
                self._fill_hit(hits[j], jd)
                results[i].details["per_hit"][hits[j].passage.id] = {
                    "score": jd.p_supported,
                    "p_refuted": jd.p_refuted,
                    "logit": jd.logit,
                }
        return results

    @staticmethod
    def _fill_hit(hit: EvidenceHit, jd: Judgement) -> None:
        hit.entailment = float(jd.p_supported)
        feats = jd.details.get("features") or {}
        if "cos_best_sent" in feats:
            hit.similarity = float(feats["cos_best_sent"])
        hit.best_sentence = jd.sentence
