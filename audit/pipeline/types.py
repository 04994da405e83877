"""Dataclasses the verification pipeline takes and returns (plain Python, no Django)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from enum import StrEnum
from typing import Any


class Label(StrEnum):
    """FEVER label of a claim, decided by ``scoring.decide_label``; ``audit.models.Label`` (the
    model's choices) is built from this enum."""

    SUPPORTED = "SUPPORTED"
    REFUTED = "REFUTED"
    NEI = "NEI"


@dataclass
class Passage:
    """A piece of evidence: a KB chunk, a passage sent with the request or a web page part."""

    id: str
    text: str
    title: str = ""
    uri: str = ""
    source_type: str = "context"  # "context" (sent with the request), "kb" or "web"
    published: date | None = None  # published or inferred date, for freshness
    domain: str = ""  # domain tag of the document (freshness policy)
    anchors: tuple[str, ...] = ()  # citation keys that name this passage: "1", "Arxiv", a chunk hash


@dataclass
class ClaimDraft:
    """One atomic claim extracted from an answer (docs/SPEC_NOTES.md#claims)."""

    claim_id: str
    text: str
    span: tuple[int, int]  # character offsets of the source sentence in the answer
    type: str = "fact"  # fact | policy | numeric | definition
    importance: str = "minor"  # critical | material | minor
    citations: tuple[str, ...] = ()  # anchors as written: "1", "cite:abc", "Arxiv"
    sentence: str = ""  # the whole sentence the claim came from

    def as_json(self) -> dict[str, Any]:
        return {"claim_id": self.claim_id, "text": self.text}


@dataclass
class EvidenceHit:
    """A passage retrieved for a claim, with how it was found and how well it matches."""

    passage: Passage
    relevance: float  # retrieval score in [0, 1]
    cited: bool = False  # the claim's citation anchor names this passage
    similarity: float = 0.0  # best cosine of the claim to a sentence of the passage
    entailment: float = 0.0  # P(passage supports the claim), filled by the entailment method
    best_sentence: str = ""


@dataclass
class MethodResult:
    """What one verification method concluded about one claim."""

    method: str
    ran: bool = True
    score: float | None = None  # the method's P(supported) or its own score in [0, 1]
    verdict: str | None = None  # optional vote: "supported" | "contradicted" | "not_found"
    details: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)  # risk flags raised: conflict, outdated_source…


@dataclass
class ClaimVerdict:
    """The claim card content produced by the pipeline for one claim."""

    claim: ClaimDraft
    label: str  # SUPPORTED | REFUTED | NEI
    verdict: str  # supported | weak | contradicted | not_found
    confidence: float  # P(supported by its evidence), whatever the label
    p_refuted: float = 0.0
    evidence: list[EvidenceHit] = field(default_factory=list)
    methods: list[MethodResult] = field(default_factory=list)
    risk_flags: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def method_names(self) -> list[str]:
        return [m.method for m in self.methods if m.ran]


@dataclass
class AuditResult:
    """Everything one audit of one answer produced."""

    query: str
    answer: str
    claims: list[ClaimVerdict]
    metrics: dict[str, Any]  # faithfulness, answer_relevance, context_precision, context_recall, coverage…
    audit_score: float
    risk_flags: list[dict[str, Any]]  # [{"type", "severity", "description", "claim_id"?}]
    warnings: list[dict[str, Any]]
    quality_gates: dict[str, Any]  # gate name -> bool (passed)
    flagged: bool  # needs attention: a gate failed or a claim is below threshold
    methods_not_run: dict[str, Any] = field(default_factory=dict)  # name -> reason (e.g. SelfCheck offline)
    duration_ms: float = 0.0
    passages: list[Passage] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
