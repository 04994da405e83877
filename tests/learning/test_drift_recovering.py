"""A domain whose agreement is under the bar but rising is shown as recovering, not alerted."""

from __future__ import annotations

import datetime as dt

from audit import constants
from audit.selectors.learning import drift_by_domain
from tests.learning.test_review_figures import NOW


def _row(days_ago: float, domain: str, machine: str, reviewer: str) -> tuple:
    return (NOW - dt.timedelta(days=days_ago), domain, machine, 0.9, reviewer)


def test_a_domain_rising_from_41_to_62_percent_is_recovering_and_not_on_alert():
    window = constants.REVIEW_DRIFT_WINDOW_DAYS
    rows = [_row(1, "immunology", "SUPPORTED", "SUPPORTED") for _ in range(13)]  # 62 % of 21 now
    rows += [_row(1, "immunology", "SUPPORTED", "NEI") for _ in range(8)]
    rows += [_row(window + 2, "immunology", "SUPPORTED", "SUPPORTED") for _ in range(7)]  # 41 % of 17 before
    rows += [_row(window + 2, "immunology", "SUPPORTED", "NEI") for _ in range(10)]
    rows += [_row(1, "finance", "SUPPORTED", "NEI") for _ in range(12)]  # 0 % now, 100 % before
    rows += [_row(window + 2, "finance", "SUPPORTED", "SUPPORTED") for _ in range(5)]

    finance, immunology = drift_by_domain(rows, NOW)

    assert round(immunology["agreement"], 2) == 0.62 and round(immunology["agreement_before"], 2) == 0.41
    assert immunology["low"] is False and immunology["recovering"] is True
    assert finance["low"] is True and finance["recovering"] is False
