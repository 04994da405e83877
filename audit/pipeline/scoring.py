"""Method results -> claim labels, confidences, verdicts; claims -> answer metrics (docs/SPEC_NOTES.md#labels-verdicts-and-confidence).

- ``confidence`` (every claim): P(supported by its evidence) from the entailment judge, lowered
  when numeric verification or cross-source conflict finds a contradiction; ~0 for contradicted.
- FEVER label: SUPPORTED when confidence >= ``audit_score_threshold`` and nothing contradicts,
  REFUTED when the evidence contradicts, NEI otherwise (also when there is no evidence).
- verdict (docs/SPEC_NOTES.md#labels-verdicts-and-confidence): supported | weak (confidence in [weak_threshold, threshold)) |
  contradicted | not_found.
- answer metrics (RAGAS definitions, offline): faithfulness = supported claims / claims; answer
  relevance = cosine(query, answer); context precision = average precision of the contexts in
  the order given, a context being relevant when it supports some claim; context recall (with a
  reference answer) = share of reference sentences supported by the contexts. Evidence coverage
  and unsupported rate over non-minor claims and the quality gates (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from audit.constants import (
    CONTRADICTION_CAP,
    IMPORTANCE_CRITICAL,
    IMPORTANCE_MINOR,
    NUMERIC_ABSENT_MARGIN,
    STRUCTURE_CONTRADICTION_CAP,
    STRUCTURE_ENTITY_MARGIN,
    STRUCTURE_P_REFUTED,
    WEAK_THRESHOLD,
    Thresholds,
)
from audit.pipeline.llm.combine import DISAGREEMENT_FLAG, weigh, weighing_of
from audit.pipeline.methods.base import REGISTRY, ROLE_JUDGE, ROLE_NUMERIC, ROLE_STRUCTURE, ROLE_SUPPORT
from audit.pipeline.types import ClaimDraft, ClaimVerdict, EvidenceHit, Label, MethodResult

SUPPORTED, REFUTED, NEI = Label.SUPPORTED, Label.REFUTED, Label.NEI


def decide_label(
    confidence: float,
    p_refuted: float,
    *,
    supported_at: float,
    refuted_at: float,
    conflict: bool = False,
    forced_refutation: bool = False,
    refutation_blocked: bool = False,
    weak_at: float = WEAK_THRESHOLD,
) -> Label:
    """The one label decision: SUPPORTED at ``confidence >= supported_at`` unless sources conflict;
    REFUTED when a check forces it, or when ``p_refuted >= refuted_at``, the confidence (P(supported))
    is below ``weak_at`` and nothing blocks the judge's refutation; NEI otherwise. A claim the judge
    finds as likely supported as not (the "weak" band) is never labelled REFUTED on the judge's word:
    the label stays consistent with the P(supported) shown beside it. ``label_claim`` passes the
    checks' overrides; the evaluation code (``bench_eval``, ``learned_fit``, ``nli_fit``) calls it
    with the judge's outputs alone."""
    if confidence >= supported_at and not conflict:
        return Label.SUPPORTED
    if forced_refutation or (p_refuted >= refuted_at and confidence < weak_at and not refutation_blocked):
        return Label.REFUTED
    return Label.NEI


def decide_labels(
    confidences: Iterable[float], p_refuted: Iterable[float], *, supported_at: float, refuted_at: float
) -> list[str]:
    """``decide_label`` over parallel sequences of the judge's outputs (no checks' overrides)."""
    return [
        decide_label(float(c), float(p), supported_at=supported_at, refuted_at=refuted_at).value
        for c, p in zip(confidences, p_refuted)
    ]


def _by_role(results: dict[str, MethodResult], role: str) -> MethodResult | None:
    """The result of the first method (in run order) whose ``label_role`` is ``role``, or None."""
    for name, result in results.items():
        method = REGISTRY.get(name)
        if method is not None and method.label_role == role:
            return result
    return None


