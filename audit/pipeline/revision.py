"""Answer revision: repair what the audit found, then say clearly what could not be repaired.

Plain Python (no Django). Seed 000 §6 (revision loop), seed 003 stage 5 (citation correction,
CiteFix) and stage 7c (softening), seed 002 (corrective retrieval).

The loop (``revise_answer``) works on any verifier: ``verify(text, passages) -> AuditResult``
(the pipeline's audit entry point) and optionally ``retrieve(queries) -> list[Passage]`` (the
knowledge-base index or the web) and ``rewriter(...) -> str`` (the LLM's ``rewrite_answer``).

1. ``decide_revision`` — stop when the quality gates hold (evidence coverage ≥ 85 %, no
   contradiction, no critical claim without evidence, unsupported rate ≤ 5 %: seed 000 §6.1
   and §7.3) or after ``max_revisions`` revisions; otherwise one instruction per claim.
2. Corrective retrieval — targeted queries for the claims nothing supports; new passages join
   the pool and the same text is verified again before any edit is planned.
3. ``plan_revision`` — deterministic rewriting of the claim sentences (offline), or the LLM
   rewrite when one is configured and its output is traceable (every changed region lies in a
   sentence it was told to change and every citation marker names a passage); otherwise the
   offline edits. Strategies, per sentence:
   - contradicted claim: CORRECT only the contradicted span (a value, unit, date, entity,
     predicate or polarity) with what one evidence sentence states, when the rest of the claim
     aligns with that sentence and the corrected claim is SUPPORTED by that passage under the
     judge that labels claims; never another sentence in its place; else remove or mark it disputed;
   - claim nothing supports: REMOVE (the sentence or its clause) or QUALIFY ("not found in
     the provided documents"); a sentence that also states a supported fact is never removed;
   - weak claim: SOFTEN (hedge / qualify / parenthetical, configurable); a hedge that cost a
     claim its support is taken back in the next attempt and not tried again;
   - a claim any attempt found supported or weak is never removed later;
   - citation correction: REPLACE a marker whose passage does not support the claim with the
     better passage, ADD_ALTERNATE the better passage next to it, REMOVE a marker that names
     no passage or supports nothing in its sentence — "supports" meaning one decision: the judge
     says SUPPORTED on that passage (``_Support``).
4. ``terminate`` — NO_IMPROVEMENT when the revisions did not improve on the original (the
   better version is kept), UNSUPPORTED_CLAIMS for material claims still without evidence.

Every edit names the claim (id and text, in the attempt it was planned from) and the strategy
that caused it; ``RevisionOutcome.history_json()`` is what the run stores.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum

from audit.constants import (CITATION_REPLACE_MARGIN, CORRECTION_MIN_ALIGNMENT, CORRECTIVE_PASSAGES_PER_QUERY,
                             CORRECTIVE_QUERIES_PER_CLAIM, DEFAULT_SOFTENING_STYLE, DEFAULT_UNSUPPORTED_ACTION,
                             IMPORTANCE_CRITICAL, IMPORTANCE_MINOR, NO_ANSWER_NOTICE, SOFTENING_HEDGE,
                             SOFTENING_PARENTHETICAL, SOFTENING_QUALIFY, SOFTENING_STYLES,
                             UNSUPPORTED_ACTIONS, UNSUPPORTED_QUALIFIER, Thresholds)
from audit.pipeline.extraction import _SPLIT_RE as CLAUSE_SPLIT_RE
from audit.pipeline.extraction import CITATION_RE, citation_anchors, decompose
from audit.pipeline import scoring
from audit.pipeline.numbers import Quantity, extract_quantities, values_match
from audit.pipeline.retrieval import anchor_map, resolve_anchor
from audit.pipeline.text import STOPWORDS, content_stems, normalize
from audit.pipeline.types import AuditResult, ClaimDraft, ClaimVerdict, EvidenceHit, Passage

SUPPORTED, WEAK, CONTRADICTED, NOT_FOUND = "supported", "weak", "contradicted", "not_found"
COVERED = (SUPPORTED, WEAK)


class Strategy(StrEnum):
    REMOVE = "remove"  # claim nothing supports, taken out (seed 000 §6.2)
    QUALIFY = "qualify"  # claim nothing supports, kept with a "not found" qualifier (seed 000 §6.2)
    CORRECT = "correct"  # contradicted claim corrected to match the evidence (seed 000 §6.2)
    SOFTEN = "soften"  # unverified (weak) fact softened (seed 003 stage 7c)
    CITATION = "citation"  # citation correction (seed 003 stage 5)
    CORRECTIVE_RETRIEVAL = "corrective_retrieval"  # citation to a passage found by corrective retrieval (seed 002)


class CitationAction(StrEnum):
    REPLACE = "REPLACE"
    REMOVE = "REMOVE"
    ADD_ALTERNATE = "ADD_ALTERNATE"


class Warning(StrEnum):  # noqa: A001 - the seed's name for these codes
    NO_IMPROVEMENT = "NO_IMPROVEMENT"
    UNSUPPORTED_CLAIMS = "UNSUPPORTED_CLAIMS"


Verify = Callable[[str, list[Passage]], AuditResult]
# reverify(text, pool, reuse) -> AuditResult: ``verify`` where a claim ``reuse(draft)`` answers keeps that verdict
Reverify = Callable[[str, list[Passage], Callable[[ClaimDraft], ClaimVerdict | None]], AuditResult]
Retrieve = Callable[[list[str]], list[Passage]]
# rewriter(query=, answer=, instructions=[dict], passages=[Passage]) -> revised answer text
Rewriter = Callable[..., str]
# judge(claim text, passage) -> the verdict of the judge that labels claims, on that one passage
Judge = Callable[[str, Passage], ClaimVerdict]


@dataclass(frozen=True)
class RevisionOptions:
    """How to revise; the defaults follow the seeds."""

    softening: str = DEFAULT_SOFTENING_STYLE  # hedge | qualify | parenthetical
    unsupported_action: str = DEFAULT_UNSUPPORTED_ACTION  # remove | qualify
    correct_contradictions: bool = True
    correct_citations: bool = True
    corrective_retrieval: bool = True
    citations_only: bool = False  # only citation correction (after corrective retrieval settled the rest)

    def __post_init__(self):
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
    details: dict = field(default_factory=dict)


@dataclass
class RevisionDecision:
    should_revise: bool
    reason: str
    instructions: list[dict] = field(default_factory=list)  # one per claim: claim_id, strategy, instruction


@dataclass
class RevisionAttempt:
    number: int  # 0 = the answer as received
    text: str
    result: AuditResult
    edits: list[Edit] = field(default_factory=list)  # the edits that turned the previous attempt into this one
    author: str = "original"  # original | offline | llm
    retrieval: list[dict] = field(default_factory=list)  # corrective retrieval run on this attempt
    decision: RevisionDecision | None = None
    notes: list[str] = field(default_factory=list)
    before_retrieval: dict | None = None  # the summary before corrective retrieval re-verified this text

    @property
    def summary(self) -> dict:
        return ledger_summary(self.result.claims)

    def as_json(self) -> dict:
        return {
            "attempt": self.number, "author": self.author, "text": self.text, "summary": self.summary,
            "ledger": claim_ledger(self.result.claims),
            "edits": [asdict(e) | {"span": list(e.span)} for e in self.edits],
            "retrieval": self.retrieval,
            "decision": asdict(self.decision) if self.decision else None,
            "notes": self.notes, "before_retrieval": self.before_retrieval,
        }


@dataclass
class RevisionOutcome:
    original_text: str
    final_text: str
    final: AuditResult
    attempts: list[RevisionAttempt]
    kept: int  # number of the attempt returned
    warnings: list[dict]
    stop_reason: str
    passages: list[Passage]  # the pool at the end, with passages found by corrective retrieval
    given: int = 0  # how many of ``passages`` were given (the request's); the others are cited as [n]

    @property
    def revised(self) -> bool:
        return self.final_text != self.attempts[0].text

    @property
    def edits(self) -> list[Edit]:
        """The edits that lead from the original to the kept attempt."""
        return [e for a in self.attempts[1: self.kept + 1] for e in a.edits]

    def history_json(self) -> list[dict]:
        rows = [a.as_json() for a in self.attempts]
        for row in rows:
            row["kept"] = row["attempt"] == self.kept
        return rows

    def claim_revisions(self) -> dict[str, dict]:
        """The remediation of each claim of the answer as received: {original claim_id: revision}.

        A revision is ``{"strategy", "text", "label", "confidence", "passage_id", "edits"}``: the
        claim's wording in the kept attempt (``""`` when removed) and the verdict of the pipeline on
        it there (``None`` when removed). Claims no kept edit touched are absent.
        """
        current = {c.claim.claim_id: c for c in self.attempts[0].result.claims}
        touched: dict[str, list[Edit]] = {cid: [] for cid in current}
        for attempt in self.attempts[1: self.kept + 1]:
            previous = self.attempts[attempt.number - 1].result.claims
            moved = _follow_claims(previous, attempt.result.claims, attempt.edits)
            for cid, verdict in list(current.items()):
                if verdict is None:
                    continue
                mine = verdict.claim.claim_id
                touched[cid] += [e for e in attempt.edits if e.claim_id == mine or mine in e.details.get("claims", [])]
                current[cid] = moved.get(mine)
        out = {}
        amap = anchor_map(self.passages)
        for cid, edits in touched.items():
            if not edits:
                continue
            final = current[cid]
            substantive = [e for e in edits if e.action != "revert"] or edits
            last = max(reversed(substantive), key=lambda e: _STRATEGY_RANK.get(e.strategy, 0))
            passage = next((e.passage_id for e in reversed(edits) if e.passage_id), "")
            # the passage the revision itself cited (a correction, a marker) and the returned text still names
            cited = bool(passage) and final is not None and passage in {
                p.id for a in final.claim.citations if (p := resolve_anchor(a, amap)) is not None}
            if final is not None and not passage and final.label == "SUPPORTED" and final.evidence:
                passage = _best_hit(final).passage.id
            out[cid] = {
                "strategy": last.strategy, "action": last.action, "text": final.claim.text if final else "",
                "label": final.label if final else None,
                "confidence": round(float(final.confidence), 4) if final else None,
                "passage_id": passage, "cited": cited, "edits": len(edits),
                "replaced": [r["from"] for e in edits if e.strategy == Strategy.CORRECT
                             for r in e.details.get("replaced", [])],
            }
        return out

    def ledger_json(self) -> list[dict]:
        """Every edit from the original to the kept text, with the attempt that made it."""
        return [asdict(e) | {"span": list(e.span), "attempt": a.number}
                for a in self.attempts[1: self.kept + 1] for e in a.edits]


# the strategy a claim's revision is named after when several edits touched it
_STRATEGY_RANK = {"correct": 5, "remove": 4, "qualify": 3, "soften": 2, "corrective_retrieval": 1, "citation": 1}


def _follow_claims(before: list[ClaimVerdict], after: list[ClaimVerdict], edits: list[Edit]) -> dict[str, ClaimVerdict]:
    """Claim id in the text the edits were planned on -> the claim it became in the next text
    (absent when its sentence was removed). Sentences are followed through the edit spans."""
    chains: dict[tuple[int, int], list[Edit]] = {}
    for e in edits:
        chains.setdefault(tuple(e.span), []).append(e)
    ordered = sorted(chains.items())
    sentences: dict[tuple[int, int], list[ClaimVerdict]] = {}
    for c in before:
        sentences.setdefault(tuple(c.claim.span), []).append(c)
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


# --- ledger metrics (seed 000 §7) ----------------------------------------------------------
def ledger_summary(claims: list[ClaimVerdict]) -> dict:
    """Evidence coverage, unsupported rate (seed 000 §7) and the counts the revision decision needs."""
    material = [c for c in claims if c.claim.importance != IMPORTANCE_MINOR]
    counts = {v: sum(1 for c in claims if c.verdict == v) for v in (SUPPORTED, WEAK, CONTRADICTED, NOT_FOUND)}
    return {
        "claims": len(claims), "material": len(material),
        "coverage": round(scoring.coverage(claims), 4),
        "unsupported_rate": round(scoring.unsupported_rate(claims), 4),
        "unsupported_material": sum(1 for c in material if c.verdict == NOT_FOUND),
        "critical_unsupported": sum(1 for c in claims if c.claim.importance == IMPORTANCE_CRITICAL
                                    and c.verdict == NOT_FOUND),
        "contradicted": counts[CONTRADICTED], "verdicts": counts,
    }


def quality_key(summary: dict) -> tuple:
    """Order attempts: higher coverage, then fewer unsupported, contradicted, critical unsupported."""
    return (summary["coverage"], -summary["unsupported_rate"], -summary["contradicted"],
            -summary["critical_unsupported"])


def claim_ledger(claims: list[ClaimVerdict]) -> list[dict]:
    rows = []
    for c in claims:
        best = _best_hit(c)
        rows.append({
            "claim_id": c.claim.claim_id, "text": c.claim.text, "span": list(c.claim.span),
            "importance": c.claim.importance, "type": c.claim.type, "verdict": c.verdict, "label": c.label,
            "confidence": round(float(c.confidence), 4), "citations": list(c.claim.citations),
            "best_passage": best.passage.id if best else "",
        })
    return rows


# --- 1. revision decision (seed 000 §6.1, gates of §7.3) -----------------------------------
def decide_revision(claims: list[ClaimVerdict], revision_count: int, thresholds: Thresholds = Thresholds(),
                    options: RevisionOptions = RevisionOptions()) -> RevisionDecision:
    """Whether to revise again, why, and one instruction per claim that needs work.

    Seed 000 §6.1 stops at coverage ≥ 85 %; §7.3 adds gates that coverage alone can hide (a
    contradiction "must be corrected", a critical claim without evidence "must be revised or
    removed", the unsupported rate must stay ≤ 5 %), so the loop stops only when all hold.
    """
    s = ledger_summary(claims)
    gates_hold = (s["coverage"] >= thresholds.coverage_threshold and s["contradicted"] == 0
                  and s["critical_unsupported"] == 0
                  and s["unsupported_rate"] <= thresholds.unsupported_rate_threshold)
    if gates_hold:
        return RevisionDecision(False, "Coverage threshold met")
    if revision_count >= thresholds.max_revisions:
        return RevisionDecision(False, "Maximum revision cycles reached")
    instructions = []
    for c in claims:
        if c.verdict == NOT_FOUND:
            strategy = Strategy.QUALIFY if (options.unsupported_action == "qualify"
                                            or c.claim.importance == IMPORTANCE_MINOR) else Strategy.REMOVE
            text = f'Remove or qualify claim: "{c.claim.text}"'
        elif c.verdict == CONTRADICTED:
            strategy, text = Strategy.CORRECT, f'Correct claim based on evidence: "{c.claim.text}"'
        elif c.verdict == WEAK:
            strategy, text = Strategy.SOFTEN, f'Strengthen wording to match evidence or soften claim: "{c.claim.text}"'
        else:
            continue
        instructions.append({"claim_id": c.claim.claim_id, "claim": c.claim.text, "verdict": c.verdict,
                             "importance": c.claim.importance, "strategy": str(strategy), "instruction": text})
    if s["critical_unsupported"]:
        reason = "Critical claims lack evidence"
    elif s["contradicted"]:
        reason = "Claims contradict evidence"
    elif s["coverage"] < thresholds.coverage_threshold:
        reason = f"Coverage {s['coverage'] * 100:.0f}% below {thresholds.coverage_threshold * 100:.0f}% threshold"
    else:
        reason = (f"Unsupported rate {s['unsupported_rate'] * 100:.0f}% above "
                  f"{thresholds.unsupported_rate_threshold * 100:.0f}% threshold")
    if not instructions:
        instructions.append({"claim_id": "", "claim": "", "verdict": "", "importance": "",
                             "strategy": str(Strategy.CITATION),
                             "instruction": "Strengthen citations or remove unsupported claims"})
    return RevisionDecision(True, reason, instructions)


# --- 2. corrective retrieval (seed 002) ----------------------------------------------------
def targeted_queries(claim: ClaimVerdict, query: str = "") -> list[str]:
    """Search queries aimed at one unsupported claim: the claim, its atomic facts, its key terms."""
    text = claim.claim.text.strip()
    queries = [text]
    for fact in decompose(text):
        if fact not in queries:
            queries.append(fact)
    terms = list(dict.fromkeys(w for w in re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text)
                               if w.lower() not in STOPWORDS and len(w) > 2))
    key = " ".join(terms[:10])
    topic = " ".join(w for w in re.findall(r"[^\W_]+", query) if w.lower() not in STOPWORDS)[:120]
    if key and key not in queries:
        queries.append(f"{key} {topic}".strip() if topic and len(terms) < 4 else key)
    return queries[:CORRECTIVE_QUERIES_PER_CLAIM]


def corrective_retrieval(claims: list[ClaimVerdict], pool: list[Passage], retrieve: Retrieve,
                         query: str = "") -> tuple[list[Passage], list[dict]]:
    """New passages for the claims nothing supports, and a record per claim of what was asked."""
    known_ids = {p.id for p in pool}
    known_texts = {normalize(p.text).strip() for p in pool}
    new: list[Passage] = []
    records = []
    for c in claims:
        if c.verdict != NOT_FOUND or c.claim.importance == IMPORTANCE_MINOR:
            continue
        queries = targeted_queries(c, query)
        found = []
        for passage in (retrieve(queries) or [])[: CORRECTIVE_PASSAGES_PER_QUERY * len(queries)]:
            key = normalize(passage.text).strip()
            if passage.id in known_ids or key in known_texts or not key:
                continue
            known_ids.add(passage.id)
            known_texts.add(key)
            new.append(passage)
            found.append(passage.id)
        records.append({"claim_id": c.claim.claim_id, "claim": c.claim.text, "queries": queries,
                        "new_passages": found})
    return new, records


# --- 3. deterministic rewriting of the claim sentences --------------------------------------
_PREFIX_RE = re.compile(r"^\s*(?:(?:[-*\u2022\u25cf+]|\d{1,3}[.)]|#{1,6})\s+)?")
_TRAIL_RE = re.compile(r"(?:\s*(?:\[[^\[\]]{1,60}\]|\((?:source|src|ref)\b[^)]{0,40}\)|[.!?;:\u3002]+|"
                       r"[\"'\u201d\u2019]+(?=[.!?]|$)))*\s*$", re.I)
_AUX_WORDS = "is|are|was|were|has|have|had|can|could|will|would|should|must|may|might|does|do|did"
_AUX_RE = re.compile(rf"\b(?:{_AUX_WORDS})\b(?! not\b)")
_QUOTED_RE = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_RE = re.compile(r"\b(" + "|".join(m.capitalize() for m in _MONTHS) + r")\b")
DISPUTED_QUALIFIER = "(disputed by the provided documents)"
PROTECTED_CONTAINMENT = 0.8  # share of a once-supported claim's content words a later claim must keep
_SOFTENED_MARKERS = (SOFTENING_HEDGE, SOFTENING_QUALIFY, SOFTENING_PARENTHETICAL, UNSUPPORTED_QUALIFIER,
                     DISPUTED_QUALIFIER)


@dataclass
class _Sentence:
    """A sentence cut into list prefix, body and trail (citation markers and final punctuation)."""

    prefix: str
    body: str
    trail: str

    @classmethod
    def parse(cls, raw: str) -> "_Sentence":
        prefix = _PREFIX_RE.match(raw).group(0)
        rest = raw[len(prefix):]
        trail = _TRAIL_RE.search(rest).group(0)
        body = rest[: len(rest) - len(trail)]
        if not body.strip():  # a sentence made only of markers: keep it whole as body
            return cls(prefix, rest, "")
        return cls(prefix, body, trail)

    @property
    def text(self) -> str:
        return self.prefix + self.body + self.trail

    def anchors(self) -> tuple[str, ...]:
        return citation_anchors(self.body + self.trail)


def _decap(body: str) -> str | None:
    """The body with its first word lower-cased, or None when that word may be a name."""
    m = re.match(r"\s*([^\W\d_]+)", body)
    if not m:
        return None
    word = m.group(1)
    if word.lower() in STOPWORDS and not word.isupper():
        i = m.start(1)
        return body[:i] + body[i].lower() + body[i + 1:]
    return body if word.islower() else None


def _cap(body: str) -> str:
    m = re.search(r"[^\W\d_]", body)
    return body[: m.start()] + body[m.start()].upper() + body[m.start() + 1:] if m else body


def soften(body: str, style: str) -> str:
    """Soften an unverified statement (seed 003 stage 7c): hedge, qualify or parenthetical."""
    if style == "hedge":
        quoted = [q.span() for q in _QUOTED_RE.finditer(body)]
        # the first auxiliary outside quotation marks: a quoted question is someone's words
        m = next((a for a in _AUX_RE.finditer(body) if not any(x <= a.start() < y for x, y in quoted)), None)
        if m:
            return f"{body[: m.end()]} {SOFTENING_HEDGE}{body[m.end():]}"
        lowered = _decap(body.lstrip())
        if lowered is not None:
            return f"{SOFTENING_HEDGE.capitalize()}, {lowered}"
    elif style == "qualify":
        lowered = _decap(body.lstrip())
        if lowered is not None:
            return f"{SOFTENING_QUALIFY} {lowered}"
    # no safe place for the phrase (the sentence may open with a name): the parenthetical form
    return f"{body.rstrip()} {SOFTENING_PARENTHETICAL}"


def unsoften(body: str) -> str:
    """Take the softening phrases of ``soften`` back out of a sentence body."""
    out = re.sub(rf"\b({_AUX_WORDS}) {SOFTENING_HEDGE}\b", r"\1", body)
    for lead in (f"{SOFTENING_HEDGE.capitalize()}, ", f"{SOFTENING_QUALIFY} "):
        if out.lstrip().startswith(lead):
            out = _cap(out.lstrip()[len(lead):])
    return out.replace(f" {SOFTENING_PARENTHETICAL}", "")


def claim_key(text: str) -> str:
    """What a claim asserts, without what revision adds or takes away around it: citation markers,
    softening phrases and qualifiers (two texts with one key are the same claim)."""
    body = unsoften(CITATION_RE.sub(" ", text))
    for note in (UNSUPPORTED_QUALIFIER, DISPUTED_QUALIFIER):
        body = body.replace(note, " ")
    return " ".join(re.sub(r"[^\w\s]", " ", body).lower().split())


def verdicts_to_keep(result: AuditResult) -> Callable[[ClaimDraft], ClaimVerdict | None]:
    """``reuse`` for re-verifying a revised text on the same pool: a claim whose words did not
    change (only its softening, its qualifier or fewer of its citation markers) keeps the verdict
    it had, so removing a marker its judge rejected or adding a hedge never moves a label."""
    by_key: dict[str, ClaimVerdict] = {}
    for c in result.claims:
        by_key.setdefault(claim_key(c.claim.text), c)

    def reuse(draft: ClaimDraft) -> ClaimVerdict | None:
        prev = by_key.get(claim_key(draft.text))
        if prev is None or not set(draft.citations) <= set(prev.claim.citations):
            return None
        return prev
    return reuse


def _already_softened(text: str) -> bool:
    low = text.lower()
    return any(marker.lower() in low for marker in _SOFTENED_MARKERS)


def marker_for(passage: Passage) -> str:
    """The citation marker that names ``passage``: its first anchor, its "[n]" header, or its id."""
    header = re.match(r"^\s*\[(\d{1,3})\]", passage.text)
    # A request passage with a numeric id ("1") is what "[1]" names: reuse that, not "[cite:1]".
    fallback = passage.id if passage.id.isdigit() else f"cite:{passage.id}"
    anchor = passage.anchors[0] if passage.anchors else header.group(1) if header else fallback
    if anchor.isdigit():
        return f"[{anchor}]"
    if anchor.startswith("cite:"):
        return f"[{anchor}]"
    if re.fullmatch(r"[A-Z][A-Za-z0-9]{1,30}(?:-\d+)?", anchor):
        return f"[{anchor}]"
    return f"[cite:{anchor}]"


def _rewrite_markers(text: str, mapping: Callable[[str], list[str]]) -> str:
    """Rewrite every citation marker of ``text``: each anchor becomes ``mapping(anchor)`` (maybe none)."""
    def repl(m: re.Match) -> str:
        anchors = citation_anchors(m.group(0))
        new: list[str] = []
        for a in anchors:
            for b in mapping(a):
                if b not in new:
                    new.append(b)
        if list(new) == list(anchors):
            return m.group(0)
        if not new:
            return ""
        if all(a.isdigit() for a in new) and m.group("num"):
            return "[" + ", ".join(new) + "]"
        return "".join(f"[{a}]" if (a.isdigit() or a.startswith("cite:") or m.group("key")) else f"[cite:{a}]"
                       for a in new)

    out = CITATION_RE.sub(repl, text)
    if out == text:
        return out
    out = re.sub(r"[ \t]{2,}", " ", re.sub(r"\s+([.,;:!?])", r"\1", out))
    # a marker dropped at the end of a sentence body must not leave a space before its full stop
    return out if text[-1:].isspace() else out.rstrip()


def _add_marker(sent: _Sentence, marker: str) -> None:
    """Put ``marker`` after the sentence's last marker, or before its final punctuation."""
    trail = sent.trail
    last = None
    for m in re.finditer(r"\[[^\[\]]{1,60}\]", trail):
        last = m
    if last is not None:
        sent.trail = trail[: last.end()] + marker + trail[last.end():]
    else:
        sent.body = sent.body.rstrip() + " " + marker
        sent.trail = trail.lstrip() if trail.strip() else trail


def _hits_sorted(c: ClaimVerdict) -> list[EvidenceHit]:
    return sorted(c.evidence, key=lambda h: (h.entailment, h.relevance, h.similarity), reverse=True)


def _best_hit(c: ClaimVerdict) -> EvidenceHit | None:
    hits = _hits_sorted(c)
    return hits[0] if hits else None


def _overlap(claim_text: str, other: str) -> float:
    a = set(content_stems(claim_text))
    return len(a & set(content_stems(other))) / len(a) if a else 0.0


def _numeric_corrections(c: ClaimVerdict, evidence_sentence: str, thresholds: Thresholds) -> list[tuple[str, str]]:
    """(claim value, evidence value) pairs: the numbers and dates of the claim the evidence disagrees with.

    The numeric method's parsed values are used when it reports them; otherwise the claim and
    the evidence sentence are parsed here (seed 003 stage 6 normalisation and tolerance).
    """
    pairs: list[tuple[str, str]] = []
    for m in c.methods:
        if m.method == "numeric" and m.ran:
            for row in m.details.get("items", []) or []:
                if row.get("match_type") == "mismatch" and row.get("evidence_value") and \
                        _normal_space(row.get("sentence", "")) in _normal_space(evidence_sentence):
                    pairs.append((str(row["claim_value"]), str(row["evidence_value"])))
    if pairs:
        return pairs
    claim_q = extract_quantities(c.claim.text)
    ev_q = extract_quantities(evidence_sentence)
    for q in claim_q:
        if any(values_match(q, e, thresholds.numeric_rel_tolerance, thresholds.numeric_approx_tolerance)
               for e in ev_q):
            continue
        candidates = [e for e in ev_q if e.kind == q.kind and not any(
            values_match(e, cq, thresholds.numeric_rel_tolerance, thresholds.numeric_approx_tolerance)
            for cq in claim_q)]
        if candidates:
            pairs.append((q.raw, _closest(q, candidates).raw))
    claim_months = _MONTH_RE.findall(c.claim.text)
    ev_months = list(dict.fromkeys(_MONTH_RE.findall(evidence_sentence)))
    if len(claim_months) == 1 and len(ev_months) == 1 and claim_months[0] != ev_months[0]:
        pairs.append((claim_months[0], ev_months[0]))
    return pairs


def _normal_space(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def _closest(q: Quantity, candidates: list[Quantity]) -> Quantity:
    def distance(e: Quantity) -> float:
        if q.kind == "year" or q.value <= 0 or e.value <= 0:
            return abs(e.value - q.value)
        return abs(math.log(e.value / q.value))
    return min(candidates, key=distance)


def _clause_pieces(body: str) -> list[tuple[int, int]] | None:
    """Spans of the clauses ``decompose`` made of this sentence body, or None when it made one."""
    cuts = [(m.start(), m.end()) for m in CLAUSE_SPLIT_RE.finditer(body)]
    if not cuts:
        return None
    pieces, start = [], 0
    for a, b in cuts:
        pieces.append((start, a))
        start = b
    pieces.append((start, len(body)))
    return pieces


def _drop_clauses(body: str, claims: list[ClaimVerdict], drop: set[str]) -> str | None:
    """The body without the clauses of the claims in ``drop``; None when clauses cannot be mapped."""
    pieces = _clause_pieces(body)
    if not pieces or len(pieces) != len(claims):
        return None
    for (a, b), c in zip(pieces, claims):
        if _overlap(c.claim.text, body[a:b]) < 0.6:
            return None
    keep = [i for i, c in enumerate(claims) if c.claim.claim_id not in drop]
    if not keep or len(keep) == len(claims):
        return None
    out = ""
    for n, i in enumerate(keep):
        a, b = pieces[i]
        piece = body[a:b].strip(" ,;")
        if n == 0:
            out = piece
        else:
            sep_start = pieces[i - 1][1]
            sep = body[sep_start:a] if keep[n - 1] == i - 1 else "; "
            out += sep + piece
    markers = "".join(m.group(0) for i, (a, b) in enumerate(pieces) if i not in keep
                      for m in CITATION_RE.finditer(body[a:b]))
    return _cap(out) + (" " + markers if markers else "")


class _Anchors:
    """Citation anchor -> passage, resolved the way retrieval resolves them."""

    def __init__(self, pool: list[Passage]):
        self._pool, self._size, self._map = pool, len(pool), anchor_map(pool)

    def _current(self) -> dict:
        if len(self._pool) != self._size:  # a passage was cited while planning: it joined the pool
            self._size, self._map = len(self._pool), anchor_map(self._pool)
        return self._map

    def __contains__(self, anchor: str) -> bool:
        return resolve_anchor(anchor, self._current()) is not None

    def __getitem__(self, anchor: str) -> Passage:
        return resolve_anchor(anchor, self._current())


class _SentencePlan:
    """The chain of edits of one sentence; each step records one Edit on the sentence span."""

    def __init__(self, span: tuple[int, int], raw: str):
        self.span = span
        self.sent = _Sentence.parse(raw)
        self.removed = False
        self.edits: list[Edit] = []

    def step(self, c: ClaimVerdict, strategy: Strategy, reason: str, change: Callable[[_Sentence], None] | None = None,
             *, remove: bool = False, action: str = "", passage_id: str = "", details: dict | None = None) -> bool:
        before = self.sent.text
        if remove:
            after = ""
        else:
            change(self.sent)
            after = self.sent.text
        if after == before:
            return False
        self.edits.append(Edit(claim_id=c.claim.claim_id, claim_text=c.claim.text, strategy=str(strategy),
                               span=self.span, before=before, after=after, reason=reason, action=action,
                               passage_id=passage_id, details=details or {}))
        self.removed = remove
        return True


def plan_revision(text: str, result: AuditResult, pool: list[Passage], *, thresholds: Thresholds = Thresholds(),
                  options: RevisionOptions = RevisionOptions(), retrieved_ids: frozenset[str] = frozenset(),
                  protected: list[set[str]] = (), unsoftenable: list[set[str]] = (), judge: Judge | None = None,
                  cite: Callable[[Passage], str] | None = None) -> tuple[str, list[Edit]]:
    """Apply the offline strategies to every sentence that needs them; return the new text and edits.

    ``text`` must be the text ``result`` was computed on (claim spans index into it).
    ``protected`` holds the content words of claims an earlier attempt found supported or weak:
    such a claim is never removed, even if an edit (a hedge) lowered its score since; that hedge
    is taken back instead, and the claims in ``unsoftenable`` (taken back once) are not softened again.
    ``judge(text, passage)`` is the claim judge on one passage: a correction or a citation stands
    only where it says SUPPORTED (without it, the passage's support score against the threshold).
    ``cite(passage)`` gives the marker that names a passage (``marker_for`` by default).
    """
    by_anchor = _Anchors(pool)
    cite = cite or marker_for
    sentences: dict[tuple[int, int], list[ClaimVerdict]] = {}
    for c in result.claims:
        sentences.setdefault(tuple(c.claim.span), []).append(c)
    plans = [_plan_sentence(span, text[span[0]: span[1]], claims, by_anchor, thresholds, options, retrieved_ids,
                            protected, unsoftenable, judge, cite) for span, claims in sorted(sentences.items())]
    # a revised sentence that repeats another sentence of the answer goes (no repeated sentences)
    seen: set[str] = set()
    for p in plans:
        if p.removed:
            continue
        key = _sentence_key(p.sent.text)
        if key in seen and p.edits:
            c = sentences[p.span][0]
            p.edits = [Edit(claim_id=c.claim.claim_id, claim_text=c.claim.text, strategy=p.edits[0].strategy,
                            span=p.span, before=text[p.span[0]: p.span[1]], after="", action="remove_sentence",
                            reason="the revised sentence repeats another sentence of the answer")]
            p.removed = True
        seen.add(key)
    # never empty the answer: if every claim would go, say that the documents do not support it
    kept_claims = any(not p.removed for p in plans)
    if plans and not kept_claims:
        last = plans[-1]
        c = sentences[last.span][0]
        last.removed = False
        last.edits.append(Edit(claim_id=c.claim.claim_id, claim_text=c.claim.text, strategy=str(Strategy.REMOVE),
                               span=last.span, before="", after=NO_ANSWER_NOTICE, action="no_answer_notice",
                               reason="every claim was removed: the answer says the documents do not support it"))
    # removal spans take the whitespace around the sentence; computed on this text and kept apart
    prev_end = 0
    for p in plans:
        if p.removed:
            a, b = _removal_span(text, *p.span)
            a = max(a, prev_end)
            p.edits[-1].span, p.edits[-1].before = (a, b), text[a:b]
            prev_end = b
        elif p.edits:
            prev_end = p.span[1]
    edits = [e for p in plans for e in p.edits]
    return replay_edits(text, edits), edits


def _sentence_key(sentence: str) -> str:
    return re.sub(r"\s+", " ", CITATION_RE.sub("", sentence)).strip().rstrip(".!?;: ").lower()


def replay_edits(text: str, edits: list[Edit]) -> str:
    """Apply a ledger of edits to the text they were planned on; raise ValueError if they do not fit.

    Edits that share a span form a chain: the first one's ``before`` must be the text there and
    the last one's ``after`` replaces it. Spans of different chains must not overlap.
    """
    chains: dict[tuple[int, int], list[Edit]] = {}
    for e in edits:
        chains.setdefault(tuple(e.span), []).append(e)
    out, last_start = text, len(text) + 1
    for (a, b), chain in sorted(chains.items(), reverse=True):
        if b > last_start and not (a == b == last_start):
            raise ValueError(f"edit spans overlap at {a}-{b}")
        if text[a:b] != chain[0].before:
            raise ValueError(f"edit of {chain[0].claim_id} expects {chain[0].before[:60]!r} at {a}-{b}")
        out = out[:a] + chain[-1].after + out[b:]
        last_start = a
    return out


def _removal_span(text: str, a: int, b: int) -> tuple[int, int]:
    """The span to cut to remove the sentence text[a:b] cleanly (its whole line if it is alone on it)."""
    line_start = text.rfind("\n", 0, a) + 1
    line_end = text.find("\n", b)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:a].strip() and not text[b:line_end].strip():
        if line_end < len(text):
            return line_start, line_end + 1
        return (line_start - 1 if line_start > 0 else line_start), line_end
    end = b
    while end < line_end and text[end] in " \t":
        end += 1
    if end < line_end:  # another sentence follows on this line: take the space after this one
        return a, end
    start = a
    while start > line_start and text[start - 1] in " \t":
        start -= 1
    return start, b


def is_protected(c: ClaimVerdict, protected: list[set[str]]) -> bool:
    """Whether ``c`` states a claim an earlier attempt found supported or weak (its words, maybe hedged)."""
    stems = set(content_stems(c.claim.text))
    return any(p and len(p & stems) / len(p) >= PROTECTED_CONTAINMENT for p in protected)


def _plan_sentence(span, raw, claims, by_anchor, thresholds, options, retrieved_ids, protected=(),
                   unsoftenable=(), judge=None, cite=marker_for) -> _SentencePlan:
    plan = _SentencePlan(span, raw)
    support = _Support(thresholds, judge)
    if options.citations_only:
        if options.correct_citations:
            _correct_citations(plan, claims, by_anchor, support, retrieved_ids, cite=cite)
        return plan
    # a0) a softening that cost a once-covered claim its support is taken back (a worse revision)
    reverted: set[str] = set()
    for c in claims:
        if c.verdict not in COVERED and is_protected(c, protected) and _already_softened(plan.sent.body):
            def revert(s):
                s.body = unsoften(s.body)
            if plan.step(c, Strategy.SOFTEN, "the softened wording lost the support the claim had; restored",
                         revert, action="revert"):
                reverted.add(c.claim.claim_id)
    # a) contradicted claims: correct to match the evidence
    uncorrected: list[ClaimVerdict] = []
    corrected: list[ClaimVerdict] = []
    for c in claims:
        if c.verdict != CONTRADICTED or c.claim.claim_id in reverted:
            continue
        if options.correct_contradictions and _correct(plan, c, claims, thresholds, judge, cite):
            corrected.append(c)
        else:
            uncorrected.append(c)

    # b) claims nothing supports (and contradictions that could not be corrected)
    to_drop = [c for c in claims if (c.verdict == NOT_FOUND or c in uncorrected) and not is_protected(c, protected)
               and c.claim.claim_id not in reverted]
    clause_dropped, drop_ids = False, set()
    if to_drop:
        material = [c for c in to_drop if c.claim.importance != IMPORTANCE_MINOR]
        lead = (material or to_drop)[0]
        removable = options.unsupported_action == "remove" and bool(material)
        drop_ids = {c.claim.claim_id for c in material}
        if removable and len(to_drop) == len(claims):
            plan.step(lead, Strategy.REMOVE, "no passage supports the sentence's claims", remove=True,
                      action="remove_sentence", details={"claims": [c.claim.claim_id for c in to_drop]})
            return plan
        dropped = _drop_clauses(plan.sent.body, claims, drop_ids) if removable else None
        if dropped is not None:
            def cut(s, new=dropped):
                s.body = new
            clause_dropped = plan.step(lead, Strategy.REMOVE, "no passage supports this clause; the rest stays",
                                       cut, action="remove_clause", details={"claims": sorted(drop_ids)})
        elif not _already_softened(plan.sent.body):
            note = UNSUPPORTED_QUALIFIER if any(c.verdict == NOT_FOUND for c in to_drop) else DISPUTED_QUALIFIER

            def qualify(s, note=note):
                s.body = s.body.rstrip() + " " + note
            plan.step(lead, Strategy.QUALIFY, "no passage supports the claim; the answer says so", qualify,
                      action="qualify", details={"claims": [c.claim.claim_id for c in to_drop]})
    # c) weak claims: soften (seed 003 stage 7c)
    for c in claims:
        if c.verdict == WEAK and not reverted and not _already_softened(plan.sent.body) \
                and not is_protected(c, unsoftenable):
            style = options.softening

            def soft(s, style=style):
                s.body = soften(s.body, style)
            plan.step(c, Strategy.SOFTEN, f"evidence only partly supports the claim ({style})", soft,
                      action=style)
    # d) citation correction (seed 003 stage 5)
    if options.correct_citations:
        _correct_citations(plan, claims, by_anchor, support, retrieved_ids, corrected=bool(corrected),
                           dropped=frozenset(drop_ids) if clause_dropped else frozenset(), cite=cite)
    return plan


def _span_corrections(c: ClaimVerdict, h: EvidenceHit, thresholds: Thresholds) -> list[tuple[str, str, str]]:
    """(claim words, evidence words, kind) the evidence sentence of ``h`` states differently: values,
    units and dates (the numeric check), entities, opposite predicates and polarity (the structural
    check, on this very sentence). Only spans the claim holds word for word are returned."""
    sentence = h.best_sentence
    found = [(a, b, "value") for a, b in _numeric_corrections(c, sentence, thresholds)]
    for m in c.methods:
        if m.method != "structure" or not m.ran:
            continue
        for f in (m.details or {}).get("findings", []) or []:
            if f.get("rule") == "missing_entity" or f.get("passage_id") not in ("", None, h.passage.id):
                continue
            if _normal_space(f.get("sentence", ""))[:200] not in _normal_space(sentence)[:300] + " ":
                continue
            a, b = _surface(str(f.get("claim") or ""), c.claim.text), _surface(str(f.get("evidence") or ""), sentence)
            if a and b and a.lower() != b.lower():
                found.append((a, b, str(f.get("rule"))))
    text = c.claim.text
    return [(a, b, k) for a, b, k in found if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text, re.I)]


