"""A workspace's verification thresholds (the defaults above, with its overrides) and the ranges a workspace may set.

Part of ``audit.constants`` (import from there: ``from audit.constants import NAME``)."""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields, replace
from typing import Any

from audit.constants.depths import (
    AUDIT_SCORE_WEIGHTS,
    AUTO_CORRECTED_REVIEW,
    DEEP_CHECKS_DEFAULT,
    RAG_SCORE_WEIGHTS,
    STRING_THRESHOLDS,
    UNSUPPORTED_REVIEW,
)
from audit.constants.escalation import SLA_AT_RISK_SHARE
from audit.constants.judge import JUDGE, RETRIEVAL_TOP_K, VERIFICATION_DEPTH
from audit.constants.operations import DEFAULT_FRESHNESS_MONTHS, FALLBACK_FRESHNESS_MONTHS, NIGHTLY_LABELS
from audit.constants.verification import (
    AUDIT_SCORE_THRESHOLD,
    CONFLICT_THRESHOLD,
    COVERAGE_THRESHOLD,
    LOW_CONFIDENCE_THRESHOLD,
    MAX_CLAIMS_PER_ANSWER,
    MAX_REVISIONS,
    NUMERIC_APPROX_TOLERANCE,
    NUMERIC_BOOST,
    NUMERIC_REL_TOLERANCE,
    REFUTED_THRESHOLD,
    SELFCHECK_DISAGREEMENT_THRESHOLD,
    SIMILARITY_THRESHOLD,
    UNSUPPORTED_RATE_THRESHOLD,
    WEAK_THRESHOLD,
)


@dataclass(frozen=True)
class Thresholds:
    """The verification thresholds in force for one audit (defaults = seed values)."""

    audit_score_threshold: float = AUDIT_SCORE_THRESHOLD
    selfcheck_disagreement_threshold: float = SELFCHECK_DISAGREEMENT_THRESHOLD
    low_confidence_threshold: float = LOW_CONFIDENCE_THRESHOLD
    coverage_threshold: float = COVERAGE_THRESHOLD
    unsupported_rate_threshold: float = UNSUPPORTED_RATE_THRESHOLD
    max_revisions: int = MAX_REVISIONS
    max_claims_per_answer: int = MAX_CLAIMS_PER_ANSWER
    similarity_threshold: float = SIMILARITY_THRESHOLD
    weak_threshold: float = WEAK_THRESHOLD
    refuted_threshold: float = REFUTED_THRESHOLD
    conflict_threshold: float = CONFLICT_THRESHOLD
    numeric_boost: float = NUMERIC_BOOST
    numeric_rel_tolerance: float = NUMERIC_REL_TOLERANCE
    numeric_approx_tolerance: float = NUMERIC_APPROX_TOLERANCE
    retrieval_top_k: int = RETRIEVAL_TOP_K
    verification_depth: str = VERIFICATION_DEPTH
    judge: str = JUDGE
    strictness: str = (
        ""  # "" or one of STRICTNESS_POINTS ("": balanced; regulated domains: STRICTNESS_REGULATED)
    )
    verification_profile: str = ""  # "" or a key of VERIFICATION_PROFILES
    generation_mode: str = ""  # "" or one of GENERATION_MODES
    deep_checks: str = DEEP_CHECKS_DEFAULT  # the workspace's default for requests naming no "deep"
    freshness_months: dict = field(default_factory=lambda: dict(DEFAULT_FRESHNESS_MONTHS))
    fallback_freshness_months: int = FALLBACK_FRESHNESS_MONTHS
    audit_score_weights: dict = field(default_factory=lambda: dict(AUDIT_SCORE_WEIGHTS))
    rag_score_weights: dict = field(default_factory=lambda: dict(RAG_SCORE_WEIGHTS))
    sla_at_risk_share: float = SLA_AT_RISK_SHARE
    auto_corrected_review: str = AUTO_CORRECTED_REVIEW
    unsupported_review: str = UNSUPPORTED_REVIEW
    # The workspace's calibration in force (an ``audit.pipeline.calibration.Calibration``), attached
    # by ``audit.selectors.api.thresholds_for``; not a setting: no override, form or API sets it.
    calibration: object = field(default=None, compare=False, metadata={"internal": True})

    def updated(self, overrides: dict | None) -> "Thresholds":
        """A copy with the known keys of ``overrides`` applied; unknown keys raise ValueError."""
        if not overrides:
            return self
        names = {f.name for f in setting_fields()}
        unknown = set(overrides) - names
        if unknown:
            raise ValueError(f"unknown threshold(s): {', '.join(sorted(unknown))}")
        values = dict(overrides)
        for key, allowed in STRING_THRESHOLDS.items():
            if key in values and values[key] not in allowed:
                raise ValueError(f"{key} must be one of {', '.join(allowed)}")
        for key in ("freshness_months", "audit_score_weights", "rag_score_weights"):
            if key in values:
                values[key] = {**getattr(self, key), **values[key]}
        return replace(self, **values)

    def freshness_for(self, domain: str | None) -> int:
        return int(self.freshness_months.get((domain or "").lower(), self.fallback_freshness_months))

    def is_weak(self, label: str, confidence: float) -> bool:
        """The weak-claim rule: REFUTED or NEI below ``low_confidence_threshold`` (a claim at the bar
        is not weak). ``audit.selectors.weak_claims.weak_claims_q`` is the same rule in SQL."""
        return label in NIGHTLY_LABELS and confidence < self.low_confidence_threshold


