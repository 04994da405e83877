"""Typed views of the API's JSON, mirroring the components of ``/api/v1/schema/``.

Each is a frozen dataclass built by ``from_json``: the fields the schema declares, typed, and
``raw``, the JSON object as received. A field the server adds later is kept in ``raw`` and
never breaks parsing; a field it leaves out takes its default (``None``, empty).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

Label = Literal["SUPPORTED", "REFUTED", "NEI"]
Mode = Literal["normal", "audit-local", "audit-web"]

SUPPORTED: Label = "SUPPORTED"


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Evidence:
    """A claim card's evidence item (``EvidenceCard``)."""

    source_type: str
    source_id: str
    title: str = ""
    uri: str = ""
    snippet: str = ""
    hash: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        return cls(
            source_type=str(data.get("source_type", "")),
            source_id=str(data.get("source_id", "")),
            title=str(data.get("title") or ""),
            uri=str(data.get("uri") or ""),
            snippet=str(data.get("snippet") or ""),
            hash=str(data.get("hash") or ""),
            raw=data,
        )


@dataclass(frozen=True)
class Escalation:
    """An entry of a card's or an answer's escalation log (``EscalationRef``)."""

    type: str
    ticket: str = ""
    tier: int | None = None
    status: str = ""
    due_at: str | None = None
    reasons: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Escalation:
        tier = data.get("tier")
        return cls(
            type=str(data.get("type", "")),
            ticket=str(data.get("ticket") or ""),
            tier=tier if isinstance(tier, int) else None,
            status=str(data.get("status") or ""),
            due_at=data.get("due_at"),
            reasons=[str(r) for r in _list(data.get("reasons"))],
            raw=data,
        )


@dataclass(frozen=True)
class ClaimCard:
    """One atomic claim and its verdict (``ClaimCard`` of docs/API.md). ``label`` and ``confidence`` are
    the verdict on the claim as the front end sent it; ``revision`` the fix shown beside it."""

    claim_id: str
    answer_id: str
    text: str
    label: Label | None
    confidence: float | None
    mode: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    verification_methods: list[str] = field(default_factory=list)
    metrics: dict[str, float | None] = field(default_factory=dict)
    escalations: list[Escalation] = field(default_factory=list)
    revision: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def supported(self) -> bool:
        return self.label == SUPPORTED

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimCard:
        label = data.get("label")
        return cls(
            claim_id=str(data.get("claim_id", "")),
            answer_id=str(data.get("answer_id", "")),
            text=str(data.get("text") or ""),
            label=label if label in ("SUPPORTED", "REFUTED", "NEI") else None,
            confidence=_float(data.get("confidence")),
            mode=str(data.get("mode") or ""),
            evidence=[Evidence.from_json(e) for e in _list(data.get("evidence")) if isinstance(e, dict)],
            verification_methods=[str(m) for m in _list(data.get("verification_methods"))],
            metrics={str(k): _float(v) for k, v in _dict(data.get("metrics")).items()},
            escalations=[
                Escalation.from_json(e) for e in _list(data.get("escalations")) if isinstance(e, dict)
            ],
            revision=data.get("revision") if isinstance(data.get("revision"), dict) else None,
            raw=data,
        )


@dataclass(frozen=True)
class AuditMetrics:
    """The answer-level audit block (``AuditMetrics``); ``None`` on an unverified (Normal) answer."""

    run_id: int | None
    audit_score: float | None = None
    faithfulness: float | None = None
    answer_relevance: float | None = None
    context_precision: float | None = None
    context_recall: float | None = None
    coverage: float | None = None
    unsupported_rate: float | None = None
    deep_checks: dict[str, Any] = field(default_factory=dict)
    warnings: list[Any] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditMetrics:
        run_id = data.get("run_id")
        return cls(
            run_id=run_id if isinstance(run_id, int) else None,
            audit_score=_float(data.get("audit_score")),
            faithfulness=_float(data.get("faithfulness")),
            answer_relevance=_float(data.get("answer_relevance")),
            context_precision=_float(data.get("context_precision")),
            context_recall=_float(data.get("context_recall")),
            coverage=_float(data.get("coverage")),
            unsupported_rate=_float(data.get("unsupported_rate")),
            deep_checks=_dict(data.get("deep_checks")),
            warnings=_list(data.get("warnings")),
            raw=data,
        )


