"""CoVe-style verification questions, answered from the evidence alone (docs/SPEC_NOTES.md#verification-depths-and-profiles).

Offline form: the claim's checkable spans (numbers, dates, named entities) become questions by
template ("When …?", "How many …?", "Who/What …?" with the span removed); each question is
answered independently of the draft by extracting the same kind of span from the evidence
sentence that best matches the question's remaining words. The consistency score is the share
of questions whose evidence answer agrees with the claim's span.
"""

from __future__ import annotations

import re
from typing import Any, NotRequired, TypedDict

from audit.pipeline.extraction import split_sentences
from audit.pipeline.methods.base import VerificationMethod, VerifyContext, register
from audit.pipeline.numbers import extract_quantities, values_match
from audit.pipeline.text import STOPWORDS, content_stems, stem
from audit.pipeline.types import ClaimDraft, EvidenceHit, MethodResult

MAX_QUESTIONS = 4
# possessive spaces: a name followed by a long run of spaces is tried once, not once per split of the run
ENTITY_RE = re.compile(r"\b([A-Z][a-zA-Z0-9\-]+(?:\s++(?:(?:of|de|the|and)\s*+)?[A-Z][a-zA-Z0-9\-]+)*)")


class Question(TypedDict):
    """One verification question: the claim with ``span`` blanked, and the kind of span it asks for."""

    question: str
    span: str
    kind: str  # a quantity's kind (``numbers.Quantity.kind``) or "entity"
    value: NotRequired[float]  # the quantity's value (not for an entity)


def questions_for(claim: str) -> list[Question]:
    """[{"question", "span", "kind"}] for the claim's numbers, years and entities."""
    out: list[Question] = []
    for q in extract_quantities(claim):
        if len(out) == MAX_QUESTIONS:
            return out  # a claim of a thousand numbers asks four questions, built once each
        wh = {"year": "When", "percent": "What percentage", "currency": "How much"}.get(q.kind, "How many")
        out.append(
            {
                "question": f"{wh}: {claim.replace(q.raw, '___', 1)}",
                "span": q.raw,
                "kind": q.kind,
                "value": q.value,
            }
        )
    for m in ENTITY_RE.finditer(claim):
        if len(out) == MAX_QUESTIONS:
            break
        if m.group(1).lower() in STOPWORDS:
            continue  # a capitalised function word ("The", "This") is no name
        text = m.group(1)
        if any(text in o["span"] or o["span"] in text for o in out):
            continue
        out.append({"question": f"Who/what: {claim.replace(text, '___', 1)}", "span": text, "kind": "entity"})
    return out[:MAX_QUESTIONS]


def answer_from_evidence(question: Question, claim: str, sentences: list[str]) -> str | None:
    """The span of the question's kind in the best-matching evidence sentence, or None."""
    context = set(content_stems(claim.replace(question["span"], " ")))
    span_stems = set(content_stems(question["span"]))
    best, best_score = None, 0.0
    for s in sentences:
        st = set(content_stems(s))
        score = len(context & st) / (len(context) or 1)
        if score > best_score:
            best, best_score = s, score
    if best is None or best_score < 0.3:
        return None
    if question["kind"] == "entity":
        for m in ENTITY_RE.finditer(best):
            if set(content_stems(m.group(1))) & span_stems:
                return m.group(1)
        ents = [
            m.group(1) for m in ENTITY_RE.finditer(best) if not (set(content_stems(m.group(1))) & context)
        ]
        return ents[0] if ents else None
    same = [q for q in extract_quantities(best) if q.kind == question["kind"]]
    for q in same:
        if q.value == question.get("value"):
            return q.raw
    return same[0].raw if same else None


def agrees(question: Question, answer: str) -> bool:
    if question["kind"] == "entity":
        a, b = {stem(w) for w in content_stems(answer)}, {stem(w) for w in content_stems(question["span"])}
        return bool(a & b)
    qa = extract_quantities(question["span"])
    qb = extract_quantities(answer)
    return bool(qa and qb and values_match(qa[0], qb[0], 0.02, 0.1))


@register
class CoveMethod(VerificationMethod):
    name = "cove"
    display_name = "CoVe verification questions"

    def verify(self, claim: ClaimDraft, hits: list[EvidenceHit], ctx: VerifyContext) -> MethodResult:
        questions = questions_for(claim.text)
        if not questions:
            return MethodResult(
                self.name, ran=False, details={"reason": "nothing to ask (no number, date or name)"}
            )
        sentences = [s for h in hits for s in split_sentences(h.passage.text)]
        answered: list[dict[str, Any]] = []
        for q in questions:
            ans = answer_from_evidence(q, claim.text, sentences)
            answered.append(
                {
                    **{k: v for k, v in q.items() if k != "value"},
                    "evidence_answer": ans,
                    "consistent": bool(ans and agrees(q, ans)),
                }
            )
        consistent = sum(a["consistent"] for a in answered)
        contradicted = sum(1 for a in answered if a["evidence_answer"] and not a["consistent"])
        return MethodResult(
            self.name,
            ran=True,
            score=consistent / len(answered),
            verdict="contradicted" if contradicted and not consistent else None,
            details={"questions": answered},
        )
