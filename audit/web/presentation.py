"""Pure helpers that shape stored rows for the pages: inline claim marks, revision diffs, the
links to a filtered list.

No ORM and no HTTP: they take plain values (or model instances already loaded) and return
plain values, so they are tested without a database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Sequence
from urllib.parse import urlencode

from django.urls import reverse

from audit import constants
from audit.models.choices import LABEL_BADGES, Label
from audit.pipeline.revision.served import ServedChange, change_words, changed_claims, mark_served, why_words
from audit.pipeline.text import content_stems


@dataclass
class Segment:
    """A stretch of answer text; ``claims`` is non-empty when the stretch is a claim's sentence."""

    text: str
    claims: list[Any] = field(default_factory=list)


def badge_for(label: str) -> tuple[str, str]:
    """Return (text, css modifier) of the badge of a label; unknown labels read as Needs Evidence."""
    try:
        return LABEL_BADGES[Label(label)]
    except ValueError:
        return LABEL_BADGES[Label.NEI]


def segment_parts(segments: list[Segment], size: int) -> list[list[Segment]]:
    """``segments`` cut into parts of about ``size`` characters each, between stretches (a claim's
    stretch is never cut; a plain stretch longer than ``size`` is cut at ``size``). One part when
    the text is short; every part holds at least one segment."""
    parts: list[list[Segment]] = [[]]
    held = 0
    for seg in segments:
        pieces = (
            [seg]
            if seg.claims
            else [Segment(seg.text[i : i + size]) for i in range(0, len(seg.text), size)] or [seg]
        )
        for piece in pieces:
            if parts[-1] and held + len(piece.text) > size:
                parts.append([])
                held = 0
            parts[-1].append(piece)
            held += len(piece.text)
    return parts


def mark_claims(text: str, claims: Sequence[Any]) -> list[Segment]:
    """Cut ``text`` into plain stretches and claim stretches, in order.

    Each claim has ``span_start``/``span_end`` offsets into ``text``. Claims sharing a span (an
    atomic decomposition of one sentence) share one stretch. A span that overlaps an earlier one
    or falls outside the text is not marked in the text; its claim joins the previous stretch,
    or the last one, so every claim still gets its badge.
    """
    spans: dict[tuple[int, int], list[Any]] = {}
    for claim in sorted(claims, key=lambda c: (c.span_start, c.span_end)):
        spans.setdefault((claim.span_start, claim.span_end), []).append(claim)
    segments: list[Segment] = []
    orphans: list[Any] = []
    cursor = 0
    for (start, end), group in spans.items():
        if start < cursor or end > len(text) or end <= start:
            if segments and segments[-1].claims:
                segments[-1].claims.extend(group)
            else:
                orphans.extend(group)
            continue
        if start > cursor:
            segments.append(Segment(text[cursor:start]))
        segments.append(Segment(text[start:end], list(group)))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text[cursor:]))
    if orphans:
        segments.append(Segment("", orphans))
    return segments


@dataclass
class ReturnedClaim:
    """A claim as the returned (revised) text states it, for its badge: the revision's wording and
    verdict placed where that wording is in the returned text; the received claim when untouched."""

    claim: Any
    label: str
    confidence: float
    span_start: int
    span_end: int
    mark: str = ""  # the served revision's mark of this change ("R1": ``served_changes``), if any

    def __getattr__(self, name):  # pk, claim_id, metrics, evidence… of the claim card
        return getattr(self.claim, name)


def returned_claims(
    text: str, claims: Sequence[Any], marks: Mapping[str, str] | None = None
) -> list[ReturnedClaim]:
    """The claims of the returned ``text``: each claim's revision (or the claim itself when
    untouched) where its wording is found; removed claims are left out. ``marks``: {claim id: the
    mark of its change in the served text}."""
    out: list[ReturnedClaim] = []
    for claim in claims:
        revision = getattr(claim, "revision", None) or {}
        if revision.get("review", {}).get("action") == "restored_received_wording":
            revision = {}  # a reviewer brought the received wording back: the claim stands as received
        wording = revision.get("text", claim.text) if revision else claim.text
        body = (wording or "").strip().rstrip(".!?;: ")
        at = text.find(body) if body else -1
        if at < 0:
            continue
        label = (revision.get("label") or claim.label) if revision else claim.label
        confidence = (
            revision.get("confidence")
            if revision and revision.get("confidence") is not None
            else claim.confidence
        )
        mark = (marks or {}).get(claim.claim_id, "") if revision else ""
        out.append(ReturnedClaim(claim, label, confidence, at, at + len(body), mark))
    return out


