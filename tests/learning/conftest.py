"""Fixtures of the learning-from-reviewers tests: generated reviewer decisions on generated claims.

``reviewed_workspace(...)`` stores answers, claims and evidence as the audit stores them and records
each reviewer decision through ``review_example_record``, the service the case workflow calls.
The claims come in three kinds, each with a passage of its own:

- ``ok``: the passage states it ("The access review is signed off by the security lead.");
- ``unrelated``: the passage says nothing of it (the judge says NEI, the reviewers too);
- ``numeric``: the passage states the very number ("kept for 90 days"), the judge says SUPPORTED,
  and in the "systematic" workspace reviewers found most of them not supported (say the knowledge
  base's retention figures are outdated): the machine is over-confident on numeric claims.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from audit import roles
from tests.factories import AnswerFactory, ClaimFactory, EvidenceFactory

SUBJECTS = (
    "access review",
    "audit log",
    "backup archive",
    "incident report",
    "vendor assessment",
    "retention schedule",
    "risk register",
    "change request",
    "data export",
    "payroll file",
    "customer complaint",
    "training record",
    "firewall rule",
    "encryption key",
    "expense claim",
    "contract draft",
    "privacy notice",
    "security patch",
    "travel request",
    "supplier invoice",
)
APPROVERS = (
    "compliance officer",
    "security lead",
    "finance director",
    "data protection officer",
    "legal counsel",
)
UNRELATED = (
    "Vendors must encrypt every {s} with a hardware key.",
    "The {s} is emailed to all staff every Monday.",
    "Contractors may skip the {s} during the holidays.",
    "The {s} replaced the old paper checklist in spring.",
)
UNITS = (("days", (30, 90, 180, 365)), ("hours", (4, 24, 48, 72)), ("years", (1, 3, 5, 7)))
DOMAINS = ("finance", "security")


@dataclass
class Generated:
    kind: str
    claim: str
    passage: str
    label: str  # the reviewer's
    domain: str


def generate(n: int, *, seed: int, numeric_wrong: float = 0.9, noise: float = 0.0) -> list[Generated]:
    """``n`` claims with the reviewers' labels: numeric ones NEI with probability ``numeric_wrong``;
    every label flipped (SUPPORTED <-> NEI) with probability ``noise``."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        subject, approver = rng.choice(SUBJECTS), rng.choice(APPROVERS)
        kind = rng.choice(("numeric", "numeric", "ok", "ok", "unrelated"))
        passage = (
            f"Each quarter, the {subject} is signed off by the {approver} and filed in the risk register."
        )
        if kind == "numeric":
            unit, values = rng.choice(UNITS)
            value = rng.choice(values)
            passage = f"The {subject} is kept for {value} {unit} after it is closed, and then the records team deletes it."
            claim = f"The {subject} is kept for {value} {unit} after it is closed."
            label = "NEI" if rng.random() < numeric_wrong else "SUPPORTED"
        elif kind == "ok":
            claim, label = f"The {subject} is signed off by the {approver}.", "SUPPORTED"
        else:
            claim, label = rng.choice(UNRELATED).format(s=subject), "NEI"
        if rng.random() < noise:
            label = "NEI" if label == "SUPPORTED" else "SUPPORTED"
        out.append(Generated(kind, claim, passage, label, rng.choice(DOMAINS)))
    return out


def machine_side(kind: str) -> tuple[str, float]:
    """What the shipped judge says of each kind (checked by the tests that verify them)."""
    return ("NEI", 0.7) if kind == "unrelated" else ("SUPPORTED", 0.95)


def store(workspace, items: list[Generated], *, reviewer, per_answer: int = 2, decided_at=None) -> list:
    """Store the claims (``per_answer`` to an answer) and one reviewer decision each; return the examples."""
    from audit.models.choices import Label
    from audit.pipeline.judges import get_judge
    from audit.services.reviewed_examples import review_example_record

    version = get_judge("features").version
    examples, answer = [], None
    for i, item in enumerate(items):
        if i % per_answer == 0:
            answer = AnswerFactory(workspace=workspace, domain=item.domain)
        machine_label, confidence = machine_side(item.kind)
        claim = ClaimFactory(
            answer=answer,
            claim_id=f"c{i % per_answer + 1}",
            text=item.claim,
            label=machine_label,
            confidence=confidence,
            method_results={
                "entailment": {
                    "ran": True,
                    "score": confidence,
                    "verdict": "supported" if machine_label == "SUPPORTED" else "not_found",
                    "flags": [],
                    "details": {
                        "judge": "features",
                        "judge_version": version,
                        "calibration": None,
                        "logit": 1.0,
                    },
                }
            },
        )
        EvidenceFactory(
            claim=claim, source_id=f"kb_chunk_{answer.pk}_{i}", snippet=item.passage, title="Handbook"
        )
        decision = "confirm" if item.label == machine_label else f"relabel_{item.label.lower()}"
        examples.append(
            review_example_record(
                claim=claim,
                source="case",
                decision=decision,
                reviewer_label=Label(item.label),
                actor=reviewer,
                rationale="generated decision",
                reference=f"COMP-ESC-{i + 1:06d}",
                decided_at=decided_at,
            )
        )
    return examples


@pytest.fixture
def reviewer(make_user):
    return make_user("reviewer1", roles.L2_EXPERT)


@pytest.fixture
def reviewed_workspace(workspace, reviewer):
    """Return a factory: reviewed_workspace(items) stores them in the default workspace and returns it."""

    def factory(items: list[Generated], **kwargs):
        store(workspace, items, reviewer=reviewer, **kwargs)
        return workspace

    return factory


def two_class_bacc(gold: list[str], pred: list[str]) -> float:
    from audit.evaluation.bench_eval import balanced_accuracy, two_class

    return balanced_accuracy(two_class(gold), two_class(pred))
