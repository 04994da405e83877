"""Reads for the nightly batch auditor: which claims it re-checks, and its reports."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet
from django.utils import timezone

from audit import constants
from audit.models import Claim, NightlyReport, Workspace
from audit.selectors.api import thresholds_for


def day_bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """Return [start, end) of ``day`` in the project time zone, as aware datetimes."""
    tz = timezone.get_current_timezone()
    start = dt.datetime.combine(day, dt.time.min, tzinfo=tz)
    return start, start + dt.timedelta(days=1)


def nightly_claims_due(*, workspace: Workspace, day: dt.date) -> QuerySet[Claim]:
    """Claims of answers received on ``day`` labelled REFUTED or NEI below the low-confidence bar.

    The bar is the workspace's ``low_confidence_threshold`` (0.60 by default, seed 004 §4.5);
    a claim exactly at the bar is not weak and is left alone.
    """
    start, end = day_bounds(day)
    bar = thresholds_for(workspace).low_confidence_threshold
    return (
        Claim.objects.filter(
            answer__workspace=workspace,
            answer__created_at__gte=start,
            answer__created_at__lt=end,
            label__in=constants.NIGHTLY_LABELS,
            confidence__lt=bar,
        )
        .order_by("id")
    )


def nightly_report_list(*, workspace: Workspace) -> QuerySet[NightlyReport]:
    """The workspace's nightly reports, newest day first."""
    return NightlyReport.objects.filter(workspace=workspace).order_by("-date")


def nightly_report_latest(*, workspace: Workspace, finished_only: bool = True) -> NightlyReport | None:
    """The report of the most recent day (finished ones only, unless told otherwise), or None."""
    reports = nightly_report_list(workspace=workspace)
    if finished_only:
        reports = reports.filter(status=NightlyReport.Status.DONE)
    return reports.first()


def nightly_report_for_date(*, workspace: Workspace, day: dt.date) -> NightlyReport | None:
    return nightly_report_list(workspace=workspace).filter(date=day).first()
