"""Escalation policy: tiers, SLA clocks, business-hours arithmetic and risk (pure functions).

No ORM and no Django settings: everything takes plain values (a :class:`Calendar`, aware
datetimes) so it can be tested without a database. SLA amounts and the at-risk share come from
``audit.constants`` (``SLA_BY_TIER``, ``SLA_ACKNOWLEDGE_TIERS``, ``SLA_RESOLUTION_BY_TIER``,
``SLA_AT_RISK_SHARE``). An open case always has one running clock (:func:`clock_phase`): at L1
the clock to acknowledge, then the clock to resolve; at L2 and L3 the clock to resolve.

Business time is counted in absolute seconds inside each working day's window, where the window
is built from local wall-clock times in the calendar's time zone and converted to UTC. So a
9:00–17:00 day is 8 hours on both sides of a daylight-saving change, and a deadline that lands
after a change keeps its local working hour.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from audit import constants
from audit.pipeline.types import Label

TIERS = tuple(sorted(constants.SLA_BY_TIER))
FIRST_TIER = TIERS[0]
LAST_TIER = TIERS[-1]
TIER_NAMES = {1: "L1 on-call analyst", 2: "L2 domain expert", 3: "L3 compliance lead"}

# A calendar with no working day at all would never reach a deadline: give up after this.
_MAX_DAYS_SCANNED = 3 * 366


class PolicyError(ValueError):
    """A policy input is impossible (unknown tier, calendar without working time)."""


def _parse_time(value: str | time) -> time:
    if isinstance(value, time):
        return value
    return time.fromisoformat(value)


@dataclass(frozen=True)
class Calendar:
    """Business hours of one workspace: time zone, working weekdays (Monday = 0), day window, holidays."""

    tz: str = constants.DEFAULT_CALENDAR_TIMEZONE
    working_days: frozenset[int] = frozenset(constants.DEFAULT_WORKING_DAYS)
    start: time = field(default_factory=lambda: _parse_time(constants.DEFAULT_WORKDAY_START))
    end: time = field(default_factory=lambda: _parse_time(constants.DEFAULT_WORKDAY_END))
    holidays: frozenset[date] = frozenset()

    def __post_init__(self) -> None:
        ZoneInfo(self.tz)  # raises ZoneInfoNotFoundError (a KeyError) for an unknown zone
        if not self.working_days or not set(self.working_days) <= set(range(7)):
            raise PolicyError("working_days must be a non-empty set of weekdays 0 (Monday) to 6")
        if self.end <= self.start:
            raise PolicyError("the working day must end after it starts")

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    @property
    def workday_seconds(self) -> float:
        """Nominal length of one working day (local clock), the unit of a 'business day'."""
        start = datetime.combine(date(2000, 1, 3), self.start)
        end = datetime.combine(date(2000, 1, 3), self.end)
        return (end - start).total_seconds()

    def is_working_date(self, day: date) -> bool:
        return day.weekday() in self.working_days and day not in self.holidays

    def window(self, day: date) -> tuple[datetime, datetime]:
        """The working window of a local date as UTC instants (DST-aware)."""
        zone = self.zone
        opens = datetime.combine(day, self.start, tzinfo=zone).astimezone(timezone.utc)
        closes = datetime.combine(day, self.end, tzinfo=zone).astimezone(timezone.utc)
        return opens, closes

    def windows_from(self, moment: datetime) -> Iterator[tuple[datetime, datetime]]:
        """Yield the working windows (UTC) that end after ``moment``, in order, clipped to start at it."""
        _require_aware(moment)
        day = moment.astimezone(self.zone).date() - timedelta(days=1)  # a window may straddle midnight UTC
        for _ in range(_MAX_DAYS_SCANNED):
            if self.is_working_date(day):
                opens, closes = self.window(day)
                if closes > moment:
                    yield max(opens, moment), closes
            day += timedelta(days=1)
        raise PolicyError(f"no working time within {_MAX_DAYS_SCANNED} days")


def _require_aware(moment: datetime) -> None:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise PolicyError("datetimes must be timezone-aware")


def business_add(calendar: Calendar, start: datetime, seconds: float) -> datetime:
    """Return the instant ``seconds`` of business time after ``start``.

    Time outside working windows does not count; zero seconds returns ``start`` unchanged
    (even at night: the clock has nothing left to run).
    """
    _require_aware(start)
    if seconds < 0:
        raise PolicyError("seconds must not be negative")
    if seconds == 0:
        return start
    left = timedelta(seconds=seconds)
    for opens, closes in calendar.windows_from(start):
        span = closes - opens
        if left <= span:
            return (opens + left).astimezone(timezone.utc)
        left -= span
    raise PolicyError("unreachable")  # windows_from raises first


def business_seconds_between(calendar: Calendar, start: datetime, end: datetime) -> float:
    """Return the business seconds in [start, end) (0 when end is not after start)."""
    _require_aware(start)
    _require_aware(end)
    if end <= start:
        return 0.0
    total = 0.0
    for opens, closes in calendar.windows_from(start):
        if opens >= end:
            break
        total += (min(closes, end) - opens).total_seconds()
    return total


# --- SLA clocks ---------------------------------------------------------------------------


def check_tier(tier: int) -> int:
    if tier not in constants.SLA_BY_TIER:
        raise PolicyError(f"tier must be one of {', '.join(map(str, TIERS))}")
    return tier


def next_tier(tier: int) -> int:
    """The tier a case moves to when escalated; the last tier has none."""
    check_tier(tier)
    if tier >= LAST_TIER:
        raise PolicyError(f"tier {tier} is the last tier")
    return tier + 1


class Phase:
    """Which of a tier's clocks runs: to acknowledge (first, at ``SLA_ACKNOWLEDGE_TIERS``) or to resolve."""

    ACKNOWLEDGE = "acknowledge"
    RESOLVE = "resolve"


