"""How a case's clocks read on the pages: business-time countdowns and acknowledgement times.

Pure functions over a case's columns, its events and the workspace calendar (no queries), so
the queue and the case page show the same words and the countdown script only has to sum the
working windows it is given.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from audit import constants
from escalation.models import ReviewCase, ReviewEvent

from . import policy

# what the running clock asks for, as the countdown says it ("2 h left to resolve")
PHASE_GOALS = {policy.Phase.ACKNOWLEDGE: "to acknowledge", policy.Phase.RESOLVE: "to resolve"}
MAX_WINDOWS = 60  # working windows sent to the page (an L3 day spans two or three)


def duration_text(seconds: float) -> str:
    """'under 1 min', '4 min', '2 h 5 min', '1 d 3 h' (whole minutes, rounded down)."""
    minutes = int(max(seconds, 0) // 60)
    if minutes < 1:
        return "under 1 min"
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{minutes} min"


def clock_word(tier: int, phase: str | None = None) -> str:
    """'' for a wall clock, 'business' for a tier's clock (``phase``, default its first) counted in business time."""
    return "" if policy.sla_clock(tier, phase) == constants.SLA_CLOCK_WALL else "business"


def countdown(case: ReviewCase, calendar: policy.Calendar, now: datetime) -> dict[str, Any]:
    """Return the running clock of a case: clock time left, and the windows in which it runs.

    ``windows`` are [start, end] pairs in epoch milliseconds between ``now`` and the deadline:
    the whole span for a wall clock, each working window for business time. The page sums their
    overlap with [now, due] every second, so a business clock stands still at night.
    """
    if case.due_at is None:
        return {"running": False}
    tier = case.tier
    phase = case.clock_phase
    business = policy.sla_clock(tier, phase) != constants.SLA_CLOCK_WALL
    windows: list[tuple[datetime, datetime]] = []
    if now < case.due_at:
        if business:
            for opens, closes in calendar.windows_from(now):
                if opens >= case.due_at or len(windows) >= MAX_WINDOWS:
                    break
                windows.append((opens, min(closes, case.due_at)))
        else:
            windows.append((now, case.due_at))
    left = sum((end - start).total_seconds() for start, end in windows)
    in_hours = bool(windows) and windows[0][0] <= now
    return {
        "running": True,
        "phase": phase,
        "goal": PHASE_GOALS[phase],
        "business": business,
        "left_s": left,
        "left_text": duration_text(left),
        "windows_json": json.dumps(
            [[int(s.timestamp() * 1000), int(e.timestamp() * 1000)] for s, e in windows]
        ),
        "stands_still": business and bool(windows) and not in_hours,
        "resumes_at": windows[0][0] if windows and not in_hours else None,
    }


def acknowledgement(
    case: ReviewCase, events: list[ReviewEvent], calendar: policy.Calendar
) -> dict[str, Any] | None:
    """Return how the latest acknowledgement of the case went, or None when it is not acknowledged.

    The time is counted from when the case entered the tier it was acknowledged at (opened,
    escalated or reopened), on that tier's clock; ``met`` says whether it came before the SLA
    was breached (the service records it on the event).
    """
    if case.acknowledged_at is None:
        return None
    entered = ack = None
    for event in events:
        if event.kind in ("opened", "escalated", "reopened"):
            entered, ack = event, None
        elif event.kind == "acknowledged":
            ack = event
    if ack is None or entered is None:
        return None
    # on time: the service's record at the moment, and no breach of that tier's clock before it
    # (the history's breach entries are the one record of a breach: ``breaches``)
    late_by_history = any(b["tier"] == ack.tier and entered.at <= b["at"] <= ack.at for b in breaches(events))
    wall = (ack.at - entered.at).total_seconds()
    text = duration_text(wall)
    if clock_word(ack.tier):  # L2/L3 count business time: say both when they differ
        business = duration_text(policy.clock_elapsed(ack.tier, calendar, entered.at, ack.at))
        if business != text:
            text = f"{text} ({business} of business time)"
    return {
        "tier": ack.tier,
        "text": text,
        "met": bool((ack.details or {}).get("within_sla", True)) and not late_by_history,
        "at": ack.at,
    }


