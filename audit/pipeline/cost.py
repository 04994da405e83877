"""What one audit will cost, estimated from its size before anything is read (``audit_cost``): the
service runs an audit within ``AUDIT_INLINE_COST_BUDGET`` in the request and queues a dearer one."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from audit import constants
from audit.pipeline.extraction import split_sentences
from audit.pipeline.structured import canonical_text
from audit.pipeline.types import Passage


@dataclass(frozen=True)
class AuditCost:
    """An audit's estimated cost (``audit_cost``) and its parts."""

    answer_chars: int
    evidence_chars: int
    sentences: int
    units: int

    @property
    def inline(self) -> bool:
        return self.units <= constants.AUDIT_INLINE_COST_BUDGET

    def as_dict(self) -> dict[str, int]:
        return {**dataclasses.asdict(self), "inline_budget": constants.AUDIT_INLINE_COST_BUDGET}


def audit_cost(
    text: str, passages: Iterable[Passage] = (), *, answer_json: dict[str, Any] | None = None
) -> AuditCost:
    """The cost of auditing ``text`` (a structured answer: ``answer_json``'s canonical text) against
    ``passages``: its characters up to the read budget (the audit reads no more), the passages'
    characters (``AUDIT_COST_EVIDENCE_WEIGHT`` a character: every passage is embedded and searched)
    and ``AUDIT_COST_PER_SENTENCE`` per sentence (the pipeline's own splitter, linear). A drafted
    answer (no text yet) costs what its passages cost."""
    if answer_json is not None:
        text = canonical_text(answer_json)
    evidence = sum(len(p.text) for p in passages)
    sentences = len(split_sentences(text)) if text else 0
    units = (
        min(len(text), constants.AUDIT_READ_BUDGET_CHARS)
        + round(evidence * constants.AUDIT_COST_EVIDENCE_WEIGHT)
        + sentences * constants.AUDIT_COST_PER_SENTENCE
    )
    return AuditCost(answer_chars=len(text), evidence_chars=evidence, sentences=sentences, units=units)


def audit_cost_floor(text: str) -> int:
    """The least ``audit_cost`` of an answer ``text``, whatever its passages and sentences: its
    characters up to the read budget, and one sentence if it holds any word. Costs a length."""
    return min(len(text), constants.AUDIT_READ_BUDGET_CHARS) + (
        constants.AUDIT_COST_PER_SENTENCE if text.strip() else 0
    )


def surely_queued(text: str) -> bool:
    """Whether an audit of ``text`` is over ``AUDIT_INLINE_COST_BUDGET`` before anything is read:
    a full queue can then answer 429 before the claims are extracted and counted."""
    return audit_cost_floor(text) > constants.AUDIT_INLINE_COST_BUDGET
