"""The LLM judge's verdict weighed with the offline judge's (docs/LLM.md#weighing-the-llm-judge).

The LLM is one signal, not the verdict: a weak or mis-configured endpoint must not make the labels
worse than offline without anyone seeing it. :func:`weigh` takes the offline judge's P(supported)
and P(refuted | not supported) and the LLM judge's result and returns the confidence the label
reads:

* where the LLM agrees with the offline judge (both say supported, both refuted, or both neither),
  or the offline judge is unsure (close to a threshold: only such a verdict can change label), the two are blended with
  ``weight`` on the LLM;
* where the LLM disagrees with a *confident* offline verdict (its confidence at least
  ``margin`` from the SUPPORTED threshold and, below it, its P(refuted) that
  far from the REFUTED threshold), the offline figures stand unchanged and ``disagreement`` is set: scoring adds the risk flag
  ``llm_disagreement`` and escalation opens a review case for it, so a person decides rather than
  the endpoint silently flipping the label.

``weight`` and ``margin`` are fitted per workspace, endpoint and model (``evaluate --judge llm
--fit``); unfitted they are ``LLM_JUDGE_WEIGHT`` 0 and ``LLM_OFFLINE_CONFIDENT_MARGIN`` 0: the LLM
moves no verdict and every disagreement goes to review.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from audit.constants import LLM_JUDGE_WEIGHT, LLM_OFFLINE_CONFIDENT_MARGIN

DISAGREEMENT_FLAG = "llm_disagreement"


@dataclass(frozen=True)
class Weighed:
    confidence: float
    p_refuted: float
    disagreement: bool = False


def _side(p_supported: float, p_refuted: float, threshold: float, refuted_threshold: float) -> str:
    if p_supported >= threshold:
        return "supported"
    return "refuted" if p_refuted >= refuted_threshold else "unsupported"


def weigh(
    offline_conf: float,
    offline_p_refuted: float,
    llm_score: float,
    llm_p_refuted: float | None,
    *,
    threshold: float,
    refuted_threshold: float,
    weight: float = LLM_JUDGE_WEIGHT,
    margin: float = LLM_OFFLINE_CONFIDENT_MARGIN,
) -> Weighed:
    """The confidence and P(refuted) of a claim from both judges (see the module doc). ``llm_p_refuted``
    None: the LLM reads supported or not only (MiniCheck's Yes/No), so it is compared on that alone
    and leaves P(refuted) to the offline judge."""
    offline = _side(offline_conf, offline_p_refuted, threshold, refuted_threshold)
    if llm_p_refuted is None:
        llm_p_refuted = offline_p_refuted
        llm = "supported" if llm_score >= threshold else offline.replace("supported", "unsupported")
    else:
        llm = _side(llm_score, llm_p_refuted, threshold, refuted_threshold)
    confident = abs(offline_conf - threshold) >= margin and (
        offline == "supported" or abs(offline_p_refuted - refuted_threshold) >= margin
    )
    disagrees = offline != llm
    if disagrees and confident:
        return Weighed(offline_conf, offline_p_refuted, True)
    w = min(1.0, max(0.0, weight))
    return Weighed(
        (1 - w) * offline_conf + w * llm_score,
        (1 - w) * offline_p_refuted + w * llm_p_refuted,
        False,
    )


def weighing_of(details: dict[str, Any]) -> dict[str, float]:
    """The ``weight`` and ``margin`` keyword arguments of :func:`weigh` that an LLM judge's result
    carries (``judge.judge_claims`` puts the client's in force there); unfitted defaults otherwise."""
    return {
        "weight": float(details.get("weight", LLM_JUDGE_WEIGHT)),
        "margin": float(details.get("margin", LLM_OFFLINE_CONFIDENT_MARGIN)),
    }
