"""The judge's operating points (strictness): named cuts on its calibrated P(supported), with their DEV figures.

``manage.py evaluate --operating-points`` computes them from grouped-CV out-of-fold predictions on DEV
(``audit/evaluation/catch_rate.py``) and writes ``constants.OPERATING_POINTS_FILE`` beside the judge's
artefact; nothing here runs a model. Each point holds its cut, its macro DEV catch rate (with the 95 %
interval resampled over answers), false-alarm rate, 2-class bAcc and review load (the share of claims
not labelled SUPPORTED, which a person sees).

The fast depth's support head is another model (words-only features beside a narrower reading), so
the same cut catches another share there. ``fit_nli --fast-head --fast-points`` computes the fast
depth's own points the same way, from its head's out-of-fold P(supported) under the fast reading, and
writes them under ``"fast"`` in the same file; where they are absent the fast depth uses the full
depth's cuts, as it did before.

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
        fast = dict(payload.get("fast") or {})
        self.fast_points: dict[str, dict[str, Any]] = dict(fast.get("points") or {})
        self.fast_command = str(fast.get("command") or "")
        self.fast_judge_version = str(fast.get("judge_version") or "")

    @classmethod
    def load(cls, path: Path = OPERATING_POINTS_PATH) -> OperatingPoints | None:
        if not Path(path).is_file():
            return None
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    def at_depth(self, depth: str = "full") -> tuple[dict[str, dict[str, Any]], str, str]:
        """(the points, the command that computed them, the judge version they were computed for) that
        hold at ``depth``: the fast depth's own where the file has them, else the full depth's."""
        if depth == "fast" and self.fast_points:
            return self.fast_points, self.fast_command, self.fast_judge_version
        return self.points, self.command, self.judge_version

    def cut(self, strictness: str, judge: Judge, depth: str = "full") -> float | None:
        """The P(supported) cut of ``strictness`` for ``judge`` at ``depth`` (None: the judge's own cut
        stands). A cut on a calibrated probability means the same for any calibrated version of the judge
        (a fold's stacker, a refit); only the DEV figures beside it belong to ``judge_version``
        (``current``)."""
        point = self.at_depth(depth)[0].get(resolve_strictness(strictness))
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