def _surface(words: str, text: str) -> str:
    """``words`` as ``text`` writes them (the structural check reports them lower-cased); "" when absent."""
    if not words.strip():
        return ""
    pattern = r"[\s-]+".join(re.escape(w) for w in words.split())
    m = re.search(rf"(?<!\w){pattern}(?!\w)", text, re.I)
    return m.group(0) if m else ""


def _aligned(claim_text: str, replaced: list[str], sentence: str) -> float:
    """Share of the claim's content words outside the replaced spans that the evidence sentence holds:
    the subject and predicate must be the sentence's for a span replacement to be the same fact."""
    rest = claim_text
    for a in replaced:
        rest = re.sub(rf"(?<!\w){re.escape(a)}(?!\w)", " ", rest, flags=re.I)
    stems = [s for s in content_stems(rest) if not any(ch.isdigit() for ch in s)]
    if not stems:
        return 0.0
    have = set(content_stems(sentence))
    return sum(1 for s in stems if s in have) / len(stems)


def _replace_span(text: str, a: str, b: str, evidence: str) -> str:
    """``text`` with the claim words ``a`` replaced by the evidence's ``b``; the unit word after a
    value takes the evidence's number ("2 business days" -> "1 business day")."""
    m = re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text, re.I)
    if not m:
        return text
    out = text[: m.start()] + b + text[m.end():]
    after_at = m.start() + len(b)
    ev = re.search(rf"(?<!\w){re.escape(b)}(?!\w)((?:\s+[^\W\d_]+){{1,2}})", evidence)
    tail = re.match(r"((?:\s+[^\W\d_]+){1,2})", out[after_at:])
    if ev and tail:
        mine, theirs = tail.group(1).split(), ev.group(1).split()
        fixed = [t if (t != w and t.lower().rstrip("s") == w.lower().rstrip("s")) else w
                 for w, t in zip(mine, theirs)] + mine[len(theirs):]
        if fixed != mine:
            words = iter(fixed)
            rebuilt = re.sub(r"\S+", lambda _match: next(words), tail.group(1))
            out = out[:after_at] + rebuilt + out[after_at + len(tail.group(1)):]
    return out


