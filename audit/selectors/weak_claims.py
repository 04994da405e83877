"""The weak-claim rule, once: which claims of a day the nightly auditor re-checks and the daily
bundle exports (docs/SPEC_NOTES.md, "Nightly batch auditor"). ``Thresholds.is_weak`` is the same
rule in Python, for verdicts not stored yet."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q

from audit import constants


def day_bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """Return [start, end) of ``day`` as aware datetimes: "the day" of an answer is its UTC calendar
    day, for the nightly auditor, the daily bundle and every other per-day rule (docs/SPEC_NOTES.md)."""
    start = dt.datetime.combine(day, dt.time.min, tzinfo=dt.timezone.utc)
    return start, start + dt.timedelta(days=1)


def weak_claims_q(*, bar: float, day: dt.date) -> Q:
    """The weak claims of answers received on ``day``: REFUTED or NEI below ``bar`` (the workspace's
    ``low_confidence_threshold`` unless told otherwise); ``Thresholds.is_weak`` is the same rule in Python."""
    start, end = day_bounds(day)
    return Q(
        label__in=constants.NIGHTLY_LABELS,
        confidence__lt=bar,
        answer__created_at__gte=start,
        answer__created_at__lt=end,
    )