# long: the overrides apply in this order (docs/SPEC_NOTES.md#labels-verdicts-and-confidence), each reading the one before
def label_claim(
    claim: ClaimDraft, hits: list[EvidenceHit], results: dict[str, MethodResult], t: Thresholds
) -> ClaimVerdict:
    flags: list[str] = []
    for r in results.values():
        flags += [f for f in r.flags if f not in flags]
    if not hits:
        return ClaimVerdict(
            claim=claim,
            label=NEI,
            verdict="not_found",
            confidence=0.0,
            evidence=[],
            methods=list(results.values()),
            risk_flags=["no_evidence"] + flags,
            metrics=method_metrics(results),
        )
    ent = _by_role(results, ROLE_SUPPORT)
    conf = float(ent.score) if ent and ent.score is not None else 0.0
    p_ref = float(ent.details.get("p_refuted", 0.0)) if ent else 0.0
    judge = _by_role(results, ROLE_JUDGE)
    llm_disagreement = bool(ent and ent.details.get(DISAGREEMENT_FLAG))
    if (
        judge is not None
        and judge.ran
        and judge.score is not None
        and not (ent and "llm_verdict" in ent.details)
    ):
        # docs/LLM.md#weighing-the-llm-judge: the isolated LLM judge is one signal weighed with the
        # offline judge's (unless the support judge already weighed it, judge "llm"); a disagreement
        # with a confident offline verdict leaves it standing and sends the claim to review. The
        # numeric and structure checks below still apply on top, whatever the judges say
        weighed = weigh(
            conf,
            p_ref,
            float(judge.score),
            judge.details.get("p_refuted", 0.0),
            threshold=t.audit_score_threshold,
            refuted_threshold=t.refuted_threshold,
            **weighing_of(judge.details),
        )
        conf, p_ref = weighed.confidence, weighed.p_refuted
        llm_disagreement = llm_disagreement or weighed.disagreement
    if llm_disagreement and DISAGREEMENT_FLAG not in flags:
        flags.append(DISAGREEMENT_FLAG)
    structure = _by_role(results, ROLE_STRUCTURE)
    structural_contradiction = bool(structure and structure.ran and structure.verdict == "contradicted")
    if (
        structure
        and structure.ran
        and structure.details.get("negation_entails")
        and not structural_contradiction
    ):
        # a sentence denies what the claim denies, about no more than the claim names (binding.polarity):
        # the reader's misreading of a shared negation does not keep it below SUPPORTED; the checks
        # below still cap it
        conf = max(conf, t.audit_score_threshold)
    numeric = _by_role(results, ROLE_NUMERIC)
    # docs/SPEC_NOTES.md#numeric-checks: a quantity stated differently by a relevant evidence sentence contradicts the
    # claim, and one found nowhere in the evidence leaves it unverified (on DEV: 76% and 80% of such
    # claims are not supported), whatever the embedding-based judge says
    numeric_contradiction = bool(numeric and numeric.ran and numeric.verdict == "contradicted")
    # every quantity of the claim found in the evidence (exactly or inside a stated range): a judge's
    # refutation alone does not make it REFUTED then (a reader model takes "about 70%" against "60 to 80
    # percent" for a changed number); a structural contradiction still does
    numeric_support = bool(numeric and numeric.ran and numeric.verdict == "supported")
    if numeric and numeric.ran and numeric.details.get("absent") and not numeric_contradiction:
        conf = min(conf, t.audit_score_threshold - NUMERIC_ABSENT_MARGIN)
    # structural checks (negation, opposite predicate, substituted entity against the best-aligned
    # evidence sentence) override the judge like numbers do; a named entity of the claim found
    # nowhere in the evidence, or an obligation whose specifics no source states, keeps it below SUPPORTED
    if structural_contradiction:
        conf = min(conf, STRUCTURE_CONTRADICTION_CAP)
        p_ref = max(p_ref, STRUCTURE_P_REFUTED)
    elif (
        structure
        and structure.ran
        and (
            structure.details.get("missing_entity")
            or structure.details.get("unstated_obligation")
            or structure.details.get("unbound")
        )
    ):
        conf = min(conf, t.audit_score_threshold - STRUCTURE_ENTITY_MARGIN)
    conflict = "conflict" in flags
    if numeric_contradiction:
        conf = min(conf, CONTRADICTION_CAP)
        p_ref = max(p_ref, 1.0)
    # the claim's predicate stated with its own polarity (a negation it carries too, or one on another
    # predicate of the sentence): a reader's refutation is the negation misread, not a contradiction
    negation_agrees = bool(structure and structure.ran and structure.details.get("negation_agrees"))
    label = decide_label(
        conf,
        p_ref,
        supported_at=t.audit_score_threshold,
        refuted_at=t.refuted_threshold,
        conflict=conflict,
        forced_refutation=numeric_contradiction,
        refutation_blocked=(numeric_support or negation_agrees) and not structural_contradiction,
        weak_at=t.weak_threshold,
    )
    if label == SUPPORTED:
        verdict = "supported"
    elif label == REFUTED:
        verdict = "contradicted"
    elif conflict:
        verdict = "contradicted"
        conf = min(conf, t.audit_score_threshold - 1e-6)
    else:
        verdict = "weak" if conf >= t.weak_threshold else "not_found"
    best_sim = max((h.similarity for h in hits), default=0.0)
    return ClaimVerdict(
        claim=claim,
        label=label,
        verdict=verdict,
        confidence=round(conf, 6),
        p_refuted=round(p_ref, 6),
        evidence=hits,
        methods=list(results.values()),
        risk_flags=flags,
        metrics={"best_similarity": round(best_sim, 4), **method_metrics(results)},
    )