def clock_phase(tier: int, *, acknowledged: bool) -> str:
    """The clock an open case runs at ``tier``: to acknowledge until it is, then to resolve.

    A tier outside ``SLA_ACKNOWLEDGE_TIERS`` has one clock, to resolve, from the start.
    """
    check_tier(tier)
    if tier in constants.SLA_ACKNOWLEDGE_TIERS and not acknowledged:
        return Phase.ACKNOWLEDGE
    return Phase.RESOLVE


def _target(tier: int, phase: str | None) -> tuple[str, float]:
    """(clock kind, amount) of a tier's clock; ``phase`` None: the tier's first clock (``SLA_BY_TIER``)."""
    check_tier(tier)
    if phase is None:
        phase = clock_phase(tier, acknowledged=False)
    if phase == Phase.RESOLVE:
        return constants.SLA_RESOLUTION_BY_TIER[tier]
    if phase != Phase.ACKNOWLEDGE or tier not in constants.SLA_ACKNOWLEDGE_TIERS:
        raise PolicyError(f"tier {tier} has no {phase} clock")
    return constants.SLA_BY_TIER[tier]


def sla_clock(tier: int, phase: str | None = None) -> str:
    """'wall' or 'business': how the tier's clock runs (``phase``: which clock, default the first)."""
    kind, _ = _target(tier, phase)
    return constants.SLA_CLOCK_WALL if kind == constants.SLA_CLOCK_WALL else constants.SLA_CLOCK_BUSINESS


def sla_budget_seconds(tier: int, calendar: Calendar, phase: str | None = None) -> float:
    """The tier's SLA in seconds of its own clock (``phase``: which clock, default the first)."""
    kind, amount = _target(tier, phase)
    if kind == constants.SLA_CLOCK_BUSINESS_DAYS:
        return float(amount) * calendar.workday_seconds
    return float(amount)


def clock_add(
    tier: int, calendar: Calendar, start: datetime, seconds: float, phase: str | None = None
) -> datetime:
    """Advance the tier's clock by ``seconds`` from ``start``."""
    if sla_clock(tier, phase) == constants.SLA_CLOCK_WALL:
        _require_aware(start)
        return start + timedelta(seconds=max(seconds, 0.0))
    return business_add(calendar, start, max(seconds, 0.0))


def clock_elapsed(
    tier: int, calendar: Calendar, start: datetime, end: datetime, phase: str | None = None
) -> float:
    """Seconds the tier's clock ran between two instants."""
    if sla_clock(tier, phase) == constants.SLA_CLOCK_WALL:
        return max((end - start).total_seconds(), 0.0)
    return business_seconds_between(calendar, start, end)


@dataclass(frozen=True)
class Deadlines:
    due_at: datetime
    at_risk_at: datetime


def deadlines(
    tier: int,
    calendar: Calendar,
    *,
    start: datetime,
    used_seconds: float = 0.0,
    at_risk_share: float = constants.SLA_AT_RISK_SHARE,
    phase: str | None = None,
) -> Deadlines:
    """Return when the tier's SLA is breached and when it turns at risk, for a clock running from ``start``.

    ``used_seconds`` is clock time already consumed before ``start`` (a case that was paused);
    ``phase`` picks the clock (:func:`clock_phase`; default the tier's first).
    """
    if not 0.0 < at_risk_share <= 1.0:
        raise PolicyError("at_risk_share must be in (0, 1]")
    budget = sla_budget_seconds(tier, calendar, phase)
    return Deadlines(
        due_at=clock_add(tier, calendar, start, budget - used_seconds, phase),
        at_risk_at=clock_add(tier, calendar, start, budget * at_risk_share - used_seconds, phase),
    )


