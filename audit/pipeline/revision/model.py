"""The revision's records (options, edits, attempts, outcome), its strategy and warning codes, and the claim ledger
(docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score) the loop compares attempts by."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from audit.constants import (
    CITATION_ONLY_STRATEGIES,
    DEFAULT_SOFTENING_STYLE,
    DEFAULT_UNSUPPORTED_ACTION,
    IMPORTANCE_CRITICAL,
    IMPORTANCE_MINOR,
    SOFTENING_STYLES,
    UNSUPPORTED_ACTIONS,
)
from audit.pipeline import scoring
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.text import content_stems
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, Passage

SUPPORTED, WEAK, CONTRADICTED, NOT_FOUND = "supported", "weak", "contradicted", "not_found"
COVERED = (SUPPORTED, WEAK)


class Strategy(StrEnum):
    REMOVE = (
        "remove"  # claim nothing supports, taken out (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    )
    QUALIFY = "qualify"  # claim nothing supports, kept with a "not found" qualifier (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    CORRECT = "correct"  # contradicted claim corrected to match the evidence (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    SOFTEN = (
        "soften"  # unverified (weak) fact softened (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    )
    CITATION = "citation"  # citation correction (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    CORRECTIVE_RETRIEVAL = "corrective_retrieval"  # citation to a passage found by corrective retrieval (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)


class CitationAction(StrEnum):
    REPLACE = "REPLACE"
    REMOVE = "REMOVE"
    ADD_ALTERNATE = "ADD_ALTERNATE"


class RevisionWarning(StrEnum):
    NO_IMPROVEMENT = "NO_IMPROVEMENT"
    UNSUPPORTED_CLAIMS = "UNSUPPORTED_CLAIMS"


Verify = Callable[[str, list[Passage]], AuditResult]
# reverify(text, pool, reuse) -> AuditResult: ``verify`` where a claim ``reuse(draft)`` answers keeps that verdict
Reverify = Callable[[str, list[Passage], Callable[[ClaimDraft], ClaimVerdict | None]], AuditResult]
Retrieve = Callable[[list[str]], list[Passage]]
# rewriter(query=, answer=, instructions=[dict], passages=[Passage]) -> revised answer text
Rewriter = Callable[..., str]
# judge(claim text, passage) -> the verdict of the judge that labels claims, on that one passage (None: no
# verdict, which supports nothing)
Judge = Callable[[str, Passage], ClaimVerdict | None]


@dataclass(frozen=True)
class RevisionOptions:
    """How to revise; the defaults follow the seeds."""

    softening: str = DEFAULT_SOFTENING_STYLE  # hedge | qualify | parenthetical
    unsupported_action: str = DEFAULT_UNSUPPORTED_ACTION  # remove | qualify
    correct_contradictions: bool = True
    correct_citations: bool = True
    corrective_retrieval: bool = True
    citations_only: bool = False  # only citation correction (the claims are settled; the markers are checked)

    def __post_init__(self) -> None:
        if self.softening not in SOFTENING_STYLES:
            raise ValueError(f"softening must be one of {', '.join(SOFTENING_STYLES)}")
        if self.unsupported_action not in UNSUPPORTED_ACTIONS:
            raise ValueError(f"unsupported_action must be one of {', '.join(UNSUPPORTED_ACTIONS)}")


@dataclass
class Edit:
    """One change to the answer, traceable to the claim and the strategy that caused it.

    ``span`` is where the change applies in the text of the attempt it was planned from;
    ``before``/``after`` are that region's text before and after this edit (edits of one
    sentence chain: the next edit's ``before`` is this one's ``after``).
    """

    claim_id: str
    claim_text: str
    strategy: str
    span: tuple[int, int]
    before: str
    after: str
    reason: str
    action: str = ""  # CitationAction for citation edits, "remove_sentence"/"remove_clause"/… otherwise
    passage_id: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class RevisionDecision:
    should_revise: bool
    reason: str
    instructions: list[dict[str, Any]] = field(
        default_factory=list
    )  # one per claim: claim_id, strategy, instruction


@dataclass
class RevisionAttempt:
    number: int  # 0 = the answer as received
    text: str
    result: AuditResult
    edits: list[Edit] = field(
        default_factory=list
    )  # the edits that turned the previous attempt into this one
    author: str = "original"  # original | offline | llm
    retrieval: list[dict[str, Any]] = field(default_factory=list)  # corrective retrieval run on this attempt
    decision: RevisionDecision | None = None
    notes: list[str] = field(default_factory=list)
    before_retrieval: dict[str, Any] | None = (
        None  # the summary before corrective retrieval re-verified this text
    )

    @property
    def summary(self) -> dict[str, Any]:
        return ledger_summary(self.result.claims)

    def as_json(self) -> dict[str, Any]:
        return {
            "attempt": self.number,
            "author": self.author,
            "text": self.text,
            "summary": self.summary,
            "ledger": claim_ledger(self.result.claims),
            "edits": [asdict(e) | {"span": list(e.span)} for e in self.edits],
            "retrieval": self.retrieval,
            "decision": asdict(self.decision) if self.decision else None,
            "notes": self.notes,
            "before_retrieval": self.before_retrieval,
        }


@dataclass
class RevisionOutcome:
    original_text: str
    final_text: str
    final: AuditResult
    attempts: list[RevisionAttempt]
    kept: int  # number of the attempt returned
    warnings: list[dict[str, Any]]
    stop_reason: str
    passages: list[Passage]  # the pool at the end, with passages found by corrective retrieval
    given: int = 0  # how many of ``passages`` were given (the request's); the others are cited as [n]
    # each revised sentence of the kept text judged whole ("start:end" -> judgement; revision.whole)
    sentences: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def revised(self) -> bool:
        return self.final_text != self.attempts[0].text

    @property
    def edits(self) -> list[Edit]:
        """The edits that lead from the original to the kept attempt."""
        return [e for a in self.attempts[1 : self.kept + 1] for e in a.edits]

    @property
    def citations_only(self) -> bool:
        """Whether the kept revision changes only citations (every edit a citation edit)."""
        edits = self.edits
        return bool(edits) and all(e.strategy in CITATION_ONLY_STRATEGIES for e in edits)

    def history_json(self) -> list[dict[str, Any]]:
        rows = [a.as_json() for a in self.attempts]
        for row in rows:
            row["kept"] = row["attempt"] == self.kept
        return rows

    def revised_claims(self) -> dict[str, tuple[list[Edit], ClaimVerdict | None]]:
        """{claim id as received: (the kept edits that touched it, its verdict in the kept text or None
        when removed)}, for the claims some kept edit touched."""
        current: dict[str, ClaimVerdict | None] = {
            c.claim.claim_id: c for c in self.attempts[0].result.claims
        }
        touched: dict[str, list[Edit]] = {cid: [] for cid in current}
        for attempt in self.attempts[1 : self.kept + 1]:
            previous = self.attempts[attempt.number - 1].result.claims
            moved = _follow_claims(previous, attempt.result.claims, attempt.edits)
            for cid, verdict in list(current.items()):
                if verdict is None:
                    continue
                mine = verdict.claim.claim_id
                touched[cid] += [
                    e for e in attempt.edits if e.claim_id == mine or mine in e.details.get("claims", [])
                ]
                current[cid] = moved.get(mine)
        return {cid: (edits, current[cid]) for cid, edits in touched.items() if edits}

    def claim_revisions(self) -> dict[str, dict[str, Any]]:
        """The remediation of each claim of the answer as received: {original claim_id: revision}.

        A revision is ``{"strategy", "text", "label", "confidence", "passage_id", "edits"}``:
        ``passage_id`` is always a passage the returned text cites for the claim ("" when none), so the
        card, the edit history and the returned text agree on its citation; the
        claim's wording in the kept attempt (``""`` when removed) and the verdict of the pipeline on
        it there (``None`` when removed). Claims no kept edit touched are absent. When the sentence
        holding the new wording was judged whole (``sentences``), ``sentence`` is that judgement and
        ``label``/``confidence`` are the weaker of the claim's and the sentence's, so an edit that
        fixed one detail and left another wrong is never shown as SUPPORTED.
        """
        out: dict[str, dict[str, Any]] = {}
        amap = anchor_map(self.passages)
        for cid, (edits, final) in self.revised_claims().items():
            substantive = [e for e in edits if e.action != "revert"] or edits
            last = max(reversed(substantive), key=lambda e: _STRATEGY_RANK.get(e.strategy, 0))
            passage = next((e.passage_id for e in reversed(edits) if e.passage_id), "")
            # the card names only a passage the returned text still cites: one a later edit of the
            # history removed (a marker dropped at the final citation check) is not the claim's source
            named = (
                [p.id for a in final.claim.citations if (p := resolve_anchor(a, amap)) is not None]
                if final is not None
                else []
            )
            if passage not in named:
                passage = ""
            if final is not None and not passage and final.label == "SUPPORTED" and named:
                hits = [h for h in final.evidence if h.passage.id in named]
                passage = max(hits, key=lambda h: h.entailment).passage.id if hits else named[0]
            cited = bool(passage)
            sentence = self.sentences.get(span_key(final.claim.span)) if final is not None else None
            label, confidence = (final.label, float(final.confidence)) if final else (None, None)
            # a judged sentence implies a kept claim (``final``): label and confidence are set
            if sentence and label is not None and _LABEL_STRENGTH[sentence["label"]] < _LABEL_STRENGTH[label]:
                label = sentence["label"]
            if sentence and confidence is not None:
                confidence = min(confidence, sentence["confidence"])
            out[cid] = {
                "strategy": last.strategy,
                "action": last.action,
                "text": final.claim.text if final else "",
                "label": label,
                "confidence": round(confidence, 4) if final and confidence is not None else None,
                "passage_id": passage,
                "cited": cited,
                "edits": len(edits),
                "replaced": [
                    r["from"]
                    for e in edits
                    if e.strategy == Strategy.CORRECT
                    for r in e.details.get("replaced", [])
                ],
            }
            if sentence:
                out[cid]["sentence"] = sentence
        return out

    def ledger_json(self) -> list[dict[str, Any]]:
        """Every edit from the original to the kept text, with the attempt that made it."""
        return [
            asdict(e) | {"span": list(e.span), "attempt": a.number}
            for a in self.attempts[1 : self.kept + 1]
            for e in a.edits
        ]


# REFUTED < NEI < SUPPORTED: the weaker of two labels is the one with the lower strength
_LABEL_STRENGTH = {"REFUTED": 0, "NEI": 1, "SUPPORTED": 2}


def span_key(span: Sequence[int]) -> str:
    """The key of a sentence span in ``RevisionOutcome.sentences`` ("start:end")."""
    return f"{span[0]}:{span[1]}"


# the strategy a claim's revision is named after when several edits touched it
_STRATEGY_RANK = {
    "correct": 5,
    "remove": 4,
    "qualify": 3,
    "soften": 2,
    "corrective_retrieval": 1,
    "citation": 1,
}


def _follow_claims(
    before: list[ClaimVerdict], after: list[ClaimVerdict], edits: list[Edit]
) -> dict[str, ClaimVerdict]:
    """Claim id in the text the edits were planned on -> the claim it became in the next text
    (absent when its sentence was removed). Sentences are followed through the edit spans."""
    chains: dict[tuple[int, int], list[Edit]] = {}
    for e in edits:
        chains.setdefault((e.span[0], e.span[1]), []).append(e)
    ordered = sorted(chains.items())
    sentences: dict[tuple[int, int], list[ClaimVerdict]] = {}
    for c in before:
        sentences.setdefault((c.claim.span[0], c.claim.span[1]), []).append(c)
    out: dict[str, ClaimVerdict] = {}
    for (sa, sb), olds in sentences.items():
        shift, region, removed = 0, None, False
        for (a, b), chain in ordered:
            if b <= sa:  # before the sentence: it moves
                shift += len(chain[-1].after) - (b - a)
                continue
            if a >= sb:
                break
            if any(e.action in ("remove_sentence", "no_answer_notice") for e in chain):
                removed = True
            else:
                region = (a + shift, a + shift + len(chain[-1].after))
            break
        if removed:
            continue
        if region is None:
            region = (sa + shift, sb + shift)
        news = [c for c in after if region[0] <= c.claim.span[0] and c.claim.span[1] <= region[1] + 1]
        if len(news) == len(olds):
            out.update({o.claim.claim_id: n for o, n in zip(olds, news)})
            continue
        for o in olds:
            best = max(news, key=lambda n: _overlap(o.claim.text, n.claim.text), default=None)
            if best is not None and _overlap(o.claim.text, best.claim.text) >= 0.5:
                out[o.claim.claim_id] = best
    return out


# --- ledger metrics (docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score) ---
def ledger_summary(claims: list[ClaimVerdict]) -> dict[str, Any]:
    """Evidence coverage, unsupported rate (docs/SPEC_NOTES.md#answer-metrics-and-the-audit-score) and the counts the revision decision needs."""
    material = [c for c in claims if c.claim.importance != IMPORTANCE_MINOR]
    counts = {v: sum(1 for c in claims if c.verdict == v) for v in (SUPPORTED, WEAK, CONTRADICTED, NOT_FOUND)}
    return {
        "claims": len(claims),
        "material": len(material),
        "coverage": round(scoring.coverage(claims), 4),
        "unsupported_rate": round(scoring.unsupported_rate(claims), 4),
        "unsupported_material": sum(1 for c in material if c.verdict == NOT_FOUND),
        "critical_unsupported": sum(
            1 for c in claims if c.claim.importance == IMPORTANCE_CRITICAL and c.verdict == NOT_FOUND
        ),
        "contradicted": counts[CONTRADICTED],
        "verdicts": counts,
    }


def quality_key(summary: dict[str, Any]) -> tuple[float, float, int, int]:
    """Order attempts: higher coverage, then fewer unsupported, contradicted, critical unsupported."""
    return (
        summary["coverage"],
        -summary["unsupported_rate"],
        -summary["contradicted"],
        -summary["critical_unsupported"],
    )


def claim_ledger(claims: list[ClaimVerdict]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for c in claims:
        best = _best_hit(c)
        rows.append(
            {
                "claim_id": c.claim.claim_id,
                "text": c.claim.text,
                "span": list(c.claim.span),
                "importance": c.claim.importance,
                "type": c.claim.type,
                "verdict": c.verdict,
                "label": c.label,
                "confidence": round(float(c.confidence), 4),
                "citations": list(c.claim.citations),
                "best_passage": best.passage.id if best else "",
            }
        )
    return rows


def _hits_sorted(c: ClaimVerdict) -> list[EvidenceHit]:
    return sorted(c.evidence, key=lambda h: (h.entailment, h.relevance, h.similarity), reverse=True)


def _best_hit(c: ClaimVerdict) -> EvidenceHit | None:
    hits = _hits_sorted(c)
    return hits[0] if hits else None


def _overlap(claim_text: str, other: str) -> float:
    a = set(content_stems(claim_text))
    return len(a & set(content_stems(other))) / len(a) if a else 0.0
