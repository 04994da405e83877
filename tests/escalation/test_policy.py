"""SLA arithmetic and risk rules of escalation.policy (pure functions, no database)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from zoneinfo import ZoneInfo

import pytest

from audit import constants
from escalation import policy

UTC = dt_timezone.utc
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
H = 3600


def berlin(*args) -> datetime:
    return datetime(*args, tzinfo=BERLIN)


@pytest.fixture
def cal():
    """Mon-Fri 09:00-17:00 Europe/Berlin, with 2026-12-25 (a Friday) as a holiday."""
    return policy.Calendar(tz="Europe/Berlin", holidays=frozenset({date(2026, 12, 25)}))


def test_it_adds_business_hours_within_one_day(cal):
    assert policy.business_add(cal, berlin(2026, 11, 24, 10, 0), 4 * H) == berlin(2026, 11, 24, 14, 0)


def test_it_carries_business_hours_over_the_night(cal):
    assert policy.business_add(cal, berlin(2026, 11, 24, 15, 0), 4 * H) == berlin(2026, 11, 25, 11, 0)


def test_it_starts_counting_at_opening_time_when_started_at_night(cal):
    assert policy.business_add(cal, berlin(2026, 11, 24, 3, 0), 4 * H) == berlin(2026, 11, 24, 13, 0)
    assert policy.business_add(cal, berlin(2026, 11, 24, 22, 0), 4 * H) == berlin(2026, 11, 25, 13, 0)


def test_it_skips_the_weekend(cal):
    assert policy.business_add(cal, berlin(2026, 11, 27, 15, 0), 4 * H) == berlin(2026, 11, 30, 11, 0)
    assert policy.business_add(cal, berlin(2026, 11, 28, 12, 0), 4 * H) == berlin(2026, 11, 30, 13, 0)


def test_it_skips_holidays(cal):
    # Thursday 24 Dec 15:00 + 4h: 2h on Thursday, Friday 25 is a holiday, weekend, Monday 28 until 11:00
    assert policy.business_add(cal, berlin(2026, 12, 24, 15, 0), 4 * H) == berlin(2026, 12, 28, 11, 0)


def test_a_deadline_landing_exactly_at_closing_time_stays_on_that_day(cal):
    assert policy.business_add(cal, berlin(2026, 11, 24, 13, 0), 4 * H) == berlin(2026, 11, 24, 17, 0)


def test_it_keeps_the_local_working_hour_across_the_spring_daylight_saving_change(cal):
    # Europe/Berlin moves to CEST on Sunday 29 March 2026: Friday 15:00 CET + 4h = Monday 11:00 CEST
    due = policy.business_add(cal, berlin(2026, 3, 27, 15, 0), 4 * H)
    assert due == berlin(2026, 3, 30, 11, 0)
    assert due.astimezone(UTC) == datetime(2026, 3, 30, 9, 0, tzinfo=UTC)
    assert policy.business_seconds_between(cal, berlin(2026, 3, 27, 15, 0), due) == 4 * H


def test_it_keeps_the_local_working_hour_across_the_autumn_daylight_saving_change(cal):
    # Europe/Berlin goes back to CET on Sunday 25 October 2026
    due = policy.business_add(cal, berlin(2026, 10, 23, 15, 0), 4 * H)
    assert due == berlin(2026, 10, 26, 11, 0)
    assert due.astimezone(UTC) == datetime(2026, 10, 26, 10, 0, tzinfo=UTC)
    assert policy.business_seconds_between(cal, berlin(2026, 10, 23, 15, 0), due) == 4 * H


def test_a_working_window_that_spans_a_daylight_saving_change_counts_real_hours():
    # Sunday-only night shift 00:00-06:00: the spring-forward night is 5 real hours, the fall-back night 7.
    night = policy.Calendar(tz="America/New_York", working_days=frozenset({6}), start=time(0), end=time(6))
    spring = datetime(2026, 3, 8, 0, 0, tzinfo=NEW_YORK)
    fall = datetime(2026, 11, 1, 0, 0, tzinfo=NEW_YORK)
    assert policy.business_seconds_between(night, spring, spring + timedelta(days=1)) == 5 * H
    assert policy.business_seconds_between(night, fall, fall + timedelta(days=1)) == 7 * H
    assert policy.business_add(night, spring, 5 * H) == datetime(2026, 3, 8, 6, 0, tzinfo=NEW_YORK)


def test_the_l3_business_day_ends_at_the_same_hour_on_the_next_working_day(cal):
    start = berlin(2026, 11, 24, 14, 0)
    when = policy.deadlines(3, cal, start=start)
    assert when.due_at == berlin(2026, 11, 25, 14, 0)
    friday = policy.deadlines(3, cal, start=berlin(2026, 11, 27, 14, 0))
    assert friday.due_at == berlin(2026, 11, 30, 14, 0)


def test_the_l1_clock_is_wall_clock_even_at_night_and_on_weekends(cal):
    start = berlin(2026, 11, 28, 23, 50)  # Saturday night
    when = policy.deadlines(1, cal, start=start)
    assert when.due_at == start + timedelta(minutes=30)
    assert when.at_risk_at == start + timedelta(minutes=24)


def test_the_at_risk_point_is_the_configured_share_of_the_business_sla(cal):
    when = policy.deadlines(2, cal, start=berlin(2026, 11, 24, 15, 0), at_risk_share=0.5)
    assert when.at_risk_at == berlin(2026, 11, 24, 17, 0)
    assert when.due_at == berlin(2026, 11, 25, 11, 0)


def test_time_used_before_a_pause_shortens_the_remaining_clock(cal):
    when = policy.deadlines(2, cal, start=berlin(2026, 11, 24, 9, 0), used_seconds=3 * H)
    assert when.due_at == berlin(2026, 11, 24, 10, 0)
    assert when.at_risk_at == berlin(2026, 11, 24, 9, 12)  # 0.8 * 4h = 3h12 in total, 3h already used


def test_the_sla_values_live_in_constants():
    assert constants.SLA_BY_TIER[1] == ("wall", 30 * 60)
    assert constants.SLA_BY_TIER[2] == ("business", 4 * H)
    assert constants.SLA_BY_TIER[3] == ("business_days", 1)
    assert constants.SLA_AT_RISK_SHARE == 0.8


@pytest.mark.parametrize(
    "offset, state",
    [
        (timedelta(minutes=24) - timedelta(seconds=1), "on_track"),
        (timedelta(minutes=24), "at_risk"),
        (timedelta(minutes=30) - timedelta(seconds=1), "at_risk"),
        (timedelta(minutes=30), "at_risk"),
        (timedelta(minutes=30, seconds=1), "breached"),
    ],
)
def test_the_sla_state_just_before_at_and_after_each_deadline(offset, state, cal):
    start = berlin(2026, 11, 24, 10, 0)
    when = policy.deadlines(1, cal, start=start)
    assert policy.sla_state(due_at=when.due_at, at_risk_at=when.at_risk_at, now=start + offset) == state


def test_a_stopped_clock_is_on_track():
    assert policy.sla_state(due_at=None, at_risk_at=None, now=datetime.now(UTC)) == "on_track"


def test_the_next_tier_rule_stops_at_tier_3():
    assert [policy.next_tier(1), policy.next_tier(2)] == [2, 3]
    with pytest.raises(policy.PolicyError):
        policy.next_tier(3)
    with pytest.raises(policy.PolicyError):
        policy.check_tier(0)


def test_it_refuses_naive_datetimes_and_calendars_without_working_time(cal):
    with pytest.raises(policy.PolicyError):
        policy.business_add(cal, datetime(2026, 11, 24, 10, 0), 60)  # noqa: DTZ001 - naive on purpose
    with pytest.raises(policy.PolicyError):
        policy.Calendar(working_days=frozenset())
    with pytest.raises(policy.PolicyError):
        policy.Calendar(start=time(17), end=time(9))
    with pytest.raises(KeyError):
        policy.Calendar(tz="Mars/Olympus")
    every_day_off = policy.Calendar(
        working_days=frozenset({0}),
        holidays=frozenset(date(2026, 1, 5) + timedelta(weeks=w) for w in range(200)),
    )
    with pytest.raises(policy.PolicyError, match="no working time"):
        policy.business_add(every_day_off, datetime(2026, 1, 1, tzinfo=UTC), 60)


def test_intake_takes_every_refuted_or_nei_claim_and_regulated_domains():
    kw = {"domain": "", "regulated_domains": ["finance"], "low_confidence_threshold": 0.6}
    assert policy.needs_review(label="REFUTED", confidence=0.59, **kw) == "refuted"
    assert policy.needs_review(label="REFUTED", confidence=0.9, **kw) == "refuted"
    assert policy.needs_review(label="NEI", confidence=0.59, **kw) == "unsupported"
    assert policy.needs_review(label="NEI", confidence=0.9, **kw) == "unsupported"
    assert policy.review_reasons(label="NEI", confidence=0.59, **kw) == ["unsupported", "low_confidence"]
    assert policy.review_reasons(label="NEI", confidence=0.6, **kw) == ["unsupported"]
    assert policy.needs_review(label="SUPPORTED", confidence=0.1, **kw) == ""
    assert (
        policy.needs_review(label="SUPPORTED", confidence=0.99, **{**kw, "domain": "Finance"})
        == "regulated_domain"
    )


def test_the_risk_score_ranks_importance_label_doubt_and_regulation():
    base = {"importance": "material", "label": "NEI", "confidence": 0.5, "regulated": False}
    score = policy.risk_score(**base)
    assert policy.risk_score(**{**base, "importance": "critical"}) > score
    assert policy.risk_score(**{**base, "label": "REFUTED"}) > score
    assert policy.risk_score(**{**base, "confidence": 0.1}) > score
    assert policy.risk_score(**{**base, "regulated": True}) > score
    assert policy.risk_score(importance="critical", label="REFUTED", confidence=0.0, regulated=True) == 1.0


def test_the_ticket_key_is_zero_padded():
    assert policy.ticket_key(123) == "COMP-ESC-000123"
    with pytest.raises(policy.PolicyError):
        policy.ticket_key(0)


CORRECTED = {
    "strategy": "correct",
    "text": "Reports are kept for 7 years.",
    "label": "SUPPORTED",
    "confidence": 0.92,
    "passage_id": "1",
}


def test_a_refuted_claim_the_loop_corrected_is_reviewed_for_both_reasons_unless_a_minor_one_is_spared():
    kw = {"domain": "", "regulated_domains": (), "low_confidence_threshold": 0.6}
    assert policy.review_reasons(label="REFUTED", confidence=0.05, revision=CORRECTED, **kw) == [
        "refuted",
        "auto_corrected",
    ]
    assert policy.review_reasons(
        label="REFUTED", confidence=0.05, revision=CORRECTED, importance="minor", **kw
    ) == ["refuted", "auto_corrected"]  # by default every correction is reviewed
    spare = {**kw, "auto_corrected_review": "material"}
    assert (
        policy.review_reasons(
            label="REFUTED", confidence=0.05, revision=CORRECTED, importance="minor", **spare
        )
        == []
    )
    assert policy.review_reasons(
        label="REFUTED", confidence=0.05, revision=CORRECTED, importance="material", **spare
    ) == ["refuted", "auto_corrected"]
    unverified = {**CORRECTED, "label": "NEI"}
    assert policy.review_reasons(
        label="REFUTED", confidence=0.05, revision=unverified, importance="minor", **spare
    ) == ["refuted", "auto_corrected"]
    assert policy.review_reasons(
        label="REFUTED", confidence=0.05, revision={**CORRECTED, "strategy": "qualify"}, **kw
    ) == ["refuted"]


def test_a_minor_nei_claim_is_spared_only_by_the_setting_and_never_when_a_revision_touched_it():
    kw = {"domain": "", "regulated_domains": [], "low_confidence_threshold": 0.6, "importance": "minor"}
    assert policy.review_reasons(label="NEI", confidence=0.7, **kw) == ["unsupported"]
    assert policy.review_reasons(label="NEI", confidence=0.7, unsupported_review="material", **kw) == []
    cited = {
        "strategy": "citation",
        "text": "The claim.",
        "label": "NEI",
        "confidence": 0.7,
        "passage_id": "",
    }
    assert policy.review_reasons(
        label="NEI", confidence=0.7, unsupported_review="material", revision=cited, **kw
    ) == ["unsupported"]