@dataclass(frozen=True)
class AuditResult:
    """An audited answer (``Answer``; the ``POST /audits`` response adds ``original_answer``,
    ``mode_decision``, ``web`` and, for a JSON answer, ``structured``: all in ``raw``). ``job`` is
    the id of the server's job when the audit ran on its task queue (the request answered 202)."""

    answer_id: str
    mode: str
    query: str
    answer: str
    claims: list[ClaimCard]
    audit: AuditMetrics | None
    escalations: list[Escalation] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    replayed: bool = False
    job: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(
        cls, data: dict[str, Any], *, replayed: bool = False, job: int | None = None
    ) -> AuditResult:
        audit = data.get("audit")
        return cls(
            answer_id=str(data.get("answer_id", "")),
            mode=str(data.get("mode") or ""),
            query=str(data.get("query") or ""),
            answer=str(data.get("answer") or ""),
            claims=[ClaimCard.from_json(c) for c in _list(data.get("claims")) if isinstance(c, dict)],
            audit=AuditMetrics.from_json(audit) if isinstance(audit, dict) else None,
            escalations=[
                Escalation.from_json(e) for e in _list(data.get("escalations")) if isinstance(e, dict)
            ],
            citations=[c for c in _list(data.get("citations")) if isinstance(c, dict)],
            replayed=replayed,
            job=job,
            raw=data,
        )

    @property
    def verified(self) -> bool:
        """Whether the claims were verified (False for an answer stored in Normal mode)."""
        return self.audit is not None

    @property
    def faithfulness(self) -> float | None:
        return self.audit.faithfulness if self.audit else None

    @property
    def unsupported(self) -> list[ClaimCard]:
        """The claims not SUPPORTED (REFUTED or NEI) of a verified answer."""
        return [c for c in self.claims if self.verified and not c.supported]

    @property
    def deep_check_status(self) -> str:
        """``queued`` / ``running`` / ``done`` / ``failed`` of an asynchronous deep check; ``""`` when none."""
        return str(self.audit.deep_checks.get("status") or "") if self.audit else ""

    def verdict(self) -> dict[str, Any]:
        """A small JSON-ready summary, what the LangChain and LlamaIndex hooks attach to an answer."""
        return {
            "answer_id": self.answer_id,
            "mode": self.mode,
            "verified": self.verified,
            "faithfulness": self.faithfulness,
            "unsupported_rate": self.audit.unsupported_rate if self.audit else None,
            "audit_score": self.audit.audit_score if self.audit else None,
            "claims": [
                {"claim_id": c.claim_id, "text": c.text, "label": c.label, "confidence": c.confidence}
                for c in self.claims
            ],
            "escalations": [e.ticket for e in self.escalations if e.ticket],
        }


@dataclass(frozen=True)
class Run:
    """A verification run (``Run``), where an asynchronous deep check shows its progress."""

    id: int
    answer_id: str
    kind: str
    status: str
    mode: str = ""
    faithfulness: float | None = None
    unsupported_rate: float | None = None
    deep_checks: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def deep_check_status(self) -> str:
        return str(self.deep_checks.get("status") or "")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Run:
        return cls(
            id=int(data.get("id", 0)),
            answer_id=str(data.get("answer_id", "")),
            kind=str(data.get("kind") or ""),
            status=str(data.get("status") or ""),
            mode=str(data.get("mode") or ""),
            faithfulness=_float(data.get("faithfulness")),
            unsupported_rate=_float(data.get("unsupported_rate")),
            deep_checks=_dict(data.get("deep_checks")),
            raw=data,
        )


@dataclass(frozen=True)
class Job:
    """A job the server queued (``GET /jobs/<id>``): an audit over the server's inline cost budget
    (``POST /audits`` answered 202) or a document upload's ingestion. ``status`` is ``queued``,
    ``running``, ``done`` or ``failed``; a finished audit names its ``answer``; a failed job carries
    the ``error`` and the status (``error_status``) the request would have had inline."""

    id: int
    kind: str
    status: str
    url: str
    progress: dict[str, Any] = field(default_factory=dict)
    answer: str | None = None
    error: str | None = None
    error_status: int | None = None
    result: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Job:
        error_status = data.get("error_status")
        return cls(
            id=int(data.get("job", 0)),
            kind=str(data.get("kind") or ""),
            status=str(data.get("status") or ""),
            url=str(data.get("url") or ""),
            progress=_dict(data.get("progress")),
            answer=data.get("answer") if isinstance(data.get("answer"), str) else None,
            error=str(data["error"]) if data.get("error") else None,
            error_status=error_status if isinstance(error_status, int) else None,
            result=_dict(data.get("result")),
            raw=data,
        )


@dataclass(frozen=True)
class Case:
    """A human-review case of the escalation queue (``CaseOutput``; the detail adds its events)."""

    ticket: str
    tier: int
    status: str
    sla_state: str = ""
    owner: str = ""
    domain: str = ""
    summary: str = ""
    due_at: str | None = None
    version: int = 0
    claim: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Case:
        return cls(
            ticket=str(data.get("ticket", "")),
            tier=int(data.get("tier") or 0),
            status=str(data.get("status") or ""),
            sla_state=str(data.get("sla_state") or ""),
            owner=str(data.get("owner") or ""),
            domain=str(data.get("domain") or ""),
            summary=str(data.get("summary") or ""),
            due_at=data.get("due_at"),
            version=int(data.get("version") or 0),
            claim=_dict(data.get("claim")),
            raw=data,
        )


T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a paginated list: ``count`` over all pages, ``next`` the URL of the next one."""

    count: int
    results: list[T]
    next: str | None = None
    previous: str | None = None

    def __iter__(self) -> Iterator[T]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)