def served_changes(
    answer, claims: Sequence[Any], cases_by_claim: dict[int, list[dict]]
) -> list[ServedChange]:
    """The changes a served revision (at once, or accepted) made to ``answer``, each with its mark,
    finding and case (``audit.pipeline.revision.served``); [] when no revision is served."""
    if answer.revision_status not in ("served", "accepted"):
        return []
    return mark_served(answer.text, changed_claims(claims, cases_by_claim))[1]


_TOKEN = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class DiffPart:
    """A piece of a word diff: ``op`` is "equal", "insert" or "delete".

    ``replaced`` marks a deletion directly followed by its replacement, which the page keeps
    apart (a struck "8" and an added "4" must not read as "84").
    """

    op: str
    text: str
    replaced: bool = field(default=False, compare=False)


class WordDiff(list):
    """The parts of a word diff, in order; ``too_long`` says, in words, that the texts were too
    long to compare (then there are no parts), else it is empty."""

    too_long = ""


def _sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end or line break (whitespace kept), in one pass."""
    out: list[str] = []
    start = 0
    previous = ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0].isspace() and ("\n" in token or previous[-1:] in (".", "!", "?")):
            out.append(text[start : match.end()])
            start = match.end()
        previous = token
    if start < len(text):
        out.append(text[start:])
    return out


def _common_ends(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    """How many items ``a`` and ``b`` share at their start, then at their end (not overlapping)."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    return head, tail