def breaches(events: list[ReviewEvent]) -> list[dict[str, Any]]:
    """Every SLA breach of a case, oldest first: its tier, when, and the clock that ran out.

    The one record of a breach (the history's "SLA breached" entries): the case header, the
    acknowledgement's "on time / late" and the queue's breach mark are all read from it.
    """
    return [
        {
            "tier": event.tier,
            "at": event.at,
            "goal": PHASE_GOALS.get(
                str((event.details or {}).get("clock")), PHASE_GOALS[policy.Phase.RESOLVE]
            ),
        }
        for event in events
        if event.kind == ReviewEvent.Kind.BREACHED
    ]


def event_text(event: ReviewEvent, decisions: dict[str, Any] | None = None) -> tuple[str, str]:
    """(what happened, the detail) of a review event, naming who was assigned, the decision, the reasons.

    ``decisions`` maps decision codes to their labels (``ReviewCase.Decision``).
    """
    details = event.details or {}
    decisions = decisions or {}
    kind, reason = event.kind, event.reason or ""
    if kind == "assigned":
        to, was = details.get("to") or "someone", details.get("from")
        if was and was == to:  # assigned again to the owner: nothing changed hands
            return f"{to} kept the case", reason
        before = f"was {was}" if was else "was unassigned"
        return f"Assigned to {to}", before + (f"; {reason}" if reason else "")
    if kind == "unassigned":
        return "Unassigned", f"was {details.get('from') or 'nobody'}" + (f"; {reason}" if reason else "")
    if kind == "escalated":
        return escalation_text(event)
    if kind == "resolved":
        decision = details.get("decision", "")
        return f"Resolved: {decisions.get(decision, decision) or 'no decision'}", reason
    if kind == "reopened":
        previous = details.get("previous") or {}
        earlier = previous.get("decision")
        note = (
            f" (it had been resolved: {decisions.get(earlier, earlier)}"
            + (f" — {previous['rationale']}" if previous.get("rationale") else "")
            + ")"
            if earlier
            else ""
        )
        return "Reopened", f"why: {reason}{note}" if reason else note.strip()
    if kind == "breached":
        goal = PHASE_GOALS.get(str(details.get("clock")), PHASE_GOALS[policy.Phase.RESOLVE])
        return "SLA breached", f"the clock {goal} ran out" + (f"; {reason}" if reason else "")
    if kind == "acknowledged" and details.get("within_sla") is False:
        return "Acknowledged late", "after the SLA was breached" + (f"; {reason}" if reason else "")
    titles = {"at_risk": "SLA at risk"}
    return titles.get(kind, kind.replace("_", " ").capitalize()), reason


def escalation_text(event: ReviewEvent) -> tuple[str, str]:
    """('Escalated from Level 1 to Level 2', 'reason; owner kept or removed, and why') of an escalation."""
    details = event.details or {}
    to_tier = details.get("to_tier", event.tier)
    from_tier = details.get("from_tier", to_tier - 1)
    parts = [event.reason] if event.reason else []
    before, after = details.get("owner_from"), details.get("owner_to")
    if before and after == before:
        parts.append(f"{before} keeps the case")
    elif before and "owner_to" in details:
        why = details.get("owner_change") or "the owner changed"
        parts.append(f"owner {before} removed: {why}")
    return f"Escalated from Level {from_tier} to Level {to_tier}", sentences(parts)


def sentences(parts: list[str]) -> str:
    """Join ``parts`` as sentences: a full stop between two only where the first has no stop of its own
    (a reviewer's reason often ends with one), never two."""
    out = ""
    for part in (p.strip() for p in parts):
        if part:
            out += ("" if not out else " " if out.endswith((".", "!", "?", "…")) else ". ") + part
    return out


def resolutions(events: list[ReviewEvent], decisions: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every resolution of a case, oldest first, with whether a later reopening undid it (and why)."""
    decisions = decisions or {}
    out: list[dict[str, Any]] = []
    for event in events:
        if event.kind == "resolved":
            decision = (event.details or {}).get("decision", "")
            out.append(
                {
                    "decision": decisions.get(decision, decision),
                    "rationale": event.reason,
                    "by": event.actor_label or "system",
                    "at": event.at,
                    "tier": event.tier,
                    "reopened": None,
                }
            )
        elif event.kind == "reopened" and out and out[-1]["reopened"] is None:
            out[-1]["reopened"] = {"at": event.at, "by": event.actor_label or "system", "why": event.reason}
    return out


def tier_clock_text(tier: int, phase: str | None = None) -> str:
    """How a tier's SLA clock counts, in words: 'wall-clock time' or 'business hours'."""
    return "business hours" if clock_word(tier, phase) else "wall-clock time"