def _correct(plan: _SentencePlan, c: ClaimVerdict, claims: list[ClaimVerdict], thresholds: Thresholds,
             judge: "Judge | None" = None, cite: Callable[[Passage], str] = marker_for) -> bool:
    """Correct the contradicted span of a claim (value, unit, date, entity, predicate, polarity) with
    what one evidence sentence states, only when the rest of the claim aligns with that sentence,
    and only when the corrected claim verifies SUPPORTED against that passage under ``judge`` (the
    judge that labels claims). Never replaces the claim with another sentence."""
    hits = [h for h in sorted(c.evidence, key=lambda h: (h.cited, h.relevance, h.similarity), reverse=True)
            if h.best_sentence]
    for h in hits:
        spans = [(a, b, k) for a, b, k in _span_corrections(c, h, thresholds) if a.lower() in plan.sent.body.lower()]
        if not spans or _aligned(c.claim.text, [a for a, _, _ in spans], h.best_sentence) < CORRECTION_MIN_ALIGNMENT:
            continue
        new_claim = c.claim.text
        for a, b, _ in spans:
            new_claim = _replace_span(new_claim, a, b, h.best_sentence)
        if new_claim == c.claim.text:
            continue
        check = judge(new_claim, h.passage) if judge is not None else None
        if judge is not None and (check is None or check.label != "SUPPORTED"):
            continue
        marker = cite(h.passage)

        def fix(s, spans=spans, marker=marker, evidence=h.best_sentence):
            for a, b, _ in spans:
                s.body = _replace_span(s.body, a, b, evidence)
            if marker not in s.text:
                _add_marker(s, marker)
        details = {"replaced": [{"from": a, "to": b, "kind": k} for a, b, k in spans], "corrected_claim": new_claim}
        if check is not None:
            details["verified"] = {"label": check.label, "confidence": round(float(check.confidence), 4)}
        return plan.step(c, Strategy.CORRECT, "the evidence states this fact differently; only the differing words change",
                         fix, action="numeric" if all(k == "value" for _, _, k in spans) else "span",
                         passage_id=h.passage.id, details=details)
    return False


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