def _align(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """Opcodes ("equal" / "replace" / "delete" / "insert", i1, i2, j1, j2) of a longest common
    subsequence of ``a`` and ``b``: exactly len(a) × len(b) steps, whatever the text repeats
    (difflib's matcher costs a further factor on repetitive input)."""
    n, m = len(a), len(b)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below, item = lcs[i], lcs[i + 1], a[i]
        for j in range(m - 1, -1, -1):
            if item == b[j]:
                row[j] = below[j + 1] + 1
            else:
                row[j] = below[j] if below[j] >= row[j + 1] else row[j + 1]
    opcodes: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    i0, j0 = 0, 0
    while i < n or j < m:
        if i < n and j < m and a[i] == b[j]:
            if (i, j) != (i0, j0):
                opcodes.append(("replace", i0, i, j0, j))
            i1, j1 = i, j
            while i < n and j < m and a[i] == b[j]:
                i += 1
                j += 1
            opcodes.append(("equal", i1, i, j1, j))
            i0, j0 = i, j
        elif j >= m or (i < n and lcs[i + 1][j] >= lcs[i][j + 1]):
            i += 1
        else:
            j += 1
    if (i, j) != (i0, j0):
        opcodes.append(("replace", i0, i, j0, j))
    return opcodes


class _Budget:
    """Word comparisons left to one diff (constants.DIFF_MAX_WORD_CELLS)."""

    def __init__(self, cells: int):
        self.cells = cells

    def take(self, cells: int) -> bool:
        if cells > self.cells:
            return False
        self.cells -= cells
        return True


def _changed_words(before: str, after: str, budget: _Budget) -> list[DiffPart]:
    """The word diff of one changed stretch; wholly struck and added when it is too large to align."""
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    head, tail = _common_ends(a, b)
    parts = [DiffPart("equal", "".join(a[:head]))]
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if budget.take(len(mid_a) * len(mid_b)):
        opcodes = _align(mid_a, mid_b)
    else:
        opcodes = [("replace", 0, len(mid_a), 0, len(mid_b))]
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            parts.append(DiffPart("equal", "".join(mid_a[i1:i2])))
            continue
        parts.append(DiffPart("delete", "".join(mid_a[i1:i2])))
        parts.append(DiffPart("insert", "".join(mid_b[j1:j2])))
    parts.append(DiffPart("equal", "".join(a[len(a) - tail :])))
    return parts


def _joined(parts: list[DiffPart]) -> WordDiff:
    """Empty parts dropped, neighbours of one kind joined, and each deletion that its replacement
    directly follows marked ``replaced``."""
    out = WordDiff()
    for part in parts:
        if not part.text:
            continue
        if out and out[-1].op == part.op:
            out[-1] = DiffPart(part.op, out[-1].text + part.text)
        else:
            out.append(part)
    for n, part in enumerate(out):
        if part.op == "delete" and n + 1 < len(out) and out[n + 1].op == "insert":
            out[n] = DiffPart("delete", part.text, replaced=True)
    return out


def word_diff(before: str, after: str) -> WordDiff:
    """Return a word-level diff of two texts (whitespace kept, so the result reads as prose).

    Linear in the texts' length plus a bounded part: the sentences the texts share at their
    start and end are matched in one pass; at most ``DIFF_MAX_CHANGED_SENTENCES`` sentences in
    between are aligned (else the diff is ``too_long``), then the words of each changed stretch,
    at most ``DIFF_MAX_WORD_CELLS`` comparisons in all (a larger stretch is struck and added whole).
    """
    a, b = _sentences(before or ""), _sentences(after or "")
    head, tail = _common_ends(a, b)
    mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
    if max(len(mid_a), len(mid_b)) > constants.DIFF_MAX_CHANGED_SENTENCES:
        diff = WordDiff()
        diff.too_long = (
            f"Too long to compare: the two texts differ in more than "
            f"{constants.DIFF_MAX_CHANGED_SENTENCES} sentences. Both are shown in full."
        )
        return diff
    budget = _Budget(constants.DIFF_MAX_WORD_CELLS)
    parts = [DiffPart("equal", "".join(a[:head]))]
    for op, i1, i2, j1, j2 in _align(mid_a, mid_b):
        if op == "equal":
            parts.append(DiffPart("equal", "".join(mid_a[i1:i2])))
        else:
            parts.extend(_changed_words("".join(mid_a[i1:i2]), "".join(mid_b[j1:j2]), budget))
    parts.append(DiffPart("equal", "".join(a[len(a) - tail :])))
    return _joined(parts)


# Metrics a tooltip may show, in this order, with the words an analyst reads. Internal scores
# (p_refuted: P(contradicted | not supported), meaningless beside a SUPPORTED label) stay on the card.
KEY_METRICS = {
    "faithfulness": "faithfulness",
    "answer_relevance": "relevance to the question",
    "context_precision": "context precision",
    "best_similarity": "similarity to the best passage",
    "selfcheck_disagreement": "self-check disagreement",
    "entailment": "entailment",
    "relevance": "relevance",
}


def key_metrics(metrics: dict | None, limit: int = 3) -> list[tuple[str, float]]:
    """Return up to ``limit`` headline metrics of a claim as (plain name, value), in KEY_METRICS order."""
    metrics = metrics or {}
    numeric = {
        k: float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    return [(name, round(numeric[key], 3)) for key, name in KEY_METRICS.items() if key in numeric][:limit]


METRIC_NAMES = {
    **KEY_METRICS,
    "p_refuted": "chance it is contradicted, if it is not supported",
    "confidence": "confidence it is supported",
    "best_similarity": "similarity to the best passage",
    "cove_consistency": "consistency of the verification questions",
    "external_provenance": "checked against web sources",
    "claim_chars": "characters in the sentence (too long to verify)",
}


def metric_rows(metrics: dict | None, label: str) -> list[tuple[str, str, object]]:
    """(plain name, stored key, value) of a claim's metrics for its card.

    ``p_refuted`` is P(contradicted | not supported): beside a SUPPORTED label it answers a
    question nobody asked (a supported claim can show 1.0), so it is left out there.
    """
    rows = []
    for key, value in (metrics or {}).items():
        if key == "p_refuted" and label == Label.SUPPORTED:
            continue
        rows.append((METRIC_NAMES.get(key, key.replace("_", " ")), key, value))
    return rows


# One meaning for each number: the number beside a label is always P(supported), the
# machine's probability that the evidence backs the claim, named as such whatever the label.
LABEL_MEANINGS = {
    Label.SUPPORTED: "Supported: the evidence backs this claim (P(supported) {c}).",
    Label.REFUTED: "Refuted: the evidence contradicts this claim (P(supported) {c}).",
    Label.NEI: "Not enough evidence: no source backs this claim well enough to count as supported, "
    "and none contradicts it (P(supported) {c}).",
}


def label_meaning(label: str, confidence: float | None) -> str:
    """One sentence saying what a claim's label means, with P(supported) named as such."""
    try:
        text = LABEL_MEANINGS[Label(label)]
    except ValueError:
        text = LABEL_MEANINGS[Label.NEI]
    return text.format(c=f"{float(confidence or 0.0):.2f}")


def revision_view(claim) -> dict | None:
    """What the revision loop changed on a claim and why, in words (the claim card); None when untouched."""
    rev = claim.revision or {}
    if not rev:
        return None
    strategy = str(rev.get("strategy") or "")
    what = change_words(strategy, removed=not rev.get("text"), cited=bool(rev.get("cited")))
    why = why_words(claim.machine_label) if claim.machine_label != Label.SUPPORTED else ""
    review = rev.get("review") or {}
    return {
        "what": what,
        "why": why,
        "text": rev.get("text") or "",
        "review": review,
    }


# --- Evidence: the sentence a verdict rests on, highlighted inside its snippet -------------------

# Linear time on any input: a link's text and target hold no bracket of their own, and a rule is
# one line (a run of blank lines is never re-read from each of its lines).
_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^)\[\]]*\)")
_MD_LINE_PREFIX = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)", re.MULTILINE)
# emphasis holds no mark of its own kind: an opening mark that never closes is given up at the next one
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)((?:(?!\1).)+?)(?<=\S)\1")
_MD_RULE = re.compile(r"^[^\S\n]*(?:[-*_][^\S\n]*){3,}$", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n{2,}")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")