class SlaState:
    ON_TRACK = "on_track"
    AT_RISK = "at_risk"
    BREACHED = "breached"


def sla_state(*, due_at: datetime | None, at_risk_at: datetime | None, now: datetime) -> str:
    """On track until ``at_risk_at``; at risk from it; breached strictly after ``due_at``.

    Acting exactly at the deadline is still on time.
    """
    if due_at is None:
        return SlaState.ON_TRACK
    if now > due_at:
        return SlaState.BREACHED
    if at_risk_at is not None and now >= at_risk_at:
        return SlaState.AT_RISK
    return SlaState.ON_TRACK


# --- Intake and risk -------------------------------------------------------------------------


def review_reasons(
    *,
    label: str,
    confidence: float,
    domain: str,
    regulated_domains: Iterable[str] | None,
    low_confidence_threshold: float,
    revision: dict[str, Any] | None = None,
    importance: str = "material",
    auto_corrected_review: str = "all",
    unsupported_review: str = "all",
    risk_flags: Iterable[str] = (),
) -> list[str]:
    """Why a claim, as received, needs a human: "refuted" (REFUTED at any confidence), "unsupported"
    (NEI at any confidence: nothing found backs it), "auto_corrected" (the revision loop corrected
    it: a person confirms the correction), "low_confidence" (with "unsupported": P(supported) below the
    threshold, the seed's "REFUTED/NEI with confidence < 0.6" (docs/SPEC_NOTES.md, "Human escalation", intake) read on the claim's
    ``confidence``, which is P(supported) whatever the label), "llm_disagreement" (the LLM judge disagreed with a confident offline
    verdict, which stood: docs/LLM.md#weighing-the-llm-judge), "regulated_domain"; [] when it does not.

    So every claim not labelled SUPPORTED has a reason (docs/SPEC_NOTES.md#human-escalation),
    save two documented spares: with ``auto_corrected_review == "material"`` a minor claim whose
    correction verified SUPPORTED, and with ``unsupported_review == "material"`` a minor NEI claim
    the revision loop left untouched (their other reasons, e.g. a regulated domain, still count). The defaults spare none.
    """
    reasons: list[str] = []
    rev = revision or {}
    corrected = rev.get("strategy") == "correct"
    minor = importance == "minor"
    if label == Label.REFUTED:
        spared = (
            corrected
            and auto_corrected_review == "material"
            and minor
            and rev.get("label") == Label.SUPPORTED
        )
        if not spared:
            reasons.append("refuted")
            if corrected:
                reasons.append("auto_corrected")
    elif label == Label.NEI:
        # a revision that touched the claim (a citation removed, a qualifier) is never spared: a served
        # revision never hides a finding from people
        if not (unsupported_review == "material" and minor and not rev):
            reasons.append("unsupported")
            if confidence < low_confidence_threshold:
                reasons.append("low_confidence")
    elif corrected:
        reasons.append("auto_corrected")
    if "llm_disagreement" in (risk_flags or ()):
        reasons.append("llm_disagreement")
    if constants.is_regulated(domain, regulated_domains):
        reasons.append("regulated_domain")
    return reasons


def needs_review(
    *,
    label: str,
    confidence: float,
    domain: str,
    regulated_domains: Iterable[str] | None,
    low_confidence_threshold: float,
) -> str:
    """Return the first reason of :func:`review_reasons` ("" when a claim needs no human)."""
    reasons = review_reasons(
        label=label,
        confidence=confidence,
        domain=domain,
        regulated_domains=regulated_domains,
        low_confidence_threshold=low_confidence_threshold,
    )
    return reasons[0] if reasons else ""


def risk_score(*, importance: str, label: str, confidence: float, regulated: bool) -> float:
    """Risk of a claim in [0, 1]: important, refuted, doubtful and regulated claims come first."""
    weights = constants.RISK_WEIGHTS
    doubt = 1.0 - min(max(confidence, 0.0), 1.0)
    score = (
        weights["importance"]
        * constants.RISK_IMPORTANCE.get(importance, constants.RISK_IMPORTANCE["material"])
        + weights["label"] * constants.RISK_LABEL.get(label, constants.RISK_LABEL[Label.NEI])
        + weights["doubt"] * doubt
        + weights["regulated"] * (1.0 if regulated else 0.0)
    )
    return round(min(max(score, 0.0), 1.0), 4)


def ticket_key(number: int) -> str:
    """``COMP-ESC-000123`` for case number 123."""
    if number < 1:
        raise PolicyError("ticket numbers start at 1")
    return f"{constants.ESCALATION_TICKET_PREFIX}-{number:06d}"