def _correct_citations(plan: _SentencePlan, claims: list[ClaimVerdict], by_anchor: _Anchors,
                       support: _Support, retrieved_ids: frozenset[str], *, corrected: bool = False,
                       demote: bool = True, dropped: frozenset[str] = frozenset(),
                       cite: Callable[[Passage], str] = marker_for) -> None:
    if plan.removed:
        return
    anchors = plan.sent.anchors()
    # markers that name no passage: REMOVE
    for a in anchors:
        if a not in by_anchor:
            def drop(s, a=a):
                s.body, s.trail = _rewrite_markers(s.body, lambda x: [] if x == a else [x]), \
                    _rewrite_markers(s.trail, lambda x: [] if x == a else [x])
            plan.step(claims[0], Strategy.CITATION, f"citation [{a}] names no passage", drop,
                      action=CitationAction.REMOVE, details={"anchor": a})

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
                any(support(c, p) for p in cited) and best.entailment < cited_best + CITATION_REPLACE_MARGIN):
            continue
        strategy = Strategy.CORRECTIVE_RETRIEVAL if best.passage.id in retrieved_ids else Strategy.CITATION
        new_marker = cite(best.passage)
        new_anchor = citation_anchors(new_marker)[0]
        useless = [p for p in cited if not any(support(o, p) for o in supported)]
        if cited and len(useless) == len(cited):
            old = {a for a in plan.sent.anchors() if a in by_anchor and by_anchor[a] in useless}

            def swap(s, old=old, new_anchor=new_anchor):
                first = [True]

                def m(x):
                    if x in old:
                        if first[0]:
                            first[0] = False
                            return [new_anchor]
                        return []
                    return [x]
                s.body = _rewrite_markers(s.body, m)
                s.trail = _rewrite_markers(s.trail, m)
            plan.step(c, strategy, "the cited passage does not support the claim; a better one does", swap,
                      action=CitationAction.REPLACE, passage_id=best.passage.id,
                      details={"replaced": sorted(old), "entailment": round(best.entailment, 4),
                               "cited_entailment": round(cited_best, 4)})
        else:
            plan.step(c, strategy, "a better passage supports the claim" if cited else "uncited claim: a passage supports it",
                      lambda s, mk=new_marker: _add_marker(s, mk), action=CitationAction.ADD_ALTERNATE,
                      passage_id=best.passage.id,
                      details={"entailment": round(best.entailment, 4), "cited_entailment": round(cited_best, 4)})
    # a marker stays only where the passage it names supports a claim of the sentence (the same
    # decision as above): markers of a sentence that no longer holds a supported claim go
    if demote and not corrected:
        judged = [c for c in claims if c.claim.claim_id not in dropped]
        useless = {a for a in plan.sent.anchors() if a in by_anchor
                   and not any(c.label == "SUPPORTED" and support(c, by_anchor[a]) for c in judged)}
        if useless:
            def demote(s, useless=useless):
                s.body = _rewrite_markers(s.body, lambda x: [] if x in useless else [x])
                s.trail = _rewrite_markers(s.trail, lambda x: [] if x in useless else [x])
            plan.step(claims[0], Strategy.CITATION, "the cited passage does not support this sentence's claims", demote,
                      action=CitationAction.REMOVE, details={"anchors": sorted(useless)})


