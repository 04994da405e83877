"""The NLI judge's cascade: the cheap signals settle the claims they are sure of, the reader reads the rest.

The features the NLI judge computes first (``features.featurize``) are what the ``features`` judge
reads; its support head (``entailment_model.json``) gives a logit at no extra cost, and Platt scaling
fitted on DEV out-of-fold logits turns it into a calibrated P(supported). A pair whose cheap P is at or
below ``settle_below`` or at or above ``settle_above`` is settled there: the cross-encoder does not read
it, and its P(supported) is the cheap one. Only the low side is shipped
(``constants.CASCADE_SETTLES_SUPPORTED``: a minimal edit looks like a copy to the features, so the
reader must see every claim that might pass as SUPPORTED). The cuts are chosen on DEV grouped-CV predictions so
that the claims each side settles are at least ``constants.CASCADE_MIN_SETTLED_ACCURACY`` right
(``audit/evaluation/cascade_fit.py``, ``manage.py evaluate --fit-cascade``), and are stored in
``constants.CASCADE_FILE`` beside the judge's artefact with their DEV figures. Without that file, or at
the fast depth (whose head the cuts were not chosen for), or under a workspace's refitted stacker, every
pair is read.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from audit.constants import CASCADE_FILE
from audit.pipeline.nli_model import ARTIFACT_DIR

CASCADE_PATH = ARTIFACT_DIR / CASCADE_FILE
STAGE_CHEAP = "features"  # ``details["stage"]`` of a pair the cheap signals settled
STAGE_READER = "reader"  # ... and of a pair the cross-encoder read


class Cascade:
    def __init__(self, payload: dict[str, Any]):
        self.a, self.b = (float(v) for v in payload["platt"])
        self.settle_below = float(payload["settle_below"])
        self.settle_above = float(payload["settle_above"])
        self.figures: dict[str, Any] = dict(payload.get("dev") or {})
        self.command = str(payload.get("command") or "")

    @classmethod
    def load(cls, path: Path = CASCADE_PATH) -> Cascade | None:
        if not Path(path).is_file():
            return None
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def probability(self, logit: np.ndarray) -> np.ndarray:
        """The calibrated P(supported) of the features head's support logits."""
        z = np.clip(self.a * np.asarray(logit, dtype=np.float64) + self.b, -40.0, 40.0)
        return np.asarray(1.0 / (1.0 + np.exp(-z)))

    def settled(self, p: np.ndarray) -> np.ndarray:
        """Which pairs the cheap P settles (sure either way)."""
        p = np.asarray(p)
        return np.asarray((p <= self.settle_below) | (p >= self.settle_above))


@lru_cache(maxsize=1)
def shipped_cascade() -> Cascade | None:
    return Cascade.load()
