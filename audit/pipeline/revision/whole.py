"""Each sentence a revision changed, judged whole (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop).

A revision edits spans: a correction replaces the contradicted value ("1987" → "1997") and keeps the
rest of the sentence. The claim's verdict in the kept text says whether that claim now verifies;
the sentence as served may still state something no source states ("…using recordings from rats"
where the knowledge base says monkeys). So after the loop every sentence holding a revised claim is
judged once more as one unit, by the judge that labels claims (the same methods and thresholds, on
every passage the sentence's claims rest on), and by the structural check with every word of the
sentence that no evidence sentence states examined as a possible substitution
(``WHOLE_SENTENCE_MAX_MISSING``; a claim is examined for one): a correction aligned the sentence
with one evidence sentence on purpose, so the words it still does not share with it are the
leftovers of the error, not paraphrase. The stored claims, counts and cases are untouched: this
judgement is shown beside the revision (its label and findings), never instead of the finding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from audit.constants import STRUCTURE_CONTRADICTION_CAP, STRUCTURE_ENTITY_MARGIN, WHOLE_SENTENCE_MAX_MISSING
from audit.pipeline import contradiction
from audit.pipeline.extraction import CITATION_RE, SPACE_BEFORE_PUNCT_RE
from audit.pipeline.revision.model import RevisionOutcome, span_key
from audit.pipeline.types import ClaimVerdict, Passage

REFUTED, NEI, SUPPORTED = "REFUTED", "NEI", "SUPPORTED"

# judge(sentence text, passages) -> the verdict of the judge that labels claims on that evidence
SentenceJudge = Callable[[str, list[Passage]], ClaimVerdict]
Similarity = Callable[[str, str], float]


def sentence_body(text: str) -> str:
    """The sentence without its citation markers, whitespace collapsed (what the judge reads)."""
    return SPACE_BEFORE_PUNCT_RE.sub(r"\1", " ".join(CITATION_RE.sub(" ", text or "").split()))


def structural_report(
    text: str, passages: list[Passage], similarity: Similarity | None
) -> contradiction.StructureReport:
    """The structural check on one sentence as a revised sentence is judged whole: up to
    ``WHOLE_SENTENCE_MAX_MISSING`` unstated words are examined (a correction reads it the same way)."""
    return contradiction.check(
        text,
        [(p.id, p.text) for p in passages if p.text.strip()],
        similarity,
        max_missing=WHOLE_SENTENCE_MAX_MISSING,
    )


def judge_whole(
    text: str,
    passages: list[Passage],
    *,
    judge: SentenceJudge,
    similarity: Similarity | None,
    threshold: float,
) -> dict[str, Any]:
    """Judge one sentence whole: ``{"text", "label", "confidence", "findings", "passages"}``.

    The judge's label stands unless the structural check, examining up to
    ``WHOLE_SENTENCE_MAX_MISSING`` unstated words, finds a contradiction (REFUTED, confidence
    capped) or a missing named entity or unstated obligation (a SUPPORTED label becomes NEI,
    confidence kept below ``threshold``).
    """
    body = sentence_body(text)
    verdict = judge(body, passages)
    label, confidence = verdict.label, float(verdict.confidence)
    report = structural_report(body, passages, similarity)
    if report.contradicted:
        label, confidence = REFUTED, min(confidence, STRUCTURE_CONTRADICTION_CAP)
    elif (report.missing_entity or report.unstated_obligation or report.unbound) and label == SUPPORTED:
        label, confidence = NEI, min(confidence, threshold - STRUCTURE_ENTITY_MARGIN)
    return {
        "text": body,
        "label": label,
        "confidence": round(max(0.0, confidence), 4),
        "findings": [f.as_dict() for f in report.findings],
        "passages": [p.id for p in passages],
    }


def judge_revised_sentences(
    outcome: RevisionOutcome,
    *,
    judge: SentenceJudge,
    similarity: Similarity | None,
    threshold: float,
) -> dict[str, dict[str, Any]]:
    """Judge whole every sentence of the kept text that holds a revised claim; return {span key: judgement}.

    A sentence's evidence is every passage its claims in the kept text rest on, plus the passage a
    revision of it cites. Sentences only a citation edit touched are judged too: a new marker
    claims support for the whole sentence.
    """
    if not outcome.revised:
        return {}
    by_id = {p.id: p for p in outcome.passages}
    spans: dict[tuple[int, ...], list[Passage]] = {}
    for edits, final in outcome.revised_claims().values():
        if final is None:
            continue
        pool = spans.setdefault(tuple(final.claim.span), [])
        cited = [by_id[e.passage_id] for e in edits if e.passage_id in by_id]
        same_sentence = [c for c in outcome.final.claims if tuple(c.claim.span) == tuple(final.claim.span)]
        for p in [*cited, *(h.passage for c in same_sentence for h in c.evidence)]:
            if all(p.id != q.id for q in pool):
                pool.append(p)
    out = {}
    for (start, end), passages in sorted(spans.items()):
        text = outcome.final_text[start:end]
        if not sentence_body(text) or not passages:
            continue
        out[span_key((start, end))] = judge_whole(
            text, passages, judge=judge, similarity=similarity, threshold=threshold
        )
    return out