POLARITY_TEXT = {
    "supports": "Supports the claim",
    "contradicts": "Contradicts the claim",
    "related": "Closest sentence (neither supports nor contradicts the claim)",
}


def strip_markdown(text: str) -> str:
    """Return ``text`` without markdown markup: headings, quotes, list markers, emphasis, links, rules."""
    text = _MD_LINK.sub(r"\1", text or "")
    text = _MD_RULE.sub("", text)
    text = _MD_LINE_PREFIX.sub("", text)
    text = _MD_EMPHASIS.sub(r"\2", text)
    return _BLANK_LINES.sub("\n", text).strip()


_ABBREVIATION_END = re.compile(r"(?:\b[A-Z]|\b(?:e\.g|i\.e|et al|Dr|Mr|Mrs|Ms|St|vs|Fig|No|approx|cf))\.$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Return the (start, end) offsets of the sentences of ``text`` (a line break also ends one;
    initials and common abbreviations such as "H.M." or "e.g." do not)."""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        # the abbreviation is read in the last dozen characters, not in the whole sentence so far
        if "\n" not in match.group() and _ABBREVIATION_END.search(
            text, max(start, match.start() - 12), match.start()
        ):
            continue
        if text[start : match.start()].strip():
            spans.append((start, match.start()))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


def _alignment(claim_stems: set[str], sentence: str) -> float:
    return len(claim_stems & set(content_stems(sentence))) / len(claim_stems) if claim_stems else 0.0


def _verdict_hints(claim) -> dict:
    """Sentences and quantities the verification methods named for this claim (from method_results)."""
    results = claim.method_results or {}
    structure = (results.get("structure") or {}).get("details") or {}
    numeric = ((results.get("numeric") or {}).get("details") or {}).get("items") or []
    return {
        "contradicting": [
            (f.get("sentence", ""), f.get("passage_id", ""))
            for f in structure.get("findings") or []
            if f.get("rule") != "missing_entity"
        ],
        "numbers_agree": [i["evidence_value"] for i in numeric if i.get("match") and i.get("evidence_value")],
        "numbers_differ": [
            i["evidence_value"] for i in numeric if not i.get("match") and i.get("evidence_value")
        ],
        "per_hit": (((results.get("entailment") or {}).get("details") or {}).get("per_hit") or {}),
    }


def _stance_score(polarity: str, evidence, per_hit: dict) -> tuple[str, float] | None:
    """(name, value) of the score of an evidence row's stance: "support" on a row that supports the
    claim, "contradiction" (the judge's P(refuted) for the passage) on one that contradicts it; None on
    a row that does neither, or when the score was not recorded. Never a support score on a
    contradicting row."""
    if polarity == "supports" and getattr(evidence, "entailment", None) is not None:
        return ("support", float(evidence.entailment))
    if polarity == "contradicts" and per_hit.get("p_refuted") is not None:
        return ("contradiction", float(per_hit["p_refuted"]))
    return None


def evidence_view(claim, evidence, *, min_alignment: float = 0.4, hints: dict | None = None) -> dict:
    """Return how to show one evidence passage of a claim: its snippet (markdown stripped) cut
    into before / sentence / after around the sentence the verdict rests on, and its polarity.

    The sentence is the one of the snippet that holds most of the claim's content words, with a
    bonus for one a method named (a structural contradiction's sentence, a quantity that agreed
    or differed). Polarity: ``contradicts`` for a sentence a structural rule or a differing
    quantity points at, or for the best passage of a REFUTED claim; ``supports`` for an aligned
    passage of a SUPPORTED claim; else ``related``. ``bears`` says whether the passage is about
    the claim at all (aligned at ``min_alignment`` or a method named it).
    """
    hints = hints if hints is not None else _verdict_hints(claim)
    text = strip_markdown(evidence.snippet)
    claim_stems = set(content_stems(claim.text))
    best, best_score, best_align = None, -1.0, 0.0
    named = set()
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        align = _alignment(claim_stems, sentence)
        score = align
        if any(s and (s[:80] in sentence or sentence[:80] in s) for s, _ in hints["contradicting"]):
            score += 1.0
            named.add((start, end))
        if any(v in sentence for v in hints["numbers_agree"] + hints["numbers_differ"]):
            score += 0.5
            named.add((start, end))
        if score > best_score:
            best, best_score, best_align = (start, end), score, align
    per_hit = hints["per_hit"].get(evidence.source_id) or {}
    label = getattr(claim, "label", "")
    polarity = "related"
    if best is not None:
        sentence = text[best[0] : best[1]]
        if best in named and (
            any(s and (s[:80] in sentence or sentence[:80] in s) for s, _ in hints["contradicting"])
            or any(v in sentence for v in hints["numbers_differ"])
        ):
            polarity = "contradicts"
        elif (
            label == Label.REFUTED
            and best_align >= min_alignment
            and (per_hit.get("p_refuted", 0) >= 0.5 or evidence.rank == 0)
        ):
            polarity = "contradicts"
        elif label == Label.SUPPORTED and (best_align >= min_alignment or best in named):
            polarity = "supports"
    start, end = best or (0, 0)
    return {
        "evidence": evidence,
        "stance_score": _stance_score(polarity, evidence, per_hit),
        "before": text[:start],
        "sentence": text[start:end],
        "after": text[end:],
        "polarity": polarity,
        "polarity_text": POLARITY_TEXT[polarity],
        "alignment": round(best_align, 2),
        "bears": best is not None and (best_align >= min_alignment or best in named or polarity != "related"),
    }


def evidence_views(claim, evidence_rows, *, min_alignment: float = 0.4) -> list[dict]:
    """``evidence_view`` for each passage of a claim (the methods' hints read once)."""
    hints = _verdict_hints(claim)
    return [evidence_view(claim, ev, min_alignment=min_alignment, hints=hints) for ev in evidence_rows]


# --- Audit trail in words ------------------------------------------------------------------------

EVENT_WORDS = {
    "answer.recorded": "recorded the answer without verification (Normal mode)",
    "answer.audited": "audited the answer",
    "answer.audited_from": "audited a Normal answer's text as this answer",
    "answer.audit_requested": "asked for this Normal answer to be audited",
    "answer.mode_resolved": "chose the verification mode",
    "answer.revised": "revised the answer before returning it",
    "answer.revision_checked": "checked the revision against the evidence",
    "answer.web_escalation": "decided whether to check the web",
    "answer.suppressed": "suppressed the answer",
    "answer.metrics_recomputed": "recomputed the answer's metrics after a reviewer's decision",
    "claim.flagged": "flagged the claim for attention",
    "claim.relabelled": "changed the claim's label",
    "claim.label_confirmed": "confirmed the claim's label",
    "claim.label_drifted": "re-checked the claim and its label changed",
    "claim.web_verified": "re-checked the claim against web sources",
    "curation.opened": "opened a knowledge-base correction",
    "nightly.started": "started the nightly audit",
    "nightly.resumed": "resumed the nightly audit",
    "nightly.finished": "finished the nightly audit",
    "retention.purged": "purged data past retention",
    "settings.mode_changed": "changed a mode setting",
    "settings.thresholds_changed": "changed the thresholds",
    "api.token_created": "created an API token",
}
_WEB_STATUS_WORDS = {
    "done": "checked the answer against web sources",
    "failed": "tried web sources; every call failed, so the local result stands",
}


def event_words(action: str, details: dict | None = None, mode: str = "") -> str:
    """Return what an audit event says happened, in words (``answer.web_verified`` depends on its outcome)."""
    details = details or {}
    if action == "answer.web_verified":
        status = str(details.get("status", ""))
        return _WEB_STATUS_WORDS.get(
            status, "skipped the web check" + (f" ({details['skipped']})" if details.get("skipped") else "")
        )
    if action.startswith("case."):
        return (
            f"{action.split('.', 1)[1].replace('_', ' ')} the review case"
            if action != "case.note"
            else "noted on the review case"
        )
    if action.startswith("kb.document_"):
        return f"{action.rsplit('_', 1)[1]} a knowledge-base document"
    if action.startswith("admin."):
        return "changed a record in the admin console"
    return EVENT_WORDS.get(action, action.replace(".", " ").replace("_", " "))


def event_actor(event) -> str:
    """The person who acted, or "system" (with the component, when one is named) for automatic actors."""
    if getattr(event, "actor_id", None):
        return event.actor_label or "a user"
    label = (event.actor_label or "").strip()
    return "system" if label in ("", "system") else f"system ({label.replace('_', ' ')})"


# --- Revisions a person approves -------------------------------------------------------------------

_FINDING_WORDS = {
    "substitution": "“{claim}” where the source says “{evidence}”",
    "antonym": "“{claim}” where the source says the opposite, “{evidence}”",
    "negation": "the source states the opposite (a negation)",
    "missing_entity": "“{claim}” is named by no source",
    "unstated_obligation": "no source states “{claim}”",
    "unstated_content": "no source states “{claim}”",
    "role_reversed": "“{claim}” bound the other way round in the source (“{evidence}”)",
    "role_mismatch": "“{claim}” bound to another name in the source (“{evidence}”)",
}
# a rule without words of its own reads as a plain phrase, never as its code
_RULE_FALLBACK = "a structural check found the wording unsupported ({rule})"
# edits that need no passage: they take back, qualify or soften what the evidence does not back
_UNBACKED_STRATEGIES = {
    "remove": "removes what no passage backs",
    "qualify": "marks what no passage backs as not found",
    "soften": "softens what the evidence only weakly backs",
}


def finding_words(finding: dict) -> str:
    """One structural finding in words ("“rats” where the source says “monkeys”")."""
    rule = str(finding.get("rule", ""))
    template = _FINDING_WORDS.get(rule, _RULE_FALLBACK)
    return template.format(
        claim=finding.get("claim", ""), evidence=finding.get("evidence", ""), rule=rule.replace("_", " ")
    )


def _passages_of(answer) -> dict[str, dict]:
    """Every passage an edit of the answer may name, by id: its claims' evidence, then its contexts."""
    out: dict[str, dict] = {}
    for claim in answer.claims.all():
        for ev in claim.evidence.all():
            out.setdefault(
                str(ev.source_id), {"title": ev.title or ev.source_id, "uri": ev.uri, "text": ev.snippet}
            )
    for ctx in answer.contexts or []:
        if isinstance(ctx, dict) and str(ctx.get("id", "")) not in out:
            out[str(ctx.get("id", ""))] = {
                "title": ctx.get("title") or f"Passage [{ctx.get('id')}]",
                "uri": ctx.get("uri", ""),
                "text": ctx.get("text") or "",
            }
    return out


def backing_sentence(passage_text: str, wording: str) -> str:
    """The sentence of a passage that holds most of ``wording``'s content words (what backs an edit)."""
    text = strip_markdown(passage_text)
    stems = set(content_stems(wording))
    spans = sentence_spans(text)
    if not spans:
        return text[:300]
    start, end = max(spans, key=lambda span: _alignment(stems, text[span[0] : span[1]]))
    return text[start:end]


def proposal_view(answer, *, preview: bool = False) -> dict:
    """What a revision shows for a person's approval (claims and their evidence loaded).

    The answer as received and the proposed text, their word diff, each edit with the passage
    that backs it (or why it needs none), and each revised claim with its finding beside the new
    wording and the label of its sentence judged whole.
    """
    loop = next(
        (r for r in reversed(answer.revisions or []) if r.get("source") == "revision_loop"),
        {},
    )
    original = answer.original_text or answer.text
    proposed = answer.proposed_text or answer.text
    passages = _passages_of(answer)
    edits = []
    for edit in loop.get("ledger") or []:
        strategy = edit.get("strategy", "")
        passage = passages.get(str(edit.get("passage_id") or ""))
        if passage is not None:
            wording = edit.get("after") or edit.get("claim_text") or ""
            passage = {**passage, "sentence": backing_sentence(passage["text"], wording)}
        edits.append(
            {
                "claim_id": edit.get("claim_id", ""),
                "strategy": strategy,
                "before": edit.get("before", ""),
                "after": edit.get("after", ""),
                "reason": edit.get("reason", ""),
                "passage": passage,
                "unbacked": _UNBACKED_STRATEGIES.get(strategy, ""),
            }
        )
    claims = []
    for claim in answer.claims.all():
        revision = claim.revision or {}
        if not revision:
            continue
        sentence = revision.get("sentence") or {}
        claims.append(
            {
                "claim": claim,
                "strategy": revision.get("strategy", ""),
                "text": revision.get("text", ""),
                "label": revision.get("label"),
                "confidence": revision.get("confidence"),
                "sentence": sentence,
                "findings": [finding_words(f) for f in sentence.get("findings") or []],
            }
        )
    workspace = answer.workspace
    held_in = (
        "every domain"
        if workspace.revision_approval == "all"
        else ", ".join(workspace.revision_approval_domains or workspace.regulated_domains or [])
        or "no domain"
    )
    view = {
        "answer": answer,
        "held_in": held_in,
        "status": answer.revision_status,
        "decision": answer.revision_decision or {},
        "original": original,
        "proposed": proposed,
        "diff": None,
        "edits": edits,
        "claims": claims,
        "cut": {},
    }
    return _previewed(view) if preview else {**view, "diff": word_diff(original, proposed)}


def _previewed(view: dict) -> dict:
    """A list page's preview of a proposal (``UI_PREVIEW_CHARS``, ``UI_PREVIEW_EDITS``): the start of
    both texts, no word diff past that, the first edits and claims; the answer's page has all."""
    original, proposed, edits, claims = view["original"], view["proposed"], view["edits"], view["claims"]
    limit, n = constants.UI_PREVIEW_CHARS, constants.UI_PREVIEW_EDITS
    texts = len(original) > limit or len(proposed) > limit
    if not texts and len(edits) <= n and len(claims) <= n:
        return {**view, "diff": word_diff(original, proposed)}
    return {
        **view,
        "original": original[:limit],
        "proposed": proposed[:limit],
        "diff": None if texts else word_diff(original, proposed),
        "edits": edits[:n],
        "claims": claims[:n],
        "cut": {
            "chars": max(len(original), len(proposed)),
            "edits": len(edits),
            "claims": len(claims),
            "texts": texts,
        },
    }


# --- External sources (Audit-Web) in words -------------------------------------------------------

_WEB_REASONS = {
    "audit_score_below_threshold": "confidence below {t.audit_score_threshold:.2f}",
    "no_local_support": "no supporting passage in the request or the knowledge base",
    "selfcheck_disagreement": "self-check disagreement above {t.selfcheck_disagreement_threshold:.2f}",
    "stale_source": "a source past its freshness limit",
}
_PROVIDERS = {"pubmed": "PubMed", "arxiv": "arXiv", "page": "a web page"}


def web_reason_words(reason: str, thresholds) -> str:
    """Why a claim went to the web, in words, with the threshold in force."""
    template = _WEB_REASONS.get(reason)
    return template.format(t=thresholds) if template else reason.replace("_", " ")


def web_status_words(status: str) -> str:
    if status == "done":
        return "the web sources were consulted and their evidence weighed"
    if status == "failed":
        return "every call was refused or failed, so the local result stands"
    if status.startswith("skipped"):
        why = status.partition(":")[2].strip()
        return f"skipped ({why})" if why else "skipped"
    return status


def provider_name(provider: str) -> str:
    return _PROVIDERS.get(provider, provider)


def providers_text(calls: list[dict]) -> str:
    """'PubMed and arXiv' for the providers of the given calls, in the order first called."""
    names = list(dict.fromkeys(provider_name(c["provider"]) for c in calls))
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)


def attempt_summary(summary: dict) -> str:
    """A revision attempt's figures in words: coverage, material claims without evidence, contradicted."""
    coverage = float(summary.get("coverage") or 0.0)
    parts = [f"evidence coverage {coverage * 100:.0f} %"]
    if "material" in summary:
        parts.append(
            f"no evidence found for {summary.get('unsupported_material', 0)} of "
            f"{summary['material']} material claim{'s' if summary['material'] != 1 else ''}"
        )
    else:
        parts.append(
            f"no evidence found for {float(summary.get('unsupported_rate') or 0) * 100:.0f} % of material claims"
        )
    if "contradicted" in summary:
        parts.append(f"{summary['contradicted']} contradicted")
    return " · ".join(parts)


def human_label(claim) -> dict:
    """Whether a person set or confirmed the claim's label, and what the machine said.

    ``{"override", "confirmed", "by", "machine_label", "machine_text"}``; a claim as the revised
    text states it (``ReturnedClaim``) is judged by the claim it stands for.
    """
    claim = getattr(claim, "claim", None) or claim
    entries = [h for h in (claim.label_history or []) if isinstance(h, dict) and h.get("by_human")]
    last = entries[-1] if entries else {}
    override = claim.label != claim.machine_label
    return {
        "override": override,
        "confirmed": bool(last) and not override and last.get("to") == claim.label,
        "by": last.get("by", "a reviewer") if last else "a reviewer",
        "machine_label": claim.machine_label,
        "machine_text": badge_for(claim.machine_label)[0],
    }


def list_url(name: str, params: Mapping[str, Any] | None = None) -> str:
    """The URL named ``name`` with ``params`` as its query string (blank values left out)."""
    query = urlencode({k: v for k, v in (params or {}).items() if v not in (None, "")}, doseq=True)
    return reverse(name) + (f"?{query}" if query else "")
