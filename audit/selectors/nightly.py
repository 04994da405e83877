"""Reads for the nightly batch auditor: which claims it re-checks, and its reports."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet

from audit.models import Claim, NightlyReport, Workspace
from audit.selectors.api import thresholds_for
from audit.selectors.weak_claims import weak_claims_q


def nightly_claims_due(*, workspace: Workspace, day: dt.date) -> QuerySet[Claim]:
    """Claims of answers received on ``day`` labelled REFUTED or NEI below the low-confidence bar.

    The bar is the workspace's ``low_confidence_threshold`` (0.60 by default, docs/SPEC_NOTES.md#nightly-auditor);
    a claim exactly at the bar is not weak and is left alone.
    """
    bar = thresholds_for(workspace).low_confidence_threshold
    return Claim.objects.filter(weak_claims_q(bar=bar, day=day), answer__workspace=workspace).order_by("id")


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
