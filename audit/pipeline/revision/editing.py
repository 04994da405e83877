"""3. Deterministic rewriting of the claim sentences: the per-sentence plan (correct, remove, qualify,
soften) and the edits that carry it out."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from audit.constants import (
    CORRECTION_MIN_ALIGNMENT,
    IMPORTANCE_MINOR,
    NO_ANSWER_NOTICE,
    NUMERIC_MAX_CLAIM_QUANTITIES,
    UNSUPPORTED_QUALIFIER,
    Thresholds,
)
from audit.pipeline.embedding import similarity_fn
from audit.pipeline.extraction import _SPLIT_RE as CLAUSE_SPLIT_RE
from audit.pipeline.extraction import CITATION_RE
from audit.pipeline.numbers import Quantity, extract_quantities, values_match
from audit.pipeline.revision.citations import _correct_citations, _Support
from audit.pipeline.revision.model import (
    CONTRADICTED,
    COVERED,
    NOT_FOUND,
    WEAK,
    Edit,
    Judge,
    RevisionOptions,
    Strategy,
    _overlap,
)
from audit.pipeline.revision.sentences import (
    _MONTH_RE,
    DISPUTED_QUALIFIER,
    PROTECTED_CONTAINMENT,
    _add_marker,
    _already_softened,
    _Anchors,
    _cap,
    _Sentence,
    _SentencePlan,
    marker_for,
    soften,
    unsoften,
)
from audit.pipeline.revision.whole import structural_report
from audit.pipeline.text import content_stems
from audit.pipeline.types import AuditResult, ClaimVerdict, EvidenceHit, Passage


def _numeric_corrections(
    c: ClaimVerdict, evidence_sentence: str, thresholds: Thresholds
) -> list[tuple[str, str]]:
    """(claim value, evidence value) pairs: the numbers and dates of the claim the evidence disagrees with.

    The numeric method's parsed values are used when it reports them; otherwise the claim and
    the evidence sentence are parsed here (docs/SPEC_NOTES.md#numeric-checks normalisation and tolerance).
    """
    pairs: list[tuple[str, str]] = []
    for m in c.methods:
        if m.method == "numeric" and m.ran:
            for row in m.details.get("items", []) or []:
                if (
                    row.get("match_type") == "mismatch"
                    and row.get("evidence_value")
                    and _normal_space(row.get("sentence", "")) in _normal_space(evidence_sentence)
                ):
                    pairs.append((str(row["claim_value"]), str(row["evidence_value"])))
    if pairs:
        return pairs
    # the first NUMERIC_MAX_CLAIM_QUANTITIES of each side, as the numeric method reads them: a
    # sentence of 500 numbers against another cost 2 million comparisons (30 s) here
    claim_q = extract_quantities(c.claim.text)[:NUMERIC_MAX_CLAIM_QUANTITIES]
    ev_q = extract_quantities(evidence_sentence)[:NUMERIC_MAX_CLAIM_QUANTITIES]
    rel, approx = thresholds.numeric_rel_tolerance, thresholds.numeric_approx_tolerance
    # the evidence values no claim value matches, found once for all the claim's values
    unmatched = [e for e in ev_q if not any(values_match(e, cq, rel, approx) for cq in claim_q)]
    for q in claim_q:
        if any(values_match(q, e, rel, approx) for e in ev_q):
            continue
        candidates = [e for e in unmatched if e.kind == q.kind]
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
    markers = "".join(
        m.group(0)
        for i, (a, b) in enumerate(pieces)
        if i not in keep
        for m in CITATION_RE.finditer(body[a:b])
    )
    return _cap(out) + (" " + markers if markers else "")


def plan_revision(
    text: str,
    result: AuditResult,
    pool: list[Passage],
    *,
    thresholds: Thresholds = Thresholds(),  # pure-function default (tests); the loop passes its job's
    options: RevisionOptions = RevisionOptions(),
    retrieved_ids: frozenset[str] = frozenset(),
    protected: Sequence[set[str]] = (),
    unsoftenable: Sequence[set[str]] = (),
    judge: Judge | None = None,
    cite: Callable[[Passage], str] | None = None,
) -> tuple[str, list[Edit]]:
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
        sentences.setdefault((c.claim.span[0], c.claim.span[1]), []).append(c)
    plans = [
        _plan_sentence(
            span,
            text[span[0] : span[1]],
            claims,
            by_anchor,
            thresholds,
            options,
            retrieved_ids,
            protected,
            unsoftenable,
            judge,
            cite,
        )
        for span, claims in sorted(sentences.items())
    ]
    _drop_repeats(plans, sentences, text)
    _keep_an_answer(plans, sentences)
    _removal_spans(plans, text)
    edits = [e for p in plans for e in p.edits]
    return replay_edits(text, edits), edits


def _drop_repeats(
    plans: list[_SentencePlan], sentences: dict[tuple[int, int], list[ClaimVerdict]], text: str
) -> None:
    """A revised sentence that repeats another sentence of the answer goes (no repeated sentences)."""
    seen: set[str] = set()
    for p in plans:
        if p.removed:
            continue
        key = _sentence_key(p.sent.text)
        if key in seen and p.edits:
            c = sentences[p.span][0]
            p.edits = [
                Edit(
                    claim_id=c.claim.claim_id,
                    claim_text=c.claim.text,
                    strategy=p.edits[0].strategy,
                    span=p.span,
                    before=text[p.span[0] : p.span[1]],
                    after="",
                    action="remove_sentence",
                    reason="the revised sentence repeats another sentence of the answer",
                )
            ]
            p.removed = True
        seen.add(key)


def _keep_an_answer(plans: list[_SentencePlan], sentences: dict[tuple[int, int], list[ClaimVerdict]]) -> None:
    """Never empty the answer: if every claim would go, say that the documents do not support it."""
    if not plans or any(not p.removed for p in plans):
        return
    last = plans[-1]
    c = sentences[last.span][0]
    last.removed = False
    last.edits.append(
        Edit(
            claim_id=c.claim.claim_id,
            claim_text=c.claim.text,
            strategy=str(Strategy.REMOVE),
            span=last.span,
            before="",
            after=NO_ANSWER_NOTICE,
            action="no_answer_notice",
            reason="every claim was removed: the answer says the documents do not support it",
        )
    )


def _removal_spans(plans: list[_SentencePlan], text: str) -> None:
    """Removal spans take the whitespace around the sentence; computed on this text and kept apart."""
    prev_end = 0
    for p in plans:
        if p.removed:
            a, b = _removal_span(text, *p.span)
            a = max(a, prev_end)
            p.edits[-1].span, p.edits[-1].before = (a, b), text[a:b]
            prev_end = b
        elif p.edits:
            prev_end = p.span[1]


def _sentence_key(sentence: str) -> str:
    return re.sub(r"\s+", " ", CITATION_RE.sub("", sentence)).strip().rstrip(".!?;: ").lower()


def replay_edits(text: str, edits: list[Edit]) -> str:
    """Apply a ledger of edits to the text they were planned on; raise ValueError if they do not fit.

    Edits that share a span form a chain: the first one's ``before`` must be the text there and
    the last one's ``after`` replaces it. Spans of different chains must not overlap.
    """
    chains: dict[tuple[int, int], list[Edit]] = {}
    for e in edits:
        chains.setdefault((e.span[0], e.span[1]), []).append(e)
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


def is_protected(c: ClaimVerdict, protected: Sequence[set[str]]) -> bool:
    """Whether ``c`` states a claim an earlier attempt found supported or weak (its words, maybe hedged)."""
    stems = set(content_stems(c.claim.text))
    return any(p and len(p & stems) / len(p) >= PROTECTED_CONTAINMENT for p in protected)


def _plan_sentence(
    span: tuple[int, int],
    raw: str,
    claims: list[ClaimVerdict],
    by_anchor: _Anchors,
    thresholds: Thresholds,
    options: RevisionOptions,
    retrieved_ids: frozenset[str],
    protected: Sequence[set[str]] = (),
    unsoftenable: Sequence[set[str]] = (),
    judge: Judge | None = None,
    cite: Callable[[Passage], str] = marker_for,
) -> _SentencePlan:
    """The edits of one sentence, in order: take back a softening that lost support (a0), correct
    contradictions (a), remove or qualify what nothing supports (b), soften weak claims (c), then
    correct the citations (d)."""
    plan = _SentencePlan(span, raw)
    support = _Support(thresholds, judge)
    if options.citations_only:
        if options.correct_citations:
            _correct_citations(plan, claims, by_anchor, support, retrieved_ids, cite=cite)
        return plan
    reverted = _revert_softenings(plan, claims, protected)
    corrected, uncorrected = _correct_contradictions(
        plan, claims, reverted, options, support, thresholds, judge, cite
    )
    to_drop = [
        c
        for c in claims
        if (c.verdict == NOT_FOUND or c in uncorrected)
        and not is_protected(c, protected)
        and c.claim.claim_id not in reverted
    ]
    removed, dropped_ids = _remove_or_qualify(plan, claims, to_drop, options)
    if removed:
        return plan
    _soften_weak(plan, claims, reverted, options, unsoftenable)
    # d) citation correction (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)
    if options.correct_citations:
        _correct_citations(
            plan,
            claims,
            by_anchor,
            support,
            retrieved_ids,
            corrected=bool(corrected),
            dropped=dropped_ids,
            cite=cite,
        )
    return plan


def _revert_softenings(
    plan: _SentencePlan, claims: list[ClaimVerdict], protected: Sequence[set[str]]
) -> set[str]:
    """a0) a softening that cost a once-covered claim its support is taken back (a worse revision);
    return the ids of the claims whose softening was taken back."""
    reverted: set[str] = set()
    for c in claims:
        if c.verdict not in COVERED and is_protected(c, protected) and _already_softened(plan.sent.body):

            def revert(s: _Sentence) -> None:
                s.body = unsoften(s.body)

            if plan.step(
                c,
                Strategy.SOFTEN,
                "the softened wording lost the support the claim had; restored",
                revert,
                action="revert",
            ):
                reverted.add(c.claim.claim_id)
    return reverted


def _correct_contradictions(
    plan: _SentencePlan,
    claims: list[ClaimVerdict],
    reverted: set[str],
    options: RevisionOptions,
    support: _Support,
    thresholds: Thresholds,
    judge: Judge | None,
    cite: Callable[[Passage], str],
) -> tuple[list[ClaimVerdict], list[ClaimVerdict]]:
    """a) contradicted claims: correct to match the evidence; return (corrected, the ones left
    uncorrected that the judge supports nowhere)."""
    uncorrected: list[ClaimVerdict] = []
    corrected: list[ClaimVerdict] = []
    for c in claims:
        if c.verdict != CONTRADICTED or c.claim.claim_id in reverted:
            continue
        if options.correct_contradictions and _correct(plan, c, claims, thresholds, judge, cite):
            corrected.append(c)
        elif not support.anywhere(c):  # a sentence the judge supports is never marked disputed
            uncorrected.append(c)
    return corrected, uncorrected


def _remove_or_qualify(
    plan: _SentencePlan, claims: list[ClaimVerdict], to_drop: list[ClaimVerdict], options: RevisionOptions
) -> tuple[bool, frozenset[str]]:
    """b) claims nothing supports (and contradictions that could not be corrected): remove the
    sentence or the clause, else qualify it. Return (the whole sentence was removed, the ids of
    the claims whose clause was dropped)."""
    if not to_drop:
        return False, frozenset()
    material = [c for c in to_drop if c.claim.importance != IMPORTANCE_MINOR]
    lead = (material or to_drop)[0]
    removable = options.unsupported_action == "remove" and bool(material)
    drop_ids = {c.claim.claim_id for c in material}
    if removable and len(to_drop) == len(claims):
        plan.step(
            lead,
            Strategy.REMOVE,
            "no passage supports the sentence's claims",
            remove=True,
            action="remove_sentence",
            details={"claims": [c.claim.claim_id for c in to_drop]},
        )
        return True, frozenset()
    dropped = _drop_clauses(plan.sent.body, claims, drop_ids) if removable else None
    if dropped is not None:

        def cut(s: _Sentence, new: str = dropped) -> None:
            s.body = new

        clause_dropped = plan.step(
            lead,
            Strategy.REMOVE,
            "no passage supports this clause; the rest stays",
            cut,
            action="remove_clause",
            details={"claims": sorted(drop_ids)},
        )
        return False, frozenset(drop_ids) if clause_dropped else frozenset()
    if not _already_softened(plan.sent.body):
        note = UNSUPPORTED_QUALIFIER if any(c.verdict == NOT_FOUND for c in to_drop) else DISPUTED_QUALIFIER

        def qualify(s: _Sentence, note: str = note) -> None:
            s.body = s.body.rstrip() + " " + note

        plan.step(
            lead,
            Strategy.QUALIFY,
            "no passage supports the claim; the answer says so",
            qualify,
            action="qualify",
            details={"claims": [c.claim.claim_id for c in to_drop]},
        )
    return False, frozenset()


def _soften_weak(
    plan: _SentencePlan,
    claims: list[ClaimVerdict],
    reverted: set[str],
    options: RevisionOptions,
    unsoftenable: Sequence[set[str]],
) -> None:
    """c) weak claims: soften (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop)."""
    for c in claims:
        if (
            c.verdict == WEAK
            and not reverted
            and not _already_softened(plan.sent.body)
            and not is_protected(c, unsoftenable)
        ):
            style = options.softening

            def soft(s: _Sentence, style: str = style) -> None:
                s.body = soften(s.body, style)

            plan.step(
                c, Strategy.SOFTEN, f"evidence only partly supports the claim ({style})", soft, action=style
            )


# (claim words, evidence words, kind) of one span the evidence states differently
_SpanFix = tuple[str, str, str]


def _span_corrections(c: ClaimVerdict, h: EvidenceHit, thresholds: Thresholds) -> list[_SpanFix]:
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
            a, b = (
                _surface(str(f.get("claim") or ""), c.claim.text),
                _surface(str(f.get("evidence") or ""), sentence),
            )
            if a and b and a.lower() != b.lower():
                found.append((a, b, str(f.get("rule"))))
    text = c.claim.text
    return [(a, b, k) for a, b, k in found if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text, re.I)]


def _remaining_spans(claim_text: str, h: EvidenceHit) -> list[tuple[str, str, str]]:
    """(claim words, evidence words, rule) that the structural check finds between ``claim_text`` and
    the evidence sentence of ``h``, examining as many unstated words as the whole-sentence check."""
    report = structural_report(claim_text, [h.passage], similarity_fn())
    out = []
    for f in report.findings:
        if (
            f.rule == "missing_entity"
            or _normal_space(f.sentence)[:200] not in _normal_space(h.best_sentence) + " "
        ):
            continue
        a, b = _surface(f.claim_words, claim_text), _surface(f.evidence_words, h.best_sentence)
        if a and b and a.lower() != b.lower():
            out.append((a, b, f.rule))
    return out


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


_UNIT_WORDS_RE = re.compile(r"(?<!\s)((?:\s++[^\W\d_]+){1,2})")  # one or two words after a value


def _replace_span(text: str, a: str, b: str, evidence: str) -> str:
    """``text`` with the claim words ``a`` replaced by the evidence's ``b``; the unit word after a
    value takes the evidence's number ("2 business days" -> "1 business day")."""
    m = re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text, re.I)
    if not m:
        return text
    out = text[: m.start()] + b + text[m.end() :]
    after_at = m.start() + len(b)
    ev = re.search(rf"(?<!\w){re.escape(b)}(?!\w)((?:\s+[^\W\d_]+){{1,2}})", evidence)
    tail = _UNIT_WORDS_RE.match(out, after_at)
    if ev and tail:
        mine, theirs = tail.group(1).split(), ev.group(1).split()
        fixed = [
            t if (t != w and t.lower().rstrip("s") == w.lower().rstrip("s")) else w
            for w, t in zip(mine, theirs)
        ] + mine[len(theirs) :]
        if fixed != mine:
            words = iter(fixed)
            rebuilt = re.sub(r"\S+", lambda _match: next(words), tail.group(1))
            out = out[:after_at] + rebuilt + out[tail.end(1) :]
    return out


