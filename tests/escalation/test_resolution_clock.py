"""Every open case runs one clock: at L1 to acknowledge, then to resolve; at L2 and L3 to resolve.

The resolution target per tier lives once (``audit.constants.SLA_RESOLUTION_BY_TIER``); the policy,
the services, the sweep, the countdown and the home page's next deadlines all read it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import pytest
import time_machine

from audit import constants
from escalation import display, policy, services
from escalation.models import ReviewCase

MONDAY_10 = datetime(2026, 11, 23, 10, 0, tzinfo=dt_timezone.utc)
CALENDAR = policy.Calendar()


def test_l1_runs_the_clock_to_acknowledge_then_the_clock_to_resolve_and_l2_l3_only_the_clock_to_resolve():
    assert policy.clock_phase(1, acknowledged=False) == policy.Phase.ACKNOWLEDGE
    assert policy.clock_phase(1, acknowledged=True) == policy.Phase.RESOLVE
    for tier in (2, 3):
        assert policy.clock_phase(tier, acknowledged=False) == policy.Phase.RESOLVE
        assert policy.sla_budget_seconds(tier, CALENDAR, policy.Phase.RESOLVE) == policy.sla_budget_seconds(
            tier, CALENDAR
        )
    with pytest.raises(policy.PolicyError, match="no acknowledge clock"):
        policy.sla_budget_seconds(2, CALENDAR, policy.Phase.ACKNOWLEDGE)


def test_the_resolution_target_of_each_tier_comes_from_the_constants(monkeypatch):
    assert policy.sla_budget_seconds(1, CALENDAR, policy.Phase.RESOLVE) == 4 * 3600
    assert policy.sla_clock(1, policy.Phase.RESOLVE) == "business"
    monkeypatch.setitem(constants.SLA_RESOLUTION_BY_TIER, 1, ("business", 2 * 3600))
    due = policy.deadlines(1, CALENDAR, start=MONDAY_10, phase=policy.Phase.RESOLVE).due_at
    assert due == MONDAY_10 + timedelta(hours=2)


def test_an_acknowledged_l1_case_counts_down_to_its_resolution_in_business_time(case, analyst):
    with time_machine.travel(MONDAY_10, tick=False):
        case = services.case_acknowledge(case=case, actor=analyst)
    clock = display.countdown(case, CALENDAR, MONDAY_10 + timedelta(hours=1))
    assert (clock["running"], clock["phase"], clock["goal"], clock["business"]) == (
        True,
        "resolve",
        "to resolve",
        True,
    )
    assert clock["left_text"] == "3 h"


def test_pausing_and_resuming_an_acknowledged_l1_case_keeps_the_resolution_time_used(case, analyst):
    with time_machine.travel(MONDAY_10, tick=False):
        case = services.case_acknowledge(case=case, actor=analyst)
    with time_machine.travel(MONDAY_10 + timedelta(hours=1), tick=False):
        case = services.case_pause(case=case, actor=analyst, reason="Asked the author")
    assert (case.due_at, case.clock_used_s) == (None, 3600.0)
    with time_machine.travel(MONDAY_10 + timedelta(hours=2), tick=False):
        case = services.case_resume(case=case, actor=analyst)
    assert (case.status, case.due_at) == ("acknowledged", MONDAY_10 + timedelta(hours=5))


def test_an_acknowledged_l1_case_stays_in_next_deadlines_with_its_resolution_clock(client, analyst, case):
    services.case_acknowledge(case=case, actor=analyst)
    case.refresh_from_db()
    assert case.due_at is not None
    client.force_login(analyst)
    html = client.get("/").content.decode()
    listed = html.split('id="next-deadlines"')[1].split("</ol>")[0]
    assert case.ticket in listed and "resolve by" in listed
    assert ReviewCase.objects.get(pk=case.pk).clock_phase == "resolve"


def test_an_unacknowledged_case_in_next_deadlines_says_it_must_be_acknowledged(client, analyst, case):
    client.force_login(analyst)
    listed = client.get("/").content.decode().split('id="next-deadlines"')[1].split("</ol>")[0]
    assert case.ticket in listed and "acknowledge by" in listed


def test_the_migration_gives_a_case_acknowledged_before_the_resolution_clock_its_clock(case, analyst):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("escalation.migrations.0007_l1_resolution_clock")
    with time_machine.travel(MONDAY_10, tick=False):
        case = services.case_acknowledge(case=case, actor=analyst)
    # as an acknowledgement left a case before: no clock, breached by a late acknowledgement
    ReviewCase.objects.filter(pk=case.pk).update(
        due_at=None, at_risk_at=None, clock_started_at=None, sla_state="breached"
    )
    migration.start_resolution_clocks(apps, None)
    case.refresh_from_db()
    assert (case.due_at, case.clock_started_at, case.sla_state) == (
        MONDAY_10 + timedelta(hours=4),
        MONDAY_10,
        "on_track",
    )


def test_the_case_api_says_which_clock_runs(client, analyst, case):
    client.force_login(analyst)
    assert client.get(f"/api/v1/cases/{case.ticket}").json()["clock"] == "acknowledge"
    services.case_acknowledge(case=case, actor=analyst)
    body = client.get(f"/api/v1/cases/{case.ticket}").json()
    assert body["clock"] == "resolve" and body["due_at"]
    services.case_pause(case=ReviewCase.objects.get(pk=case.pk), actor=analyst, reason="Waiting")
    assert client.get(f"/api/v1/cases/{case.ticket}").json()["clock"] is None
