"""Citation correction (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop, CiteFix): replace, add or remove a marker, judged by the judge
that labels claims."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from audit.constants import CITATION_REPLACE_MARGIN, Thresholds
from audit.pipeline.extraction import citation_anchors
from audit.pipeline.revision.model import CitationAction, Judge, Strategy, _best_hit
from audit.pipeline.revision.sentences import (
    _add_marker,
    _Anchors,
    _rewrite_markers,
    _Sentence,
    _SentencePlan,
    marker_for,
)
from audit.pipeline.types import ClaimVerdict, Passage


class _Support:
    """One decision for support: a passage supports a claim when the judge that labels claims says
    SUPPORTED on that passage (its support score at or above ``audit_score_threshold`` first)."""

    def __init__(self, thresholds: Thresholds, judge: Judge | None):
        self.threshold = thresholds.audit_score_threshold
        self.judge = judge
        self._seen: dict[tuple[str, str], bool] = {}

    def __call__(self, c: ClaimVerdict, passage: Passage) -> bool:
        score = max((h.entailment for h in c.evidence if h.passage.id == passage.id), default=0.0)
        if score < self.threshold:
            return False
        if self.judge is None:
            return True
        key = (c.claim.text, passage.id)
        if key not in self._seen:
            verdict = self.judge(c.claim.text, passage)
            self._seen[key] = verdict is not None and verdict.label == "SUPPORTED"
        return self._seen[key]

    def anywhere(self, c: ClaimVerdict) -> bool:
        """True when the judge says SUPPORTED on one of the claim's evidence passages, whatever its
        label (a claim labelled contradicted that the judge supports is never marked disputed)."""
        if self.judge is None:
            return False
        for h in c.evidence:
            key = (c.claim.text, h.passage.id)
            if key not in self._seen:
                verdict = self.judge(c.claim.text, h.passage)
                self._seen[key] = verdict is not None and verdict.label == "SUPPORTED"
            if self._seen[key]:
                return True
        return False


def _correct_citations(
    plan: _SentencePlan,
    claims: list[ClaimVerdict],
    by_anchor: _Anchors,
    support: _Support,
    retrieved_ids: frozenset[str],
    *,
    corrected: bool = False,
    dropped: frozenset[str] = frozenset(),
    cite: Callable[[Passage], str] = marker_for,
) -> None:
    """Correct the sentence's citation markers (nothing when the sentence goes): remove those that
    name no passage, cite the passage that best supports each supported claim, then remove the
    markers whose passage supports no claim of the sentence (unless a claim was corrected)."""
    if plan.removed:
        return
    _drop_unknown_markers(plan, claims, by_anchor)
    _cite_best_passages(plan, claims, by_anchor, support, retrieved_ids, dropped, cite)
    if not corrected:
        _drop_unsupporting_markers(plan, claims, by_anchor, support, dropped)


def _drop_unknown_markers(plan: _SentencePlan, claims: list[ClaimVerdict], by_anchor: _Anchors) -> None:
    anchors = plan.sent.anchors()
    # markers that name no passage: REMOVE
    for a in anchors:
        if a not in by_anchor:

            def drop(s: _Sentence, a: str = a) -> None:
                s.body, s.trail = (
                    _rewrite_markers(s.body, lambda x: [] if x == a else [x]),
                    _rewrite_markers(s.trail, lambda x: [] if x == a else [x]),
                )

            plan.step(
                claims[0],
                Strategy.CITATION,
                f"citation [{a}] names no passage",
                drop,
                action=CitationAction.REMOVE,
                details={"anchor": a},
            )


def _cite_best_passages(
    plan: _SentencePlan,
    claims: list[ClaimVerdict],
    by_anchor: _Anchors,
    support: _Support,
    retrieved_ids: frozenset[str],
    dropped: frozenset[str],
    cite: Callable[[Passage], str],
) -> None:
    """Each supported claim cites the passage that best supports it: it replaces cited passages
    that support no claim, else it is added beside them."""

    def score(passage_id: str, c: ClaimVerdict) -> float:
        return max((h.entailment for h in c.evidence if h.passage.id == passage_id), default=0.0)

    supported = [c for c in claims if c.label == "SUPPORTED" and c.claim.claim_id not in dropped]
    for c in supported:
        best = _best_hit(c)
        if best is None or not support(c, best.passage):
            continue
        cited = [by_anchor[a] for a in plan.sent.anchors() if a in by_anchor]
        cited_best = max((score(p.id, c) for p in cited), default=0.0)
        if any(p.id == best.passage.id for p in cited) or (
            any(support(c, p) for p in cited) and best.entailment < cited_best + CITATION_REPLACE_MARGIN
        ):
            continue
        strategy = Strategy.CORRECTIVE_RETRIEVAL if best.passage.id in retrieved_ids else Strategy.CITATION
        new_marker = cite(best.passage)
        new_anchor = citation_anchors(new_marker)[0]
        useless = [p for p in cited if not any(support(o, p) for o in supported)]
        if cited and len(useless) == len(cited):
            old = {a for a in plan.sent.anchors() if a in by_anchor and by_anchor[a] in useless}

            def swap(s: _Sentence, old: set[str] = old, new_anchor: str = new_anchor) -> None:
                first = [True]

                def m(x: str) -> list[str]:
                    if x in old:
                        if first[0]:
                            first[0] = False
                            return [new_anchor]
                        return []
                    return [x]

                s.body = _rewrite_markers(s.body, m)
                s.trail = _rewrite_markers(s.trail, m)

            plan.step(
                c,
                strategy,
                "the cited passage does not support the claim; a better one does",
                swap,
                action=CitationAction.REPLACE,
                passage_id=best.passage.id,
                details={
                    "replaced": sorted(old),
                    "entailment": round(best.entailment, 4),
                    "cited_entailment": round(cited_best, 4),
                },
            )
        else:
            plan.step(
                c,
                strategy,
                "a better passage supports the claim" if cited else "uncited claim: a passage supports it",
                partial(_add_marker, marker=new_marker),
                action=CitationAction.ADD_ALTERNATE,
                passage_id=best.passage.id,
                details={"entailment": round(best.entailment, 4), "cited_entailment": round(cited_best, 4)},
            )


def _drop_unsupporting_markers(
    plan: _SentencePlan,
    claims: list[ClaimVerdict],
    by_anchor: _Anchors,
    support: _Support,
    dropped: frozenset[str],
) -> None:
    # a marker stays only where the passage it names supports a claim of the sentence (the same
    # decision as above): markers of a sentence that no longer holds a supported claim go
    judged = [c for c in claims if c.claim.claim_id not in dropped]
    useless = {
        a
        for a in plan.sent.anchors()
        if a in by_anchor
        and not any(
            (c.label == "SUPPORTED" or support.anywhere(c)) and support(c, by_anchor[a]) for c in judged
        )
    }
    if useless:

        def drop_useless(s: _Sentence, useless: set[str] = useless) -> None:
            s.body = _rewrite_markers(s.body, lambda x: [] if x in useless else [x])
            s.trail = _rewrite_markers(s.trail, lambda x: [] if x in useless else [x])

        plan.step(
            claims[0],
            Strategy.CITATION,
            "the cited passage does not support this sentence's claims",
            drop_useless,
            action=CitationAction.REMOVE,
            details={"anchors": sorted(useless)},
        )