# Per-claim metrics a method reports in its details, copied to the claim card when it ran (docs/LLM.md):
# SelfCheck's disagreement exists only when samples were really drawn.
CLAIM_METRIC_KEYS = ("selfcheck_disagreement", "cove_consistency")


def method_metrics(results: dict[str, MethodResult]) -> dict[str, Any]:
    return {
        key: r.details[key]
        for r in results.values()
        if r.ran
        for key in CLAIM_METRIC_KEYS
        if r.details.get(key) is not None
    }


def claim_card_metrics(v: ClaimVerdict, t: Thresholds, answer_relevance: float | None) -> dict[str, Any]:
    """The per-claim metrics of the Claim Card (docs/SPEC_NOTES.md#analyst-pages): faithfulness = the claim's support
    probability against its best evidence (its confidence); answer_relevance = cosine of the claim
    to the query; context_precision = share of its evidence passages that support it (support
    score at or above ``audit_score_threshold``, the label's threshold)."""
    passages = {h.passage.id: h.entailment for h in v.evidence}
    precision = (
        (sum(1 for e in passages.values() if e >= t.audit_score_threshold) / len(passages))
        if passages
        else 0.0
    )
    return {
        "faithfulness": round(float(v.confidence), 4),
        "answer_relevance": None if answer_relevance is None else round(max(0.0, float(answer_relevance)), 4),
        "context_precision": round(precision, 4),
    }


def coverage(verdicts: list[ClaimVerdict], any_evidence: bool = True) -> float:
    """Share of non-minor claims that are supported or weak (docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score); 0 without evidence."""
    if not any_evidence:
        return 0.0
    material = [v for v in verdicts if v.claim.importance != IMPORTANCE_MINOR]
    if not material:
        return 1.0
    return sum(v.verdict in ("supported", "weak") for v in material) / len(material)


def unsupported_rate(verdicts: list[ClaimVerdict]) -> float:
    """Share of non-minor claims with no evidence found (docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score)."""
    material = [v for v in verdicts if v.claim.importance != IMPORTANCE_MINOR]
    if not material:
        return 0.0
    return sum(v.verdict == "not_found" for v in material) / len(material)


def faithfulness(verdicts: list[ClaimVerdict]) -> float:
    """RAGAS faithfulness: claims supported by the context / all claims (1.0 with no claims)."""
    if not verdicts:
        return 1.0
    return sum(v.label == SUPPORTED for v in verdicts) / len(verdicts)


def context_precision(relevant_in_order: list[bool]) -> float:
    """RAGAS context precision: mean of precision@k over the ranks k that hold a relevant context."""
    hits, total = 0, 0.0
    for k, rel in enumerate(relevant_in_order, start=1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))


def quality_gates(metrics: dict[str, Any], verdicts: list[ClaimVerdict], t: Thresholds) -> dict[str, Any]:
    critical_unsupported = sum(
        1 for v in verdicts if v.claim.importance == IMPORTANCE_CRITICAL and v.verdict == "not_found"
    )
    contradictions = sum(1 for v in verdicts if v.verdict == "contradicted")
    return {
        "evidence_coverage": metrics["evidence_coverage"] >= t.coverage_threshold,
        "unsupported_rate": metrics["unsupported_rate"] <= t.unsupported_rate_threshold,
        "critical_unsupported": critical_unsupported == 0,
        "contradictions": contradictions == 0,
    }


def audit_score(metrics: dict[str, Any], t: Thresholds) -> float:
    w = t.audit_score_weights
    total = sum(w.values()) or 1.0
    score = sum(weight * float(metrics.get(name) or 0.0) for name, weight in w.items()) / total
    return round(min(1.0, max(0.0, float(score))), 6)


def warnings_for(verdicts: list[ClaimVerdict]) -> list[dict[str, Any]]:
    unsupported = [v for v in verdicts if v.verdict == "not_found" and v.claim.importance != IMPORTANCE_MINOR]
    out = []
    if unsupported:
        out.append(
            {
                "code": "UNSUPPORTED_CLAIMS",
                "message": f"{len(unsupported)} material claims could not be verified",
                "details": [v.claim.text for v in unsupported],
            }
        )
    return out
