"""The judge's operating points (strictness): named cuts on its calibrated P(supported), with their DEV figures.

``manage.py evaluate --operating-points`` computes them from grouped-CV out-of-fold predictions on DEV
(``audit/evaluation/catch_rate.py``) and writes ``constants.OPERATING_POINTS_FILE`` beside the judge's
artefact; nothing here runs a model. Each point holds its cut, its macro DEV catch rate (with the 95 %
interval resampled over answers), false-alarm rate, 2-class bAcc and review load (the share of claims
not labelled SUPPORTED, which a person sees).

A workspace chooses a point with the threshold ``strictness``; in its regulated domains the default is
``STRICTNESS_REGULATED``. The NLI judge applies the cut where it already maps its decision point onto the
workspace's ``audit_score_threshold`` (``NLIStacker.audit_score``): the cut lands on that threshold, so
"confidence >= audit_score_threshold" means "P(supported) >= the cut". The points apply to the judge they
were computed for (another judge keeps its own cut); their DEV figures belong to the artefact version
named in the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from audit.constants import OPERATING_POINTS_FILE, STRICTNESS_DEFAULT, STRICTNESS_REGULATED, is_regulated
from audit.pipeline.judge_base import Judge
from audit.pipeline.nli_model import ARTIFACT_DIR

OPERATING_POINTS_PATH = ARTIFACT_DIR / OPERATING_POINTS_FILE


class OperatingPoints:
    """The points of one judge version, read from the JSON that ``evaluate --operating-points`` writes."""

    def __init__(self, payload: dict[str, Any]):
        self.judge = str(payload.get("judge") or "")
        self.judge_version = str(payload.get("judge_version") or "")
        self.command = str(payload.get("command") or "")
        self.computed = str(payload.get("computed") or "")
        self.points: dict[str, dict[str, Any]] = dict(payload.get("points") or {})

    @classmethod
    def load(cls, path: Path = OPERATING_POINTS_PATH) -> OperatingPoints | None:
        if not Path(path).is_file():
            return None
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def cut(self, strictness: str, judge: Judge) -> float | None:
        """The P(supported) cut of ``strictness`` for ``judge`` (None: the judge's own cut stands). A cut on
        a calibrated probability means the same for any calibrated version of the judge (a fold's stacker,
        a refit); only the DEV figures beside it belong to ``judge_version`` (``current``)."""
        point = self.points.get(resolve_strictness(strictness))
        if point is None or judge.name != self.judge:
            return None
        return float(point["cut"])

    def current(self, judge: Judge) -> bool:
        """Whether the figures were computed for this judge's artefact."""
        return bool(judge.name == self.judge and judge.version == self.judge_version)


@lru_cache(maxsize=1)
def shipped_operating_points() -> OperatingPoints | None:
    return OperatingPoints.load()


def resolve_strictness(strictness: str | None) -> str:
    """The named point a (possibly empty) strictness setting means."""
    return strictness or STRICTNESS_DEFAULT


def strictness_for_domain(
    strictness: str | None, domain: str | None, regulated_domains: Iterable[str] | None
) -> str:
    """The point in force for an audit in ``domain``: the workspace's choice, else the regulated point in
    its regulated domains (``constants.is_regulated``), else the default."""
    if strictness:
        return strictness
    return STRICTNESS_REGULATED if is_regulated(domain, regulated_domains) else STRICTNESS_DEFAULT