# --- LLM rewrite, accepted only when traceable ---------------------------------------------
def _map_position(opcodes, pos: int) -> int:
    for tag, i1, i2, j1, j2 in opcodes:
        if i1 <= pos <= i2:
            if tag == "equal":
                return j1 + (pos - i1)
            return j1 if pos == i1 else j2
    return opcodes[-1][4] if opcodes else pos


def trace_changes(before: str, after: str, claims: list[ClaimVerdict], instructions: list[dict],
                  valid_anchors) -> tuple[list[Edit] | None, str]:
    """Edits for a free rewrite, or (None, why) when a change is not traceable to an instructed claim."""
    for a in citation_anchors(after):
        if a not in valid_anchors:
            return None, f"the rewrite cites [{a}], which names no passage"
    by_id = {c.claim.claim_id: c for c in claims}
    instructed = [(by_id[i["claim_id"]], i["strategy"]) for i in instructions if i.get("claim_id") in by_id]
    spans = {}
    for c, _ in instructed:
        a, b = c.claim.span
        while a > 0 and before[a - 1].isspace():  # the whitespace around a sentence goes with it
            a -= 1
        while b < len(before) and before[b].isspace():
            b += 1
        spans[(a, b)] = tuple(c.claim.span)
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    touched: set[tuple[int, int]] = set()
    for tag, i1, i2, _j1, _j2 in opcodes:
        if tag == "equal":
            continue
        region = [sent for (a, b), sent in spans.items() if a <= i1 and i2 <= b]
        if not region:
            return None, f"the rewrite changed text outside the claims it was told to revise: {before[i1:i2][:60]!r}"
        touched.add(region[0])
    # merge the touched sentences' regions (with their surrounding whitespace) into disjoint spans
    regions: list[list[int]] = []
    for ext, sent in sorted(spans.items()):
        if sent not in touched:
            continue
        if regions and ext[0] <= regions[-1][1]:
            regions[-1][1] = max(regions[-1][1], ext[1])
        else:
            regions.append([ext[0], ext[1]])
    edits = []
    for a, b in regions:
        j1, j2 = _map_position(opcodes, a), _map_position(opcodes, b)
        for c, strategy in instructed:
            if a <= c.claim.span[0] and c.claim.span[1] <= b and tuple(c.claim.span) in touched:
                edits.append(Edit(claim_id=c.claim.claim_id, claim_text=c.claim.text, strategy=strategy,
                                  span=(a, b), before=before[a:b], after=after[j1:j2], reason="LLM rewrite_answer",
                                  action="llm_rewrite"))
    if edits and replay_edits(before, edits) != after:
        return None, "the rewrite could not be mapped onto the instructed sentences"
    return edits, ""


