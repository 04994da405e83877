"""The fitted offline entailment model: two logistic regressions over ``features.FEATURE_NAMES``.

- ``support``: P(the evidence supports the claim), fitted on every DEV dataset with balanced
  class weights, so its decision point (logit 0) is the class-balanced operating point;
- ``refute``: among claims that are not supported, P(the evidence contradicts rather than
  merely fails to support), fitted on SciFact (the only DEV set with both REFUTED and NEI).

The artefact is JSON (coefficients, scaler, IDF table), so it loads without pickle and stays
small. Fitting and grouped cross-validation: ``audit/evaluation/entailment_fit.py``.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from audit.pipeline.features import FAST_FEATURES, FEATURE_NAMES

ARTIFACT_PATH = Path(__file__).resolve().parent / "artifacts" / "entailment_model.json"


class LinearHead:
    def __init__(self, mean: ArrayLike, scale: ArrayLike, coef: ArrayLike, intercept: float) -> None:
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = float(intercept)

    def logit(self, X: np.ndarray) -> np.ndarray:
        Z = (np.asarray(X, dtype=np.float64) - self.mean) / self.scale
        return Z @ self.coef + self.intercept

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "coef": self.coef.tolist(),
            "intercept": self.intercept,
        }


class EntailmentModel:
    def __init__(
        self,
        support: LinearHead,
        refute: LinearHead,
        idf: dict[str, float],
        meta: dict[str, Any] | None = None,
        fast: LinearHead | None = None,
    ):
        self.support = support
        self.refute = refute
        self.fast = fast  # support head over FAST_FEATURES only ("fast" verification depth)
        self.idf = idf
        self.meta = meta or {}
        self.fast_columns = [FEATURE_NAMES.index(n) for n in FAST_FEATURES]

    def support_logit(self, X: np.ndarray, depth: str = "full") -> np.ndarray:
        if depth == "fast":
            if self.fast is None:
                raise RuntimeError("this entailment model has no fast head; refit it")
            return self.fast.logit(np.asarray(X)[:, self.fast_columns])
        return self.support.logit(X)

    def refute_prob(self, X: np.ndarray) -> np.ndarray:
        prob: np.ndarray = 1.0 / (1.0 + np.exp(-self.refute.logit(X)))
        return prob

    def save(self, path: Path = ARTIFACT_PATH) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "features": FEATURE_NAMES,
            "support": self.support.as_dict(),
            "refute": self.refute.as_dict(),
            "idf": self.idf,
            "meta": self.meta,
            "fast_features": FAST_FEATURES,
            "fast": self.fast.as_dict() if self.fast else None,
        }
        path.write_text(json.dumps(payload, separators=(",", ":"), sort_keys=True))

    @classmethod
    def load(cls, path: Path = ARTIFACT_PATH) -> "EntailmentModel":
        payload = json.loads(Path(path).read_text())
        if payload["features"] != FEATURE_NAMES:
            raise RuntimeError(
                f"{path} was fitted on other features; refit with `python manage.py fit_entailment`"
            )
        fast = payload.get("fast")
        if fast is not None and payload.get("fast_features") != FAST_FEATURES:
            raise RuntimeError(f"{path}: the fast head was fitted on other features; refit it")
        return cls(
            LinearHead(**payload["support"]),
            LinearHead(**payload["refute"]),
            payload["idf"],
            payload.get("meta"),
            LinearHead(**fast) if fast else None,
        )


@lru_cache(maxsize=1)
def default_model() -> EntailmentModel:
    return EntailmentModel.load(ARTIFACT_PATH)


def confidence_from_logit(z: np.ndarray | float, threshold: float) -> np.ndarray:
    """Map the balanced support logit to P(supported) so that logit 0 lands on ``threshold``.

    The balanced model's logit is the evidence for support with even prior odds; adding the
    prior log-odds logit(threshold) gives the posterior under a prior in which SUPPORTED needs
    ``threshold`` confidence — so "confidence >= audit_score_threshold" is exactly the
    class-balanced decision and a workspace that raises the threshold asks for more evidence.
    """
    t = min(max(threshold, 1e-6), 1 - 1e-6)
    return 1.0 / (1.0 + np.exp(-(np.asarray(z, dtype=np.float64) + math.log(t / (1 - t)))))
