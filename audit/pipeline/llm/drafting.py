"""Answers written by Theoria: a draft with citation anchors (Normal mode, a query but no
answer) and a rewrite for the revision loop (docs/SPEC_NOTES.md#quality-gates-and-the-revision-loop calls :func:`rewrite_answer`).

Citation anchors are ``[n]``: passage n of the list given, in order. :func:`draft_answer`
returns the passages with ``str(n)`` added to their anchors so the pipeline resolves them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import partial

from audit.constants import DRAFT_MAX_SENTENCES, LLM_EVIDENCE_CHARS
from audit.pipeline import extraction as offline
from audit.pipeline.llm.client import LLMClient, LLMError, task_max_tokens
from audit.pipeline.llm.common import unavailable_reason
from audit.pipeline.llm.prompts import (
    DRAFT_SYSTEM,
    REWRITE_SYSTEM,
    messages,
    numbered_passages,
)
from audit.pipeline.text import content_stems
from audit.pipeline.types import Passage

METHOD_LLM = "llm_draft"
METHOD_OFFLINE = "extractive_draft"
NO_ANSWER = "The available sources do not answer this question."
_ANCHOR_RE = re.compile(r"\[(\d{1,3})\]")


@dataclass
class Draft:
    """A drafted answer, the passages its anchors name, and how it was written."""

    text: str
    passages: list[Passage]
    method: str
    fallback: str = ""


def numbered(passages: list[Passage]) -> list[Passage]:
    """The passages with ``str(n)`` (1-based position) added to their citation anchors."""
    return [replace(p, anchors=tuple(dict.fromkeys((*p.anchors, str(i))))) for i, p in enumerate(passages, 1)]


def draft_offline(query: str, passages: list[Passage]) -> str:
    """An extractive answer: the passage sentences sharing most content words with the query.

    Deterministic; each sentence keeps the anchor of its passage. Used when no LLM is usable.
    """
    wanted = set(content_stems(query))
    scored = []
    for n, passage in enumerate(passages, 1):
        for order, sentence in enumerate(offline.split_sentences(passage.text)):
            overlap = len(wanted & set(content_stems(sentence)))
            if overlap and offline.is_assertion(sentence):
                scored.append((-overlap, n, order, offline.strip_citations(sentence).rstrip()))
    if not scored:
        return NO_ANSWER
    top = -min(scored)[0]
    # keep the sentences that share more than half as many query words as the best one
    best = [row for row in sorted(scored) if -row[0] * 2 > top][:DRAFT_MAX_SENTENCES]
    best.sort(key=lambda row: (row[1], row[2]))  # reading order: passage, then sentence
    parts = []
    for _, n, _, sentence in best:
        body = sentence[:-1] if sentence.endswith((".", "!", "?")) else sentence
        parts.append(f"{body} [{n}].")
    return " ".join(parts)


def _valid_anchors(text: str, count: int) -> str | None:
    """The text with out-of-range ``[n]`` markers removed, or None if no valid anchor remains."""
    cleaned = _ANCHOR_RE.sub(lambda m: m.group(0) if 1 <= int(m.group(1)) <= count else "", text)
    return cleaned.strip() if any(1 <= int(n) <= count for n in _ANCHOR_RE.findall(cleaned)) else None


def draft_answer(
    client: LLMClient | None, query: str, passages: list[Passage], *, system: str = DRAFT_SYSTEM
) -> Draft:
    """Draft an answer to ``query`` from ``passages`` with ``[n]`` anchors; offline on any failure.

    ``system`` is the prompt of a generation mode (``audit.pipeline.llm.generation``).

    An LLM draft is refused (recorded as a ``schema`` failure) when it cites no valid passage (an
    answer without anchors cannot be audited against its sources), when the server cut it off at
    the token cap, or when it repeats the prompt instead of answering (``LLMClient.complete_text``).
    """
    passages = numbered(passages)
    reason = unavailable_reason(client)
    if reason is None and not passages:
        reason = "no passages to draft from"
    if client is not None and reason is None:
        user = f"Passages:\n{numbered_passages([p.text for p in passages])}\n\nQuestion: {query}"
        try:
            text = client.complete_text(
                purpose="draft_answer", messages=messages(system, user), instructions=system
            )
            cited = _valid_anchors(text, len(passages))
            if cited is not None:
                return Draft(cited, passages, METHOD_LLM)
            raise client.refusal("draft_answer", "the draft cites no passage")
        except LLMError as exc:
            reason = exc.kind
    return Draft(draft_offline(query, passages), passages, METHOD_OFFLINE, reason or "")


def passage_marker(passage: Passage) -> str:
    """The marker that cites ``passage`` in an answer: its first anchor, else ``cite:<id>``."""
    anchor = passage.anchors[0] if passage.anchors else f"cite:{passage.id}"
    return f"[{anchor}]"


def rewrite_answer(
    client: LLMClient | None, *, query: str, answer: str, instructions: list[dict], passages: list[Passage]
) -> str:
    """Return ``answer`` rewritten by the LLM to carry out the revision ``instructions``.

    Matches ``audit.pipeline.revision.Rewriter`` once bound to a client (:func:`make_rewriter`):
    ``instructions`` are the revision loop's rows (claim_id, claim, verdict, strategy,
    instruction) and each passage is shown under the marker that cites it, so kept sentences
    keep their markers. Raises LLMError when no LLM is usable or the call fails; the revision
    loop then uses its offline strategies (the failure is on the client's accounting).
    """
    reason = unavailable_reason(client)
    if reason:
        raise LLMError("circuit_open", reason, purpose="rewrite_answer")
    listing = (
        "\n".join(
            f"- {i.get('claim_id') or 'answer'} ({i.get('verdict') or 'citations'}): {i.get('claim', '')} "
            f"-> {i.get('instruction', '')}".strip()
            for i in instructions
        )
        or "- (none)"
    )
    sources = "\n\n".join(f"{passage_marker(p)} {p.text.strip()[:LLM_EVIDENCE_CHARS]}" for p in passages)
    user = (
        f"Question: {query}\n\nPassages:\n{sources or '(no passages)'}\n\nAnswer:\n{answer}\n\n"
        f"Problem claims and what to do:\n{listing}"
    )
    return client.complete_text(
        purpose="rewrite_answer",
        messages=messages(REWRITE_SYSTEM, user),
        instructions=REWRITE_SYSTEM,
        max_tokens=task_max_tokens("rewrite_answer") + len(answer) // 3,
    )


def make_rewriter(client: LLMClient | None):
    """A ``Rewriter`` for ``revise_answer(rewriter=...)`` bound to ``client``; None when offline."""
    if client is None:
        return None
    return partial(rewrite_answer, client)