def _unbacked_correction(edits: list[Edit], by_anchor: _Anchors, judge: Judge) -> str:
    """Why a rewrite's correction may not stand ("" when every one may): a corrected sentence must
    state the same fact (at least ``CORRECTION_MIN_ALIGNMENT`` of its content words, numbers aside,
    are the claim's: no other subject, no added statement) and be SUPPORTED by a passage it cites
    under the judge that labels claims."""
    for e in edits:
        if e.strategy != Strategy.CORRECT or not e.after.strip():
            continue
        new = re.sub(r"\s+", " ", CITATION_RE.sub("", e.after)).strip()
        if _aligned(new, [], e.claim_text) < CORRECTION_MIN_ALIGNMENT:
            return f"the correction of {e.claim_id} changes what the claim is about"
        cited = [by_anchor[a] for a in citation_anchors(e.after) if a in by_anchor]
        if not any((v := judge(new, p)) is not None and v.label == "SUPPORTED" for p in cited):
            return f"the correction of {e.claim_id} is not SUPPORTED by a passage it cites"
    return ""


# --- 4. the loop and its termination (seed 000 §6.3) ----------------------------------------
def terminate(attempts: list[RevisionAttempt]) -> tuple[int, list[dict]]:
    """The attempt to keep (the best; on a tie the latest) and the seed's termination warnings."""
    keys = [quality_key(a.summary) for a in attempts]
    kept = max(range(len(attempts)), key=lambda i: (keys[i], i))
    warnings = []
    if len(attempts) > 1:
        # the original as first verified: corrective retrieval counts as an improvement
        first, last = attempts[0].before_retrieval or attempts[0].summary, attempts[-1].summary
        if last["coverage"] <= first["coverage"] or keys[-1] < quality_key(first):
            warnings.append({"code": str(Warning.NO_IMPROVEMENT),
                             "message": "Revisions did not improve evidence coverage"
                             + (f"; attempt {kept} is kept" if kept != len(attempts) - 1 else ""),
                             "details": {"first": first, "last": last, "kept": kept}})
    final = attempts[kept].result
    unsupported = [c for c in final.claims if c.verdict == NOT_FOUND and c.claim.importance != IMPORTANCE_MINOR]
    if unsupported:
        warnings.append({"code": str(Warning.UNSUPPORTED_CLAIMS),
                         "message": f"{len(unsupported)} material claims could not be verified",
                         "details": [c.claim.text for c in unsupported]})
    return kept, warnings


