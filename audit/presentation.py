"""Pure helpers that shape stored rows for the pages: inline claim marks, revision diffs.

No ORM and no HTTP: they take plain values (or model instances already loaded) and return
plain values, so they are tested without a database.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from audit.models.choices import LABEL_BADGES, Label
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

    def __getattr__(self, name):  # pk, claim_id, metrics, evidence… of the claim card
        return getattr(self.claim, name)


def returned_claims(text: str, claims: Sequence[Any]) -> list[ReturnedClaim]:
    """The claims of the returned ``text``: each claim's revision (or the claim itself when
    untouched) where its wording is found; removed claims are left out."""
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
        out.append(ReturnedClaim(claim, label, confidence, at, at + len(body)))
    return out


_TOKEN = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class DiffPart:
    """A piece of a word diff: ``op`` is "equal", "insert" or "delete"."""

    op: str
    text: str


def word_diff(before: str, after: str) -> list[DiffPart]:
    """Return a word-level diff of two texts (whitespace kept, so the result reads as prose)."""
    a, b = _TOKEN.findall(before or ""), _TOKEN.findall(after or "")
    parts: list[DiffPart] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(DiffPart("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(DiffPart("delete", "".join(a[i1:i2])))
        if j2 > j1:
            parts.append(DiffPart("insert", "".join(b[j1:j2])))
    return parts


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


LABEL_MEANINGS = {
    Label.SUPPORTED: "Supported: confidence {c} that the evidence backs this claim.",
    Label.REFUTED: "Refuted: the evidence contradicts this claim (confidence it is supported: only {c}).",
    Label.NEI: "Needs evidence: nothing found backs or contradicts this claim (confidence it is supported: {c}).",
}


def label_meaning(label: str, confidence: float | None) -> str:
    """One sentence saying what a claim's label means, with the confidence that goes with it."""
    try:
        text = LABEL_MEANINGS[Label(label)]
    except ValueError:
        text = LABEL_MEANINGS[Label.NEI]
    return text.format(c=f"{float(confidence or 0.0):.2f}")


# --- Evidence: the sentence a verdict rests on, highlighted inside its snippet -------------------

# Linear time on any input: a link's text and target hold no bracket of their own, and a rule is
# one line (a run of blank lines is never re-read from each of its lines).
_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^)\[\]]*\)")
_MD_LINE_PREFIX = re.compile(r"^\s{0,3}(?:#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)", re.MULTILINE)
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1")
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
