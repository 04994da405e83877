"""A small, transparent verifier for the revision tests, and the passages they use.

The revision loop takes any ``verify(text, passages) -> AuditResult``; these tests need one whose
verdicts are obvious from the text, so that each strategy can be checked on a hand-written
answer: a claim is supported when the passage that covers most of its content words covers at
least 90 % of them, weak from 60 %, contradicted when that passage states one of its numbers
differently, not found otherwise.
"""

from __future__ import annotations

import pytest

from audit.pipeline.extraction import extract_claims, split_sentences
from audit.pipeline.numbers import extract_quantities, values_match
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.text import content_stems
from audit.pipeline.types import AuditResult, ClaimVerdict, EvidenceHit, Passage
from tests.llm.conftest import llm_server  # noqa: F401 - the scripted OpenAI-compatible server

SUPPORT, WEAK = 0.9, 0.6


def _overlap(claim: str, text: str) -> float:
    stems = [s for s in content_stems(claim) if not any(ch.isdigit() for ch in s)]
    if not stems:
        return 0.0
    have = set(content_stems(text))
    return sum(1 for s in stems if s in have) / len(stems)


def lexical_verify(text: str, passages: list[Passage], query: str = "") -> AuditResult:
    amap = anchor_map(passages)
    verdicts = []
    for claim in extract_claims(text, query):
        cited = {p.id for a in claim.citations if (p := resolve_anchor(a, amap)) is not None}
        hits = []
        for p in passages:
            sentences = split_sentences(p.text) or [p.text]
            best = max(sentences, key=lambda s: _overlap(claim.text, s))
            score = _overlap(claim.text, p.text)
            hits.append(
                EvidenceHit(
                    passage=p,
                    relevance=score,
                    cited=p.id in cited,
                    similarity=score,
                    entailment=score,
                    best_sentence=best,
                )
            )
        hits.sort(key=lambda h: (-h.entailment, h.passage.id))
        best = hits[0] if hits else None
        cq = extract_quantities(claim.text)
        verdict, conf = "not_found", 0.0
        if best is not None and best.entailment >= WEAK:
            eq = extract_quantities(best.best_sentence)
            clash = [
                q
                for q in cq
                if not any(values_match(q, e, 0.02, 0.1) for e in eq) and any(e.kind == q.kind for e in eq)
            ]
            if clash:
                verdict, conf = "contradicted", 0.02
                best.entailment = 0.05
            elif cq and not all(any(values_match(q, e, 0.02, 0.1) for e in eq) for q in cq):
                verdict, conf = "weak", 0.6
            else:
                conf = best.entailment
                verdict = "supported" if conf >= SUPPORT else "weak"
        label = {"supported": "SUPPORTED", "contradicted": "REFUTED"}.get(verdict, "NEI")
        verdicts.append(
            ClaimVerdict(
                claim=claim,
                label=label,
                verdict=verdict,
                confidence=conf,
                evidence=[h for h in hits if h.entailment > 0],
            )
        )
    return AuditResult(
        query=query,
        answer=text,
        claims=verdicts,
        metrics={},
        audit_score=0.0,
        risk_flags=[],
        warnings=[],
        quality_gates={},
        flagged=False,
        passages=list(passages),
    )


@pytest.fixture
def verify():
    return lexical_verify


@pytest.fixture
def passages():
    return [
        Passage(
            id="p1",
            anchors=("1",),
            text="The annual fee for the Gold card is $150. The fee is charged every January.",
        ),
        Passage(
            id="p2",
            anchors=("2",),
            text="Refunds are processed within 14 business days of the refund request.",
        ),
        Passage(id="p3", anchors=("3",), text="Gold card holders get free airport lounge access worldwide."),
    ]


@pytest.fixture
def llm_client(llm_server):  # noqa: F811 - the fixture imported above
    """An LLMClient pointed at the scripted local server (no retries: failures show at once)."""
    from audit.pipeline.llm import LLMClient, LLMConfig

    return LLMClient(
        LLMConfig(
            base_url=llm_server.base_url, model="test-model", timeout_s=2.0, max_retries=0, concurrency=1
        ),
        sleep=lambda s: None,
    )