def revise_answer(*, query: str, answer: str, passages: list[Passage], verify: Verify,
                  retrieve: Retrieve | None = None, rewriter: Rewriter | None = None,
                  thresholds: Thresholds = Thresholds(), options: RevisionOptions = RevisionOptions(),
                  initial: AuditResult | None = None, judge: Judge | None = None,
                  given: int | None = None, reverify: Reverify | None = None) -> RevisionOutcome:
    """Run the revision loop of seed 000 §6 on one answer and return every attempt.

    ``initial`` is the audit of ``answer`` when the caller already has it (it must have been
    computed on ``normalize(answer)``, as the pipeline does). A failing ``rewriter`` or one
    whose output is not traceable falls back to the offline strategies for that attempt.
    ``judge(text, passage)`` decides support on one passage (default: ``verify`` on that passage
    alone). A passage cited that is not one of ``passages`` (a knowledge-base or web passage)
    joins the pool and is named by its position, ``[n]``: no internal id reaches the text.
    ``given`` is how many of ``passages`` the request sent (all by default); the others are
    evidence (knowledge base, web) and are cited by position too. ``reverify`` re-verifies a
    revised text keeping the verdicts of the claims it did not change (default: ``verify`` on it all).
    """
    text = normalize(answer or "")
    pool = list(passages)
    given = len(pool) if given is None else min(given, len(pool))
    if judge is None:
        def judge(claim_text: str, passage: Passage) -> ClaimVerdict | None:
            return next(iter(verify(claim_text, [passage]).claims), None)

    def cite(passage: Passage) -> str:
        position = next((i for i, p in enumerate(pool) if p.id == passage.id), None)
        if position is None:
            pool.append(passage)
            position = len(pool) - 1
        return marker_for(passage) if position < given else f"[{position + 1}]"

    retrieved_ids: set[str] = set()
    result = initial if initial is not None else verify(text, pool)
    attempts = [RevisionAttempt(0, text, result)]
    protected: list[set[str]] = []  # claims once supported or weak are never removed later
    unsoftenable: list[set[str]] = []  # claims whose softening was taken back
    stop_reason = ""
    while True:
        current = attempts[-1]
        protected += [set(content_stems(c.claim.text)) for c in current.result.claims if c.verdict in COVERED]
        decision = decide_revision(current.result.claims, len(attempts) - 1, thresholds, options)
        current.decision = decision
        if not decision.should_revise:
            stop_reason = decision.reason
            # the text meets the thresholds, and its markers still follow the one support decision:
            # a marker stays only where the judge finds the claim SUPPORTED by the passage it names
            new_text, edits = plan_revision(current.text, current.result, pool, thresholds=thresholds,
                                            options=replace(options, citations_only=True),
                                            retrieved_ids=frozenset(retrieved_ids), protected=protected,
                                            unsoftenable=unsoftenable, judge=judge, cite=cite)
            if edits and new_text != current.text:
                again = (reverify(new_text, pool, verdicts_to_keep(current.result)) if reverify is not None
                         else verify(new_text, pool))
                attempts.append(RevisionAttempt(len(attempts), new_text, again, edits, "offline",
                                                notes=["citation markers checked against the final wording"]))
            break
        if retrieve is not None and options.corrective_retrieval:
            new, records = corrective_retrieval(current.result.claims, pool, retrieve, query)
            current.retrieval = records
            if new:
                current.notes.append(f"corrective retrieval added {len(new)} passage(s); re-verified")
                current.before_retrieval = current.summary
                pool.extend(new)
                retrieved_ids.update(p.id for p in new)
                current.result = verify(current.text, pool)  # re-verify with the extra evidence
                protected += [set(content_stems(c.claim.text)) for c in current.result.claims if c.verdict in COVERED]
                decision = decide_revision(current.result.claims, len(attempts) - 1, thresholds, options)
                current.decision = decision
        new_text, edits, author, notes = None, [], "offline", []
        plan_options = options
        if not decision.should_revise:
            # the extra evidence settled it: only cite the passages found (seed 003 stage 7c)
            stop_reason = decision.reason + " after corrective retrieval"
            plan_options = replace(options, citations_only=True)
        elif rewriter is not None:
            try:
                candidate = normalize(rewriter(query=query, answer=current.text, instructions=decision.instructions,
                                               passages=pool) or "")
            except Exception as exc:  # the LLM is an edge: any failure means the offline path
                notes.append(f"LLM rewrite failed ({type(exc).__name__}): offline strategies used")
            else:
                traced, why = trace_changes(current.text, candidate, current.result.claims, decision.instructions,
                                            _Anchors(pool))
                if traced:
                    why = _unbacked_correction(traced, _Anchors(pool), judge)
                    traced = None if why else traced
                if traced:
                    new_text, edits, author = candidate, traced, "llm"
                else:
                    notes.append(f"LLM rewrite rejected ({why or 'no change'}): offline strategies used")
        if new_text is None:
            new_text, edits = plan_revision(current.text, current.result, pool, thresholds=thresholds,
                                            options=plan_options, retrieved_ids=frozenset(retrieved_ids),
                                            protected=protected, unsoftenable=unsoftenable, judge=judge, cite=cite)
        if not edits or new_text == current.text:
            stop_reason = stop_reason or "No applicable edits"
            break
        unsoftenable += [set(content_stems(unsoften(e.claim_text))) for e in edits if e.action == "revert"]
        again = (reverify(new_text, pool, verdicts_to_keep(current.result)) if reverify is not None
                 else verify(new_text, pool))
        attempts.append(RevisionAttempt(len(attempts), new_text, again, edits, author, notes=notes))
        if not decision.should_revise:
            break
    kept, warnings = terminate(attempts)
    return RevisionOutcome(original_text=answer or "", final_text=attempts[kept].text, final=attempts[kept].result,
                           attempts=attempts, kept=kept, warnings=warnings, stop_reason=stop_reason, passages=pool,
                           given=given)


