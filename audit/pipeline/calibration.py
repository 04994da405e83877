"""A workspace's calibration of its entailment judge, learned from its reviewers (plain Python).

A ``Calibration`` holds what ``manage.py calibrate`` refitted on the workspace's reviewed examples
(``audit/pipeline/calibration_fit.py``):

- ``threshold``: the confidence SUPPORTED needs; ``audit.selectors.api.thresholds_for`` makes it the
  workspace's ``audit_score_threshold`` in force while the calibration fits the workspace's judge;
- ``a``, ``b``: Platt scaling of the judge's support logit, P(supported) = sigmoid(a * logit + b),
  so the claim's confidence is the share of such claims the workspace's reviewers found SUPPORTED;
- ``stacker`` (optional): a replacement for the judge's linear support head (the judge's
  ``stacker_head``), refitted on the same inputs (``stack_inputs``) and pulled toward the shipped
  weights; its logit is the one the Platt scaling reads.

It is fitted for one judge (name and ``Judge.version``) at one verification depth.
``CalibratedJudge`` applies it where the judge's confidence becomes the claim's confidence (the
entailment method): at another depth, or for another judge, the judge's own confidence stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from audit.pipeline.judge_base import Progress
from audit.pipeline.judges import Judge, Judgement, JudgePair

if TYPE_CHECKING:
    from audit.pipeline.entailment_model import LinearHead


@dataclass(frozen=True)
class Calibration:
    version: int
    judge: str  # the judge it was fitted for (``Judge.name``) ...
    judge_version: str  # ... and its fitted artefact (``Judge.version``)
    depth: str  # the verification depth whose logit it was fitted on
    threshold: float  # the confidence SUPPORTED needs while it is in force
    a: float = 1.0
    b: float = 0.0
    stacker: dict[str, Any] | None = field(default=None)  # {"mean", "scale", "coef", "intercept", "names"}

    @overload
    def confidence(self, logit: float) -> float: ...

    @overload
    def confidence(self, logit: np.ndarray) -> np.ndarray: ...

    def confidence(self, logit: float | np.ndarray) -> float | np.ndarray:
        """Calibrated P(supported) of a support logit (a float or an array)."""
        z = np.asarray(logit, dtype=np.float64)
        out = 1.0 / (1.0 + np.exp(-np.clip(self.a * z + self.b, -40.0, 40.0)))
        return float(out) if out.ndim == 0 else out

    def head(self) -> LinearHead | None:
        """The replacement support head (an ``entailment_model.LinearHead``), or None."""
        if not self.stacker:
            return None
        from audit.pipeline.entailment_model import LinearHead

        s = self.stacker
        return LinearHead(s["mean"], s["scale"], s["coef"], s["intercept"])

    def fits(self, judge: Judge) -> bool:
        """True when it was fitted for this judge and artefact."""
        return judge.name == self.judge and judge.version == self.judge_version

    def applies(self, judge: Judge, depth: str) -> bool:
        """True when it rescales this judge's confidences at ``depth``."""
        if not (self.fits(judge) and depth == self.depth):
            return False
        return self.stacker is None or judge.stacker_head(depth) is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "judge": self.judge,
            "judge_version": self.judge_version,
            "depth": self.depth,
            "threshold": self.threshold,
            "a": self.a,
            "b": self.b,
            "stacker": self.stacker,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Calibration | None:
        """The calibration stored as ``data`` (None for none or a malformed one: it is then not applied)."""
        if not isinstance(data, dict) or not data:
            return None
        try:
            calibration = cls(
                version=int(data["version"]),
                judge=str(data["judge"]),
                judge_version=str(data["judge_version"]),
                depth=str(data["depth"]),
                threshold=float(data["threshold"]),
                a=float(data.get("a", 1.0)),
                b=float(data.get("b", 0.0)),
                stacker=data.get("stacker") or None,
            )
        except (KeyError, TypeError, ValueError):
            return None
        numbers = (calibration.threshold, calibration.a, calibration.b)
        if not all(math.isfinite(x) for x in numbers) or not 0.0 < calibration.threshold < 1.0:
            return None
        return calibration


class CalibratedJudge(Judge):
    """A judge whose support logits go through a workspace's calibration.

    The inner judge runs with the calibration's stacker head (when it has one), and every judgement
    with a logit gets P(supported) = sigmoid(a * logit + b); ``details["calibration"]`` names the
    version. Judgements without a logit (an LLM verdict) keep their confidence.
    """

    def __init__(self, inner: Judge, calibration: Calibration) -> None:
        self.inner = inner
        self.calibration = calibration
        self.name = inner.name

    @property
    def version(self) -> str:
        return self.inner.version

    def stack_inputs(
        self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None
    ) -> tuple[np.ndarray, list[str]]:
        return self.inner.stack_inputs(pairs, ctx, progress)

    def stacker_head(self, depth: str) -> Any:
        return self.inner.stacker_head(depth)

    def judge(self, pairs: list[JudgePair], ctx: Any, progress: Progress | None = None) -> list[Judgement]:
        cal = self.calibration
        head = cal.head()
        out = (
            # applies() saw a stacker head, so the inner judge is one whose judge() accepts head=
            self.inner.judge(pairs, ctx, progress, head=head)  # type: ignore[call-arg]
            if head is not None
            else self.inner.judge(pairs, ctx, progress)
        )
        for j in out:
            if j.logit is not None:
                j.p_supported = cal.confidence(j.logit)
                j.details["calibration"] = cal.version
        return out


def calibrated_judge(judge: Judge, calibration: Calibration | None, depth: str) -> Judge:
    """``judge`` under ``calibration`` where it applies at ``depth``; else ``judge`` itself."""
    if calibration is None or not calibration.applies(judge, depth):
        return judge
    return CalibratedJudge(judge, calibration)
