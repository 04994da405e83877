"""The queue as a CSV file: the rows of the list the analyst is looking at, with its filters.

``case_rows`` turns the filtered queryset of ``selectors.case_list`` into one dict per case,
a chunk at a time (two queries per chunk: the breaches and the resolutions of its cases); the
view streams them through the one CSV writer of every export (``audit.web.exports``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import QuerySet

from .models import ReviewCase, ReviewEvent

CSV_COLUMNS = (
    "ticket",
    "status",
    "tier",
    "owner",
    "due_at",
    "sla_state",
    "breached",
    "domain",
    "trigger",
    "risk",
    "answer_id",
    "claim_id",
    "claim_text",
    "machine_label",
    "label",
    "reviewer_label",
    "reviewer",
    "decision",
    "opened_at",
    "resolved_at",
)
CHUNK = 500
# the label a resolution leaves on the claim: a relabel names it; a confirmation keeps the label
RELABELS: dict[str, str] = {
    ReviewCase.Decision.RELABEL_SUPPORTED.value: "SUPPORTED",
    ReviewCase.Decision.RELABEL_REFUTED.value: "REFUTED",
    ReviewCase.Decision.RELABEL_NEI.value: "NEI",
}


def _iso(moment: Any) -> str:
    return moment.isoformat() if moment else ""


def _row(case: ReviewCase, breaches: list[ReviewEvent], resolution: ReviewEvent | None) -> dict[str, Any]:
    claim = case.claim
    decision: str = case.decision if case.status == ReviewCase.Status.RESOLVED else ""
    reviewer_label = RELABELS.get(decision, claim.label if decision == ReviewCase.Decision.CONFIRM else "")
    return {
        "ticket": case.ticket,
        "status": case.status,
        "tier": case.tier,
        "owner": case.owner.get_username() if case.owner else "",
        "due_at": _iso(case.due_at),
        "sla_state": case.sla_state,
        "breached": " | ".join(f"L{e.tier} {_iso(e.at)}" for e in breaches),
        "domain": case.domain,
        "trigger": case.trigger,
        "risk": f"{case.risk_score:.2f}",
        "answer_id": claim.answer.public_id,
        "claim_id": claim.claim_id,
        "claim_text": claim.text,
        "machine_label": claim.machine_label,
        "label": claim.label,
        "reviewer_label": reviewer_label,
        "reviewer": (resolution.actor_label or "system") if resolution and decision else "",
        "decision": decision,
        "opened_at": _iso(case.opened_at),
        "resolved_at": _iso(case.resolved_at),
    }


def case_rows(cases: QuerySet[ReviewCase]) -> Iterator[dict[str, Any]]:
    """One dict per case of ``cases`` (in its order), by ``CSV_COLUMNS``."""
    chunk: list[ReviewCase] = []
    for case in cases.iterator(chunk_size=CHUNK):
        chunk.append(case)
        if len(chunk) == CHUNK:
            yield from _chunk_rows(chunk)
            chunk = []
    if chunk:
        yield from _chunk_rows(chunk)


def _chunk_rows(chunk: list[ReviewCase]) -> Iterator[dict[str, Any]]:
    events = ReviewEvent.objects.filter(
        case__in=[c.pk for c in chunk], kind__in=(ReviewEvent.Kind.BREACHED, ReviewEvent.Kind.RESOLVED)
    ).order_by("at", "id")
    breaches: dict[int, list[ReviewEvent]] = {}
    resolutions: dict[int, ReviewEvent] = {}
    for event in events:
        if event.kind == ReviewEvent.Kind.BREACHED:
            breaches.setdefault(event.case_id, []).append(event)
        else:
            resolutions[event.case_id] = event  # the latest one wins
    for case in chunk:
        yield _row(case, breaches.get(case.pk, []), resolutions.get(case.pk))