# --- wiring to the pipeline, the knowledge base and the LLM ----------------------------------
def kb_retriever(kb, *, embed=None, k: int = CORRECTIVE_PASSAGES_PER_QUERY) -> Retrieve:
    """``retrieve(queries)`` over a ``KnowledgeBase``: the best ``k`` chunks of each targeted query."""
    def retrieve(queries: list[str]) -> list[Passage]:
        if kb is None or not len(kb.index) or not queries:
            return []
        encode = embed
        if encode is None:
            from audit.pipeline.embedding import get_embedder

            encode = get_embedder().encode
        results = kb.index.search_many(queries, encode(queries), k=k)
        ids = list(dict.fromkeys(i for res in results for i, _ in res))
        found = kb.lookup(ids) if ids else {}
        return [found[i] for i in ids if i in found]
    return retrieve


def llm_rewriter(client) -> Rewriter | None:
    """The LLM's ``rewrite_answer`` (issue 4) bound to ``client``, or None when no LLM is usable."""
    if client is None or not getattr(client, "available", False):
        return None
    from audit.pipeline.llm.drafting import make_rewriter

    return make_rewriter(client)


def revise_audit(*, query: str, answer: str, contexts=None, kb=None, initial: AuditResult | None = None,
                 domain: str = "", thresholds: Thresholds | None = None, llm=None, embed=None,
                 options: RevisionOptions = RevisionOptions(), given: int | None = None) -> RevisionOutcome:
    """Audit and revise one answer with the pipeline's ``audit_answer`` as the verifier.

    Corrective retrieval searches ``kb`` (a ``KnowledgeBase``) when given; the LLM rewrites when
    ``llm`` is a usable client, else the offline strategies do.
    """
    from audit.pipeline.audit import audit_answer, verify_claims
    from audit.pipeline.methods import LLM_METHODS, OFFLINE_METHODS
    from audit.pipeline.retrieval import as_passages

    t = thresholds or Thresholds()
    # the judge on one passage runs the methods that label claims (with the LLM judge when configured)
    methods = (*OFFLINE_METHODS, "llm_judge") if llm is not None and "llm_judge" in LLM_METHODS else OFFLINE_METHODS

    def verify(text: str, pool: list[Passage], reuse=None) -> AuditResult:
        return audit_answer(query, text, pool, kb=kb, domain=domain, thresholds=t, embed=embed, llm=llm, reuse=reuse)

    def judge(claim_text: str, passage: Passage) -> ClaimVerdict:
        return verify_claims([(claim_text, [passage])], thresholds=t, domain=domain, embed=embed, llm=llm,
                             methods=methods)[0]

    retrieve = kb_retriever(kb, embed=embed) if kb is not None else None
    return revise_answer(query=query, answer=answer, passages=as_passages(contexts or []), verify=verify,
                         retrieve=retrieve, rewriter=llm_rewriter(llm), thresholds=t, options=options,
                         initial=initial, judge=judge, given=given, reverify=verify)