def _correct(
    plan: _SentencePlan,
    c: ClaimVerdict,
    claims: list[ClaimVerdict],
    thresholds: Thresholds,
    judge: "Judge | None" = None,
    cite: Callable[[Passage], str] = marker_for,
) -> bool:
    """Correct the contradicted span of a claim (value, unit, date, entity, predicate, polarity) with
    what one evidence sentence states, only when the rest of the claim aligns with that sentence,
    and only when the corrected claim verifies SUPPORTED against that passage under ``judge`` (the
    judge that labels claims). Never replaces the claim with another sentence."""
    hits = [
        h
        for h in sorted(c.evidence, key=lambda h: (h.cited, h.relevance, h.similarity), reverse=True)
        if h.best_sentence
    ]
    for h in hits:
        spans = [
            (a, b, k)
            for a, b, k in _span_corrections(c, h, thresholds)
            if a.lower() in plan.sent.body.lower()
        ]
        if (
            not spans
            or _aligned(c.claim.text, [a for a, _, _ in spans], h.best_sentence) < CORRECTION_MIN_ALIGNMENT
        ):
            continue
        new_claim = c.claim.text
        for a, b, _ in spans:
            new_claim = _replace_span(new_claim, a, b, h.best_sentence)
        if new_claim == c.claim.text:
            continue
        # the sentence may state two things differently ("1987 … rats" against "monkeys in 1997"): the
        # structural check, examining the corrected claim as the whole-sentence check will, finds what
        # the first spans left; one more span is corrected, whatever the judge said of the first try
        remaining = [
            (a, b, k)
            for a, b, k in _remaining_spans(new_claim, h)
            if a.lower() in plan.sent.body.lower() and all(a.lower() != x.lower() for x, _, _ in spans)
        ]
        if remaining:
            more = remaining[:1]
            if (
                _aligned(c.claim.text, [a for a, _, _ in spans + more], h.best_sentence)
                < CORRECTION_MIN_ALIGNMENT
            ):
                continue
            spans = spans + more
            for a, b, _ in more:
                new_claim = _replace_span(new_claim, a, b, h.best_sentence)
        check = judge(new_claim, h.passage) if judge is not None else None
        if judge is not None and (check is None or check.label != "SUPPORTED"):
            continue
        marker = cite(h.passage)

        def fix(
            s: _Sentence, spans: list[_SpanFix] = spans, marker: str = marker, evidence: str = h.best_sentence
        ) -> None:
            for a, b, _ in spans:
                s.body = _replace_span(s.body, a, b, evidence)
            if marker not in s.text:
                _add_marker(s, marker)

        details: dict[str, Any] = {
            "replaced": [{"from": a, "to": b, "kind": k} for a, b, k in spans],
            "corrected_claim": new_claim,
        }
        if check is not None:
            details["verified"] = {"label": check.label, "confidence": round(float(check.confidence), 4)}
        return plan.step(
            c,
            Strategy.CORRECT,
            "the evidence states this fact differently; only the differing words change",
            fix,
            action="numeric" if all(k == "value" for _, _, k in spans) else "span",
            passage_id=h.passage.id,
            details=details,
        )
    return False