def is_regulated(domain: str | None, regulated_domains) -> bool:
    """Whether ``domain`` is one of ``regulated_domains`` (case-insensitive; no domain is never
    regulated): the one rule behind Audit-Local's trigger, a case's risk and reasons, and the
    revisions a workspace holds (``Workspace.is_regulated``)."""
    return bool(domain) and domain.lower() in {str(d).lower() for d in regulated_domains or ()}


def setting_fields() -> list[Field[Any]]:
    """The fields of :class:`Thresholds` a workspace may override (every one but the internal ones)."""
    return [f for f in fields(Thresholds) if not f.metadata.get("internal")]


# --- Ranges of the settings a workspace may change (API, admin console; checked again when read) ---
# Whole-number thresholds and their inclusive ranges; every other number threshold is a share in
# [0, 1], and the values of the dict-valued ones are ranged below. A stored value outside its
# range (written before a check existed, or by hand) is ignored when read: the default applies.
INT_THRESHOLD_RANGES = {
    "max_revisions": (0, 10),
    "retrieval_top_k": (1, 100),
    "max_claims_per_answer": (1, 5000),
    "fallback_freshness_months": (1, 1200),
}
# Shares whose 0 would be meaningless: at 0 every case would be "at risk" the moment it opens.
SHARES_ABOVE_ZERO = frozenset({"sla_at_risk_share"})
FRESHNESS_MONTHS_RANGE = (1, 1200)  # a domain's maximum source age (freshness_months, freshness_policy)
WEIGHT_RANGE = (0.0, 100.0)  # one weight of audit_score_weights / rag_score_weights
RETENTION_DAYS_RANGE = (1, 36500)  # Workspace.retention_days: one day to a hundred years
LLM_TOKEN_BUDGET_MAX = 10**12


def _number(value) -> bool:
    """A finite int or float (never a bool). An int of any size is finite: ``math.isfinite`` would
    convert it to a float first and overflow on a 400-digit one."""
    import math

    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def whole_number_problem(value, low: int, high: int) -> str | None:
    """Why ``value`` is not a whole number in [low, high] (None when it is)."""
    if not _number(value) or int(value) != value:
        return f"must be a whole number between {low} and {high}."
    if not low <= value <= high:
        return f"must be between {low} and {high}."
    return None


def threshold_problem(name: str, value) -> tuple[str, str] | None:
    """(key, message) of what makes ``value`` unusable as threshold ``name``; None when it is usable.

    The one check of a threshold override: finite numbers, whole numbers where whole numbers are
    meant, each in its documented range, known words for the string-valued ones.
    """
    default = getattr(Thresholds(), name, None)
    if not any(f.name == name for f in setting_fields()):
        return name, f"unknown threshold(s): {name}; see audit.constants.Thresholds."
    if name in STRING_THRESHOLDS:
        allowed = STRING_THRESHOLDS[name]
        return (
            None
            if isinstance(value, str) and value in allowed
            else (name, f"must be one of {', '.join(allowed)}.")
        )
    if isinstance(default, dict):
        if not isinstance(value, dict):
            return name, "must be an object."
        weights = name.endswith("_weights")
        for key, item in value.items():
            if weights and key not in default:
                return f"{name}.{key}", f"is not a weight; use {', '.join(default)}."
            if weights:
                low, high = WEIGHT_RANGE
                if not _number(item) or not low <= item <= high:
                    return f"{name}.{key}", f"must be a number between {low:g} and {high:g}."
            elif problem := whole_number_problem(item, *FRESHNESS_MONTHS_RANGE):
                return f"{name}.{key}", problem
        if weights and not sum({**default, **value}.values()) > 0:
            return name, "needs at least one weight above 0."
        return None
    if name in INT_THRESHOLD_RANGES:
        problem = whole_number_problem(value, *INT_THRESHOLD_RANGES[name])
        return (name, problem) if problem else None
    if name in SHARES_ABOVE_ZERO and _number(value) and value == 0:
        return name, "must be above 0 and at most 1: at 0 every case would be at risk the moment it opens."
    if not _number(value) or not 0.0 <= value <= 1.0:
        return name, "must be a number between 0 and 1."
    return None


def threshold_problems(overrides) -> list[tuple[str, str]]:
    """Every (key, message) of :func:`threshold_problem` over a dict of overrides, not only the first."""
    if not isinstance(overrides, dict):
        return [("threshold_overrides", "must be an object.")]
    return [problem for name, value in overrides.items() if (problem := threshold_problem(name, value))]


def usable_overrides(overrides) -> dict:
    """The stored overrides that pass :func:`threshold_problem` (whole numbers as ints): what is read.

    A bad stored value never breaks an audit, the nightly job or a purge: it is skipped, so the
    default applies, and the settings page shows the override beside what is in force.
    """
    if not isinstance(overrides, dict):
        return {}
    out = {}
    for name, value in overrides.items():
        if threshold_problem(name, value) is None:
            out[name] = int(value) if name in INT_THRESHOLD_RANGES else value
    return out
