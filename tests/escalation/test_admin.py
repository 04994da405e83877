"""Admin console: calendars and notification targets are editable, cases read-only."""

from __future__ import annotations

import pytest
from django.test import Client

from escalation import selectors
from escalation.models import BusinessCalendar, CurationItem

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(admin_user_obj):
    client = Client()
    client.force_login(admin_user_obj)
    return client


def calendar_form(workspace, **overrides):
    data = {
        "workspace": workspace.pk,
        "timezone": "Europe/Berlin",
        "working_days": ["0", "1", "2", "3"],  # ticked weekdays, Monday to Thursday
        "day_start": "08:00",
        "day_end": "16:00",
        "holidays-TOTAL_FORMS": "1",
        "holidays-INITIAL_FORMS": "0",
        "holidays-MIN_NUM_FORMS": "0",
        "holidays-MAX_NUM_FORMS": "1000",
        "holidays-0-date": "2026-12-24",
        "holidays-0-name": "Christmas Eve",
    }
    data.update(overrides)
    return data


def test_an_admin_sets_a_business_calendar_that_the_sla_clock_uses(admin_client_, workspace):
    response = admin_client_.post("/admin/escalation/businesscalendar/add/", calendar_form(workspace))
    assert response.status_code == 302, response.content.decode()[:2000]
    cal = selectors.calendar_for_workspace(workspace)
    assert (cal.tz, sorted(cal.working_days), str(cal.start), str(cal.end)) == (
        "Europe/Berlin",
        [0, 1, 2, 3],
        "08:00:00",
        "16:00:00",
    )
    assert [str(d) for d in cal.holidays] == ["2026-12-24"]


@pytest.mark.parametrize(
    "field, value",
    [("timezone", "Mars/Olympus"), ("working_days", ["7"]), ("working_days", []), ("day_end", "07:00")],
)
def test_a_bad_calendar_is_refused_with_a_form_error(admin_client_, workspace, field, value):
    response = admin_client_.post(
        "/admin/escalation/businesscalendar/add/", calendar_form(workspace, **{field: value})
    )
    assert response.status_code == 200
    assert "errornote" in response.content.decode() or "errorlist" in response.content.decode()
    assert BusinessCalendar.objects.count() == 0


def test_the_calendar_is_edited_as_ticked_weekdays_and_hours_not_json(admin_client_, workspace):
    page = admin_client_.get("/admin/escalation/businesscalendar/add/").content.decode()
    assert 'type="checkbox" name="working_days" value="0"' in page and "Monday" in page
    assert 'type="time" name="day_start"' in page and "[0, 1, 2, 3, 4]" not in page
    admin_client_.post("/admin/escalation/businesscalendar/add/", calendar_form(workspace))
    listed = admin_client_.get("/admin/escalation/businesscalendar/").content.decode()
    assert "Monday, Tuesday, Wednesday, Thursday" in listed


def test_cases_are_listed_but_not_editable_in_the_admin(admin_client_, case):
    assert admin_client_.get("/admin/escalation/reviewcase/").status_code == 200
    page = admin_client_.get(f"/admin/escalation/reviewcase/{case.pk}/change/")
    assert page.status_code == 200 and case.ticket in page.content.decode()
    assert (
        admin_client_.post(f"/admin/escalation/reviewcase/{case.pk}/change/", {"tier": 3}).status_code == 403
    )
    case.refresh_from_db()
    assert case.tier == 1


def test_a_curation_item_is_closed_through_the_admin_action(admin_client_, case, analyst):
    from escalation import services

    services.case_resolve(case=case, actor=analyst, decision="kb_correction", rationale="outdated page")
    item = CurationItem.objects.get()
    response = admin_client_.post(
        "/admin/escalation/curationitem/", {"action": "mark_done", "_selected_action": [item.pk]}
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert item.status == "done" and item.closed_at is not None
