"""The weak-claim rule and "the day", each defined once (docs/SPEC_NOTES.md, nightly batch auditor)."""

import datetime as dt

from audit.constants import Thresholds
from audit.selectors.weak_claims import day_bounds


def test_refuted_and_nei_claims_below_the_bar_are_weak_and_a_claim_at_the_bar_is_not():
    thresholds = Thresholds(low_confidence_threshold=0.6)
    assert thresholds.is_weak("REFUTED", 0.59) and thresholds.is_weak("NEI", 0.1)
    assert not thresholds.is_weak("NEI", 0.6)
    assert not thresholds.is_weak("SUPPORTED", 0.1)


def test_the_day_of_an_answer_is_its_utc_calendar_day():
    start, end = day_bounds(dt.date(2026, 3, 29))  # a daylight-saving change in Europe: still 24 hours
    assert start == dt.datetime(2026, 3, 29, tzinfo=dt.timezone.utc)
    assert end - start == dt.timedelta(days=1)
