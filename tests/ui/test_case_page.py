"""The case page over HTTP: inline errors, the owner picker, notes, reopening, business-time
countdowns, acknowledgement times, and the wording of the queue, cards and audit trail."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from escalation import display, policy
from escalation.models import ReviewCase
from tests.ui.conftest import build_answer, open_case

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(workspace):
    _, claims = build_answer(workspace)
    return open_case(claims[1])


def test_an_unknown_owner_is_an_inline_error_on_the_case_page(client, analyst, case):
    client.force_login(analyst)
    response = client.post(f"/escalations/{case.ticket}/assign", {"owner": "nobody-here"})
    html = response.content.decode()
    assert response.status_code == 400
    assert f"<h1>{case.ticket}" in html and "That request could not be read" not in html
    assert "“nobody-here” cannot own this case: pick someone holding L1 analyst" in html
    case.refresh_from_db()
    assert case.owner is None


def test_the_owner_picker_offers_the_tiers_role_holders_of_the_workspace(
    client, analyst, expert, make_user, case
):
    from audit import roles
    from audit.models import Workspace

    other = Workspace.objects.create(name="Other", slug="other")
    outsider = make_user("outsider", roles.L1_ANALYST)
    outsider.theoria_profile.workspace = other
    outsider.theoria_profile.save()
    make_user("auditor9", roles.AUDITOR)
    client.force_login(analyst)
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    picker = html.split('id="assign-owner"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]+)"', picker) == ["analyst1", "expert1"]
    assert '<optgroup label="L1 analyst">' in picker and '<optgroup label="L2 domain expert">' in picker
    response = client.post(f"/escalations/{case.ticket}/assign", {"owner": "expert1"})
    assert response.status_code == 302
    case.refresh_from_db()
    assert case.owner == expert
    assert client.post(f"/escalations/{case.ticket}/assign", {"owner": "outsider"}).status_code == 400


def test_a_note_can_be_added_after_acknowledging_and_an_empty_one_is_refused_inline(client, analyst, case):
    client.force_login(analyst)
    client.post(f"/escalations/{case.ticket}/acknowledge", {})
    assert client.post(f"/escalations/{case.ticket}/note", {"note": "Asked the KB owner."}).status_code == 302
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    assert "<strong>Note</strong> at Level 1 by analyst1 — Asked the KB owner." in html
    response = client.post(f"/escalations/{case.ticket}/note", {"note": ""})
    assert response.status_code == 400 and "Write the note before adding it." in response.content.decode()


def test_a_resolved_case_can_be_reopened_with_a_reason(client, analyst, case):
    client.force_login(analyst)
    client.post(
        f"/escalations/{case.ticket}/resolve",
        {"decision": "confirm", "rationale": "Checked.", "confirm": "on"},
    )
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    assert 'id="form-reopen"' in html and 'id="form-resolve"' not in html
    bad = client.post(f"/escalations/{case.ticket}/reopen", {"reason": ""})
    assert bad.status_code == 400 and "Why reopen" in bad.content.decode()
    assert (
        client.post(f"/escalations/{case.ticket}/reopen", {"reason": "New evidence arrived."}).status_code
        == 302
    )
    case.refresh_from_db()
    assert case.status == "open" and case.due_at is not None


def test_an_l2_countdown_counts_business_hours_and_shows_the_wall_clock_deadline():
    calendar = policy.Calendar(tz="UTC", working_days=frozenset(range(5)), start=dt.time(9), end=dt.time(17))
    friday_4pm = dt.datetime(2026, 11, 20, 16, 0, tzinfo=dt.timezone.utc)
    due = policy.deadlines(2, calendar, start=friday_4pm).due_at  # 1 h on Friday + 3 h on Monday
    assert due == dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)
    case = ReviewCase(tier=2, due_at=due)
    clock = display.countdown(case, calendar, friday_4pm)
    assert clock["business"] and clock["left_text"] == "4 h"
    saturday = friday_4pm + dt.timedelta(days=1)
    clock = display.countdown(case, calendar, saturday)
    assert clock["left_text"] == "3 h" and clock["stands_still"]
    assert clock["resumes_at"] == dt.datetime(2026, 11, 23, 9, 0, tzinfo=dt.timezone.utc)
    l1 = display.countdown(ReviewCase(tier=1, due_at=saturday + dt.timedelta(minutes=30)), calendar, saturday)
    assert not l1["business"] and l1["left_text"] == "30 min"


def test_the_case_page_says_how_fast_it_was_acknowledged_and_shows_the_clock_to_resolve(
    client, analyst, case
):
    from escalation.models import ReviewEvent

    ReviewEvent.objects.filter(case=case, kind="opened").update(
        at=timezone.now() - dt.timedelta(minutes=4, seconds=10)
    )
    client.force_login(analyst)
    client.post(f"/escalations/{case.ticket}/acknowledge", {})
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    assert "acknowledged in 4 min — on time; the clock to resolve runs" in html
    assert "business time left to resolve" in html and "SLA met" not in html
    queue = client.get("/escalations/").content.decode()
    assert "business time left to resolve" in queue
    assert "SLA met" not in queue and "Clock stopped" not in queue


def test_an_escalated_case_shows_its_business_clock_with_the_deadline(client, analyst, case):
    client.force_login(analyst)
    client.post(f"/escalations/{case.ticket}/escalate", {"note": "Needs a neuroscientist."})
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    case.refresh_from_db()
    assert case.tier == 2
    assert "business time left" in html or "outside business hours" in html
    assert f'datetime="{case.due_at.isoformat()}"' in html and "UTC" in html
    assert "SLA (business hours)" in html


def test_the_risk_score_is_explained_in_one_line(client, analyst, case):
    client.force_login(analyst)
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    assert 'id="risk-help"' in html and "How urgent this case is, 0 (low) to 1 (high)" in html


def test_resolved_rows_say_view_and_the_export_link_follows_the_filter(client, analyst, workspace, case):
    client.force_login(analyst)
    client.post(
        f"/escalations/{case.ticket}/resolve",
        {"decision": "confirm", "rationale": "Checked.", "confirm": "on"},
    )
    html = client.get("/escalations/?status=resolved").content.decode()
    row = html.split(f'data-ticket="{case.ticket}"')[1].split("</tr>")[0]
    assert f'>View<span class="sr-only"> {case.ticket}</span></a>' in row and ">Open" not in row
    assert (
        "Export the claim cards of every resolved case in the workspace:" in html
        and "escalation=resolved" in html
    )
    html = client.get("/escalations/").content.decode()
    assert "Export the claim cards of every open case in the workspace:" in html


def test_the_dashboard_says_1_open_case(client, analyst, case):
    client.force_login(analyst)
    html = client.get("/dashboard/").content.decode()
    assert "<strong>1</strong> open case<" in html


def test_the_claim_audit_trail_uses_words_and_says_system_for_automatic_actors(client, analyst, workspace):
    from audit.models import AuditEvent

    answer, claims = build_answer(workspace)
    AuditEvent.objects.create(
        workspace=workspace,
        actor_label="system",
        action="answer.audited",
        object_type="audit.answer",
        object_id=str(answer.pk),
    )
    AuditEvent.objects.create(
        workspace=workspace,
        actor_label="audit_web",
        action="answer.web_verified",
        object_type="audit.answer",
        object_id=str(answer.pk),
        details={"status": "failed"},
    )
    client.force_login(analyst)
    html = client.get(f"/claims/{claims[0].pk}/").content.decode()
    trail = html.split('id="ev-log-h"')[1]
    assert "<strong>system</strong> audited the answer" in trail
    assert (
        "<strong>system (audit web)</strong> tried web sources; every call failed, so the local result stands"
        in trail
    )


def test_a_supported_claims_tooltip_never_shows_p_refuted(client, analyst, workspace):
    from audit.models import Claim

    answer, claims = build_answer(workspace)
    Claim.objects.filter(pk=claims[0].pk).update(metrics={"best_similarity": 0.84, "p_refuted": 1.0})
    client.force_login(analyst)
    html = client.get(f"/answers/{answer.public_id}/").content.decode()
    tip = html.split(f'id="tip-{claims[0].pk}"')[1].split("</span></span>")[0]
    assert "p refuted" not in tip and "p_refuted" not in tip
    assert "Supported: the evidence backs this claim (P(supported) 0.91)." in tip
    assert "similarity to the best passage 0.84" in tip


def test_an_l2_acknowledgement_says_the_wall_clock_time_and_the_business_time():
    from types import SimpleNamespace

    calendar = policy.Calendar(tz="UTC", working_days=frozenset(range(5)), start=dt.time(9), end=dt.time(17))
    sunday = dt.datetime(2026, 10, 25, 13, 54, tzinfo=dt.timezone.utc)
    events = [
        SimpleNamespace(kind="escalated", at=sunday, tier=2, details={}),
        SimpleNamespace(
            kind="acknowledged", at=sunday + dt.timedelta(minutes=34), tier=2, details={"within_sla": True}
        ),
    ]
    ack = display.acknowledgement(SimpleNamespace(acknowledged_at=events[1].at), events, calendar)
    assert ack["text"] == "34 min (under 1 min of business time)" and ack["met"]


def test_queue_filters_accept_any_letter_case(client, analyst, case):
    client.force_login(analyst)
    response = client.get("/escalations/", {"status": "OPEN", "sla_state": "On_Track"})
    assert response.status_code == 200 and f'data-ticket="{case.ticket}"' in response.content.decode()


def test_a_failed_action_puts_an_error_summary_first_linking_each_message_to_its_marked_field(
    client, analyst, workspace
):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    response = client.post(f"/escalations/{case.ticket}/resolve", {"decision": "confirm", "rationale": ""})
    html = response.content.decode()
    assert response.status_code == 400
    summary = html.split('id="error-summary"')[1].split("</div>")[0]
    assert '<a href="#res-rationale">Rationale: Give the rationale for your decision.</a>' in summary
    assert (
        '<a href="#res-confirm">Confirmation: Tick “I confirm this resolution” to resolve the case' in summary
    )
    assert (
        'id="res-rationale" name="rationale" rows="3" required aria-invalid="true" aria-describedby="res-rationale-error"'
        in html
    )
    assert 'id="res-confirm" required aria-invalid="true" aria-describedby="res-confirm-error"' in html
    assert '<p class="error" id="res-confirm-error">Tick' in html
    assert html.index('id="error-summary"') < html.index('id="form-resolve"')


def test_the_history_names_the_assignee_the_decision_and_the_reopen_reason(client, lead, expert, workspace):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(lead)
    base = f"/escalations/{case.ticket}"
    client.post(f"{base}/assign", {"owner": "expert1"})
    client.post(f"{base}/unassign", {"note": "expert on leave"})
    client.post(
        f"{base}/resolve", {"decision": "relabel_nei", "rationale": "No source states it.", "confirm": "on"}
    )
    client.post(f"{base}/reopen", {"reason": "A newer source appeared."})
    html = client.get(f"{base}/").content.decode()
    history = html.split('id="hist-h"')[1]
    assert "<strong>Assigned to expert1</strong> at Level 1 by lead1 — was unassigned" in history
    assert "<strong>Unassigned</strong> at Level 1 by lead1 — was expert1; expert on leave" in history
    assert "<strong>Resolved: Relabel NEI</strong> at Level 1 by lead1 — No source states it." in history
    assert (
        "<strong>Reopened</strong> at Level 1 by lead1 — why: A newer source appeared. "
        "(it had been resolved: Relabel NEI — No source states it.)"
    ) in history


def test_a_reopened_case_keeps_its_earlier_resolutions_on_its_page(client, lead, workspace):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(lead)
    base = f"/escalations/{case.ticket}"
    client.post(f"{base}/resolve", {"decision": "confirm", "rationale": "First look.", "confirm": "on"})
    client.post(f"{base}/reopen", {"reason": "Second opinion."})
    client.post(f"{base}/resolve", {"decision": "relabel_nei", "rationale": "Second look.", "confirm": "on"})
    html = client.get(f"{base}/").content.decode()
    section = html.split('id="resolutions"')[1].split("</section>")[0]
    assert "<strong>Confirm the label</strong> by lead1" in section and "First look." in section
    assert "Reopened by lead1" in section and "Second opinion." in section
    assert (
        "<strong>Relabel NEI</strong> by lead1" in section and '<span class="pill">current</span>' in section
    )


def test_a_double_submit_of_an_action_says_it_already_succeeded(client, analyst, workspace):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    client.post(f"/escalations/{case.ticket}/acknowledge", {})
    response = client.post(f"/escalations/{case.ticket}/acknowledge", {}, follow=True)
    html = response.content.decode()
    assert f"You already acknowledged {case.ticket} at" in html and "someone else" not in html
    assert case.events.filter(kind="acknowledged").count() == 1


def test_the_sla_label_says_how_the_clock_counts_in_plain_words(client, analyst, workspace):
    _, claims = build_answer(workspace)
    case = open_case(claims[1])
    client.force_login(analyst)
    html = client.get(f"/escalations/{case.ticket}/").content.decode()
    assert "<dt>SLA (wall-clock time)</dt>" in html and "clock clock" not in html.lower()
