"""Measure the revision loop on benchmark answers (``manage.py evaluate_revision``); plain Python.

For each answer: audit it, run ``revise_answer`` and compare the original with the kept
version. Reported, before and after revision (docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score, gate ≤ 5 %):
- the unsupported rate among material (non-minor) claims, pooled over all answers;
- supported claims removed: claims the verifier found supported (or weak) in the original whose
  content no longer appears in any claim of the revised answer (must be 0);
- gold-supported sentences removed: sentences the benchmark's annotators judged completely
  supported that the revision took out (information only: it measures the verifier as much as
  the revision);
- edits per strategy and citation action;
- traceability: every edit names a claim of the attempt it was planned on and a known strategy,
  and replaying each attempt's ledger on the previous text gives exactly the next text;
- citation markers of every revised answer resolve to a passage;
- docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop, each must be 0: claim revisions (corrections, citations) whose new text the judge
  that labels claims does not find SUPPORTED by the passage they cite; corrections whose subject
  changed (a content word of the claim outside the replaced span is gone); claims refuted as
  received that would open no review case; citation markers of the revised text whose passage the
  judge finds SUPPORTING no claim of the sentence they close.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

from audit.pipeline.extraction import citation_anchors, clean_sentence
from audit.pipeline.retrieval import anchor_map, as_passages, resolve_anchor
from audit.pipeline.revision import COVERED, RevisionOutcome, Strategy, replay_edits
from audit.pipeline.text import content_stems

KEPT_CONTAINMENT = 0.8  # share of a claim's content words a later claim must hold for it to count as kept


@dataclass
class RevisionEvaluation:
    answers: int = 0
    revised: int = 0
    material_before: int = 0
    unsupported_before: int = 0
    material_after: int = 0
    unsupported_after: int = 0
    supported_claims_before: int = 0
    supported_claims_removed: int = 0
    removed_examples: list[str] = field(default_factory=list)
    gold_supported_sentences: int = 0
    gold_supported_removed: int = 0
    edits: Counter = field(default_factory=Counter)
    citation_actions: Counter = field(default_factory=Counter)
    untraceable: list[str] = field(default_factory=list)
    invalid_markers: list[str] = field(default_factory=list)
    warnings: Counter = field(default_factory=Counter)
    stop_reasons: Counter = field(default_factory=Counter)
    attempts: Counter = field(default_factory=Counter)
    kept_earlier: int = 0
    seconds: float = 0.0
    edits_checked: int = 0  # claim revisions that cite a passage, checked with the judge
    unsupported_edits: list[str] = field(default_factory=list)
    corrections: int = 0
    subject_changed: list[str] = field(default_factory=list)
    refuted_received: int = 0
    refuted_without_case: list[str] = field(default_factory=list)
    markers_checked: int = 0  # citation markers of the final texts, checked with the judge
    unbacked_markers: list[str] = field(default_factory=list)

    @property
    def unsupported_rate_before(self) -> float:
        return self.unsupported_before / self.material_before if self.material_before else 0.0

    @property
    def unsupported_rate_after(self) -> float:
        return self.unsupported_after / self.material_after if self.material_after else 0.0

    def as_json(self) -> dict:
        return {
            "answers": self.answers,
            "revised": self.revised,
            "seconds": round(self.seconds, 1),
            "material_before": self.material_before,
            "unsupported_before": self.unsupported_before,
            "unsupported_rate_before": round(self.unsupported_rate_before, 4),
            "material_after": self.material_after,
            "unsupported_after": self.unsupported_after,
            "unsupported_rate_after": round(self.unsupported_rate_after, 4),
            "supported_claims_before": self.supported_claims_before,
            "supported_claims_removed": self.supported_claims_removed,
            "removed_examples": self.removed_examples,
            "gold_supported_sentences": self.gold_supported_sentences,
            "gold_supported_removed": self.gold_supported_removed,
            "edits": dict(self.edits),
            "citation_actions": dict(self.citation_actions),
            "untraceable": self.untraceable,
            "invalid_markers": self.invalid_markers,
            "warnings": dict(self.warnings),
            "stop_reasons": dict(self.stop_reasons),
            "attempts": {str(k): v for k, v in self.attempts.items()},
            "kept_earlier": self.kept_earlier,
            "edits_checked": self.edits_checked,
            "unsupported_edits": self.unsupported_edits,
            "corrections": self.corrections,
            "subject_changed": self.subject_changed,
            "refuted_received": self.refuted_received,
            "refuted_without_case": self.refuted_without_case,
            "markers_checked": self.markers_checked,
            "unbacked_markers": self.unbacked_markers,
        }

    def report(self, gate: float) -> str:
        lines = [
            f"answers: {self.answers}, revised: {self.revised}, seconds: {self.seconds:.1f}",
            f"unsupported rate among material claims: before {self.unsupported_rate_before:.1%} "
            f"({self.unsupported_before}/{self.material_before}), after {self.unsupported_rate_after:.1%} "
            f"({self.unsupported_after}/{self.material_after}); gate <= {gate:.0%}: "
            f"{'PASS' if self.unsupported_rate_after <= gate else 'FAIL'}",
            f"supported claims removed: {self.supported_claims_removed} of {self.supported_claims_before} "
            f"(must be 0): {'PASS' if self.supported_claims_removed == 0 else 'FAIL'}",
            f"gold-supported sentences removed (annotators' Complete support; verifier errors show here): "
            f"{self.gold_supported_removed} of {self.gold_supported_sentences}",
            "edits per strategy: " + (", ".join(f"{k} {v}" for k, v in sorted(self.edits.items())) or "none"),
            "citation actions: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.citation_actions.items())) or "none"),
            f"edits traceable to a claim and a strategy: "
            f"{'PASS' if not self.untraceable else 'FAIL (' + '; '.join(self.untraceable[:5]) + ')'}",
            f"citation markers valid after revision: "
            f"{'PASS' if not self.invalid_markers else 'FAIL (' + '; '.join(self.invalid_markers[:5]) + ')'}",
            "warnings: " + (", ".join(f"{k} {v}" for k, v in sorted(self.warnings.items())) or "none"),
            "stop reasons: " + ", ".join(f"{k} {v}" for k, v in self.stop_reasons.most_common()),
            "attempts per answer: "
            + ", ".join(f"{k}: {v}" for k, v in sorted(self.attempts.items()))
            + f"; an earlier, better attempt kept: {self.kept_earlier}",
            f"revised claims whose new text is not SUPPORTED by its cited passage: {len(self.unsupported_edits)} of "
            f"{self.edits_checked} (must be 0): {'PASS' if not self.unsupported_edits else 'FAIL'}",
            f"corrections whose subject changed: {len(self.subject_changed)} of {self.corrections} (must be 0): "
            f"{'PASS' if not self.subject_changed else 'FAIL'}",
            f"claims refuted as received that opened no case: {len(self.refuted_without_case)} of "
            f"{self.refuted_received} (must be 0): {'PASS' if not self.refuted_without_case else 'FAIL'}",
            f"citation markers of the revised texts backing no claim of their sentence (the judge on that passage): "
            f"{len(self.unbacked_markers)} of {self.markers_checked} (must be 0): "
            f"{'PASS' if not self.unbacked_markers else 'FAIL'}",
        ]
        for name, rows in (
            ("unsupported edits", self.unsupported_edits),
            ("subject changed", self.subject_changed),
            ("refuted without a case", self.refuted_without_case),
            ("unbacked markers", self.unbacked_markers),
        ):
            if rows:
                lines.append(f"{name}, first examples: " + " | ".join(rows[:5]))
        if self.removed_examples:
            lines.append("supported claims removed, first examples: " + " | ".join(self.removed_examples[:5]))
        return "\n".join(lines)


def _kept(text: str, later: list[set[str]]) -> bool:
    stems = set(content_stems(text))
    if not stems:
        return True
    return any(len(stems & other) / len(stems) >= KEPT_CONTAINMENT for other in later)


def _rest_stems(claim_text: str, replaced: list[str]) -> set[str]:
    rest = claim_text
    for words in replaced:
        rest = re.sub(rf"(?<!\w){re.escape(words)}(?!\w)", " ", rest, flags=re.I)
    return {s for s in content_stems(rest) if not any(ch.isdigit() for ch in s)}


def check_integrity(
    out: RevisionOutcome, record_id: str, ev: RevisionEvaluation, judge=None, needs_case=None
) -> None:
    """The revision gates' checks: ``judge(text, passage) -> ClaimVerdict`` (the claim judge on one passage),
    ``needs_case(claim verdict as received, its revision or None) -> bool`` (the intake rule)."""
    revisions = out.claim_revisions() if out.revised else {}
    passages = {p.id: p for p in out.passages}
    for attempt in out.attempts:
        for c in attempt.result.claims:
            for h in c.evidence:
                passages.setdefault(h.passage.id, h.passage)
    received = {c.claim.claim_id: c for c in out.attempts[0].result.claims}
    for cid, rev in revisions.items():
        where = f"{record_id}/{cid}"
        if (
            judge is not None
            and rev.get("cited")
            and rev["text"]
            and rev["strategy"] in (Strategy.CORRECT, Strategy.CITATION, Strategy.CORRECTIVE_RETRIEVAL)
        ):
            ev.edits_checked += 1
            verdict = judge(rev["text"], passages[rev["passage_id"]])
            if verdict.label != "SUPPORTED":
                ev.unsupported_edits.append(
                    f"{where}: {rev['text'][:80]!r} vs {rev['passage_id']} ({verdict.label})"
                )
        if rev["strategy"] == Strategy.CORRECT:
            ev.corrections += 1
            before = received[cid].claim.text
            if not _rest_stems(before, rev.get("replaced", [])) <= set(content_stems(rev["text"])):
                ev.subject_changed.append(f"{where}: {before[:60]!r} -> {rev['text'][:60]!r}")
    if judge is not None and out.revised:  # one decision for support: every marker left is backed
        amap = anchor_map(out.passages)
        # a marker closes its sentence: it must back a claim of that sentence (the planner's rule)
        sentences: dict[tuple[int, int], list] = {}
        for c in out.final.claims:
            sentences.setdefault(tuple(c.claim.span), []).append(c)
        for claims in sentences.values():
            for anchor in dict.fromkeys(a for c in claims for a in c.claim.citations):
                passage = resolve_anchor(anchor, amap)
                if passage is None:
                    continue  # counted by the marker validity check
                ev.markers_checked += 1
                verdicts = [judge(c.claim.text, passage) for c in claims if anchor in c.claim.citations]
                if not any(v.label == "SUPPORTED" for v in verdicts):
                    c = claims[0]
                    ev.unbacked_markers.append(
                        f"{record_id}/{c.claim.claim_id}: [{anchor}] on "
                        f"{c.claim.text[:60]!r} ({verdicts[0].label})"
                    )
    for cid, c in received.items():
        if c.label == "REFUTED":
            ev.refuted_received += 1
            if needs_case is not None and not needs_case(c, revisions.get(cid)):
                ev.refuted_without_case.append(f"{record_id}/{cid}: {c.claim.text[:60]!r}")


def check_outcome(out: RevisionOutcome, record_id: str, ev: RevisionEvaluation, gold_sentences=()) -> None:
    """Add one answer's outcome to the evaluation (metrics and the independent checks)."""
    first = out.attempts[0]
    final = out.final
    before = [c for c in first.result.claims if c.claim.importance != "minor"]
    after = [c for c in final.claims if c.claim.importance != "minor"]
    ev.answers += 1
    ev.revised += int(out.revised)
    ev.material_before += len(before)
    ev.unsupported_before += sum(c.verdict == "not_found" for c in before)
    ev.material_after += len(after)
    ev.unsupported_after += sum(c.verdict == "not_found" for c in after)
    later = [set(content_stems(c.claim.text)) for c in final.claims]
    for c in first.result.claims:
        if c.verdict in COVERED:
            ev.supported_claims_before += 1
            if not _kept(c.claim.text, later):
                ev.supported_claims_removed += 1
                ev.removed_examples.append(f"{record_id}/{c.claim.claim_id}: {c.claim.text[:80]}")
    final_stems = [set(content_stems(clean_sentence(out.final_text)))]
    for sentence in gold_sentences:
        ev.gold_supported_sentences += 1
        if not _kept(clean_sentence(sentence), final_stems):
            ev.gold_supported_removed += 1
    strategies = set(Strategy)
    for prev, attempt in zip(out.attempts, out.attempts[1:]):
        ids = {c.claim.claim_id for c in prev.result.claims}
        for e in attempt.edits:
            ev.edits[e.strategy] += 1
            if e.strategy in (Strategy.CITATION, Strategy.CORRECTIVE_RETRIEVAL):
                ev.citation_actions[e.action] += 1
            if e.claim_id not in ids or e.strategy not in strategies:
                ev.untraceable.append(
                    f"{record_id} attempt {attempt.number}: edit names {e.claim_id}/{e.strategy}"
                )
        try:
            replayed = replay_edits(prev.text, attempt.edits)
        except ValueError as exc:
            replayed = f"<{exc}>"
        if replayed != attempt.text:
            ev.untraceable.append(
                f"{record_id} attempt {attempt.number}: the ledger does not rebuild the text"
            )
    amap = anchor_map(out.passages)
    for anchor in citation_anchors(out.final_text):
        if resolve_anchor(anchor, amap) is None:
            ev.invalid_markers.append(f"{record_id}: [{anchor}]")
    for w in out.warnings:
        ev.warnings[w["code"]] += 1
    ev.stop_reasons[out.stop_reason] += 1
    ev.attempts[len(out.attempts)] += 1
    ev.kept_earlier += int(out.kept != len(out.attempts) - 1)


def evaluate_answers(
    records: list[dict], revise, *, progress=None, judge=None, needs_case=None
) -> RevisionEvaluation:
    """Run ``revise(query, answer, passages) -> RevisionOutcome`` on benchmark answer records
    (``judge`` and ``needs_case``: see :func:`check_integrity`)."""
    ev = RevisionEvaluation()
    started = time.perf_counter()
    for rec in records:
        passages = as_passages(rec.get("contexts") or [])
        out = revise(rec.get("query") or "", rec["answer"], passages)
        gold = [s["text"] for s in rec.get("sentences") or [] if s.get("hallucinated") is False]
        check_outcome(out, rec.get("id", "?"), ev, gold)
        check_integrity(out, rec.get("id", "?"), ev, judge=judge, needs_case=needs_case)
        if progress:
            progress(1)
    ev.seconds = time.perf_counter() - started
    return ev
