"""Escalation services against the real database: intake, transitions, conflicts, feedback."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from audit import roles
from audit.models import AuditEvent, Claim
from escalation import services
from escalation.errors import CaseConflict, NotPermitted, TransitionNotAllowed
from escalation.models import CurationItem, ReviewCase, ReviewEvent

pytestmark = pytest.mark.django_db

MONDAY_10 = datetime(2026, 11, 23, 10, 0, tzinfo=dt_timezone.utc)


def kinds(case):
    return list(case.events.order_by("at", "id").values_list("kind", flat=True))


# --- intake ---------------------------------------------------------------------------------------


def test_it_opens_a_case_for_every_claim_not_labelled_supported_at_any_confidence(make_answer):
    answer = make_answer(
        [("REFUTED", 0.1), ("NEI", 0.59), ("NEI", 0.75), ("SUPPORTED", 0.9), ("REFUTED", 0.7)]
    )
    with time_machine.travel(MONDAY_10, tick=False):
        cases = services.cases_open_for_answer(answer=answer)
    # a refutation at any confidence, and an NEI however sure the verifier is that nothing backs it
    assert [c.claim.claim_id for c in cases] == ["c1", "c2", "c3", "c5"]
    assert [c.ticket for c in cases] == [f"COMP-ESC-00000{n}" for n in (1, 2, 3, 4)]
    # the seed's 0.60 (004 §11) read on P(supported): a second reason below it
    assert [c.reasons for c in cases] == [
        ["refuted"],
        ["unsupported", "low_confidence"],
        ["unsupported"],
        ["refuted"],
    ]
    first = cases[0]
    assert (first.tier, first.status, first.sla_state, first.trigger) == (1, "open", "on_track", "refuted")
    assert first.due_at == MONDAY_10 + timedelta(minutes=30)
    assert first.at_risk_at == MONDAY_10 + timedelta(minutes=24)
    assert kinds(first) == ["opened"]
    assert AuditEvent.objects.filter(action="case.opened", object_id=str(first.pk)).count() == 1


def test_it_opens_a_case_for_every_claim_of_a_regulated_domain(make_answer, workspace):
    workspace.regulated_domains = ["Finance"]
    workspace.save(update_fields=["regulated_domains"])
    answer = make_answer([("SUPPORTED", 0.95), ("NEI", 0.9)], domain="finance")
    cases = services.cases_open_for_answer(answer=answer)
    assert [c.trigger for c in cases] == ["regulated_domain", "unsupported"]
    assert cases[1].reasons == ["unsupported", "regulated_domain"]
    assert all(c.domain == "finance" for c in cases)


def test_it_uses_the_workspace_override_of_the_low_confidence_threshold(make_answer, workspace):
    workspace.threshold_overrides = {"low_confidence_threshold": 0.3}
    workspace.save(update_fields=["threshold_overrides"])
    answer = make_answer([("NEI", 0.35), ("NEI", 0.2)])
    assert [c.reasons for c in services.cases_open_for_answer(answer=answer)] == [
        ["unsupported"],
        ["unsupported", "low_confidence"],
    ]


def test_a_workspace_may_spare_minor_nei_claims_by_its_unsupported_review_setting(make_answer, workspace):
    answer = make_answer([("NEI", 0.7), ("REFUTED", 0.2)], importance="minor")
    assert len(services.cases_open_for_answer(answer=answer)) == 2  # the default spares none
    workspace.threshold_overrides = {"unsupported_review": "material"}
    workspace.save(update_fields=["threshold_overrides"])
    spared = make_answer([("NEI", 0.7), ("REFUTED", 0.2)], importance="minor")
    assert [c.claim.claim_id for c in services.cases_open_for_answer(answer=spared)] == ["c2"]


def test_a_reaudit_of_the_same_answer_joins_the_open_case_and_never_opens_a_duplicate(make_answer):
    first = make_answer([("NEI", 0.7), ("SUPPORTED", 0.9)])
    (case,) = services.cases_open_for_answer(answer=first)
    again = make_answer([("NEI", 0.72), ("SUPPORTED", 0.9)])
    again.query, again.original_text = first.query, first.original_text
    again.save(update_fields=["query", "original_text"])
    assert [c.pk for c in services.cases_open_for_answer(answer=again)] == [case.pk]
    assert services.cases_open_for_answer(answer=again)[0].pk == case.pk  # once more: still one
    assert ReviewCase.objects.count() == 1
    assert list(case.joined_claims.values_list("answer_id", flat=True)) == [again.pk]
    assert kinds(case) == ["opened", "note"]


def test_finding_the_cases_a_reaudit_joins_reads_the_same_queries_for_3_claims_as_for_30(make_answer):
    def lookup_queries(n):
        first = make_answer([("NEI", 0.7)] * n)
        services.cases_open_for_answer(answer=first)
        again = make_answer([("NEI", 0.72)] * n)
        again.query, again.original_text = first.query, first.original_text
        again.save(update_fields=["query", "original_text"])
        claims = list(again.claims.all())
        with CaptureQueriesContext(connection) as seen:
            found = services._cases_of(claims, [first.pk])
        # every claim of the re-audit belongs to the case its earlier twin opened (or joined)
        assert all(case is not None and case.status == "open" for case in found.values())
        return len(seen.captured_queries)

    assert lookup_queries(3) == lookup_queries(30) == 4


def test_a_reaudit_whose_many_claims_join_one_case_adds_them_with_one_note_and_reopens_it_once(
    make_answer, analyst
):
    first = make_answer([("NEI", 0.7)] * 12)  # 12 claims that need a person: one case for the answer
    (case,) = services.cases_open_for_answer(answer=first)
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="nothing backs them")
    again = make_answer([("REFUTED", 0.1)] * 12)
    again.query, again.original_text = first.query, first.original_text
    again.save(update_fields=["query", "original_text"])
    assert [c.pk for c in services.cases_open_for_answer(answer=again)] == [case.pk]
    case.refresh_from_db()
    assert case.joined_claims.filter(answer=again).count() == 12 and ReviewCase.objects.count() == 1
    # one note names the claims that join (the details list them all), one reopening for the new reason
    assert kinds(case)[-2:] == ["note", "reopened"] and kinds(case).count("reopened") == 1
    note = case.events.filter(kind="note").order_by("-id").first()
    assert "found 12 of its claims again (c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, …)" in note.reason
    assert len(note.details["joined_claims"]) == 12 and note.details["labels"]["c12"] == "REFUTED"
    assert case.status == "open" and "refuted" in case.reasons


def test_a_later_finding_on_a_claim_whose_case_was_resolved_reopens_that_case(make_answer, analyst):
    answer = make_answer([("NEI", 0.7)])
    (case,) = services.cases_open_for_answer(answer=answer)
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="nothing backs it")
    assert services.cases_open_for_answer(answer=answer)[0].pk == case.pk  # same reasons: stays resolved
    case.refresh_from_db()
    assert case.status == "resolved"
    Claim.objects.filter(answer=answer).update(label="REFUTED", confidence=0.1)
    (again,) = services.cases_open_for_answer(answer=answer)
    assert (again.pk, again.status) == (case.pk, "open")
    assert ReviewCase.objects.count() == 1 and "refuted" in again.reasons


@pytest.mark.parametrize("share, at_risk_minutes", [(0.5, 15), (1.7, 24)])
def test_it_uses_the_workspace_at_risk_share_and_falls_back_on_a_bad_one(
    make_answer, workspace, share, at_risk_minutes
):
    workspace.threshold_overrides = {"sla_at_risk_share": share}
    workspace.save(update_fields=["threshold_overrides"])
    with time_machine.travel(MONDAY_10, tick=False):
        (case,) = services.cases_open_for_answer(answer=make_answer([("REFUTED", 0.1)]))
    assert case.at_risk_at == MONDAY_10 + timedelta(minutes=at_risk_minutes)


def test_it_keeps_one_open_case_per_claim_when_intake_runs_again(make_answer):
    answer = make_answer([("REFUTED", 0.1)])
    first = services.cases_open_for_answer(answer=answer)
    again = services.cases_open_for_answer(answer=answer)
    assert [c.pk for c in again] == [c.pk for c in first]
    assert ReviewCase.objects.count() == 1


def test_the_database_refuses_a_second_open_case_for_a_claim(case):
    duplicate = ReviewCase(
        workspace=case.workspace, number=99, ticket="COMP-ESC-000099", claim=case.claim, trigger="manual"
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        duplicate.save()


def test_the_database_refuses_a_tier_outside_1_to_3_and_resolved_without_resolved_at(case):
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewCase.objects.filter(pk=case.pk).update(tier=4)
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewCase.objects.filter(pk=case.pk).update(status="resolved", decision="confirm")


def test_it_scores_a_critical_refuted_regulated_claim_above_a_minor_nei_one(make_answer, workspace):
    workspace.regulated_domains = ["finance"]
    workspace.save(update_fields=["regulated_domains"])
    high = services.cases_open_for_answer(
        answer=make_answer([("REFUTED", 0.05)], domain="finance", importance="critical")
    )[0]
    low = services.cases_open_for_answer(answer=make_answer([("NEI", 0.55)], importance="minor"))[0]
    assert 0 <= low.risk_score < high.risk_score <= 1


def test_a_moderator_opens_a_case_by_hand_with_a_reason(make_answer, analyst):
    claim = make_answer([("SUPPORTED", 0.95)]).claims.get()
    with pytest.raises(ValidationError) as err:
        services.case_open(claim=claim, actor=analyst, reason="  ")
    assert "reason" in err.value.message_dict
    case = services.case_open(claim=claim, actor=analyst, reason="Customer complaint about this figure")
    assert case.trigger == "manual"
    assert case.events.get().actor == analyst
    with pytest.raises(TransitionNotAllowed, match=case.ticket):
        services.case_open(claim=claim, actor=analyst, reason="again")


# --- transitions ----------------------------------------------------------------------------------


def test_acknowledging_stops_the_l1_acknowledgement_clock_starts_its_resolution_clock_and_takes_ownership(
    case, analyst
):
    with time_machine.travel(MONDAY_10, tick=False):
        case = services.case_acknowledge(case=case, actor=analyst)
    # the L1 resolution target: 4 business hours from the acknowledgement (at risk at 80 %)
    assert (case.status, case.owner, case.clock_phase) == ("acknowledged", analyst, "resolve")
    assert (case.due_at, case.at_risk_at) == (
        MONDAY_10 + timedelta(hours=4),
        MONDAY_10 + timedelta(minutes=192),
    )
    assert case.acknowledged_at == MONDAY_10 and case.sla_state == "on_track"
    event = case.events.get(kind="acknowledged")
    assert (event.actor, event.tier, event.details["clock"]) == (analyst, 1, "resolve")


def test_acknowledging_with_a_note_records_the_note_with_the_acknowledgement(case, analyst):
    case = services.case_acknowledge(case=case, actor=analyst, note="  looking into the layer count ")
    assert kinds(case) == ["opened", "acknowledged", "note"]
    assert case.events.get(kind="note").reason == "looking into the layer count"


def test_an_acknowledgement_whose_note_cannot_be_stored_is_not_stored_either(case, analyst, monkeypatch):
    create = ReviewEvent.objects.create

    def refuse_notes(**fields):  # the database refusing the note's row
        if fields["kind"] == ReviewEvent.Kind.NOTE:
            raise DatabaseError("disk full")
        return create(**fields)

    monkeypatch.setattr(ReviewEvent.objects, "create", refuse_notes)
    with pytest.raises(DatabaseError):
        services.case_acknowledge(case=case, actor=analyst, note="looking")
    case.refresh_from_db()
    assert (case.status, case.owner, kinds(case)) == ("open", None, ["opened"])


def test_of_two_analysts_acknowledging_the_same_case_one_wins_and_the_other_gets_a_conflict(
    case, analyst, make_user
):
    other = make_user("analyst2", roles.L1_ANALYST)
    seen_by_first = ReviewCase.objects.get(pk=case.pk)
    seen_by_second = ReviewCase.objects.get(pk=case.pk)
    services.case_acknowledge(case=seen_by_first, actor=analyst)
    with pytest.raises(CaseConflict, match=r"changed by someone else \(now acknowledged by analyst1"):
        services.case_acknowledge(case=seen_by_second, actor=other)
    case.refresh_from_db()
    assert case.owner == analyst
    assert kinds(case) == ["opened", "acknowledged"]


@pytest.mark.django_db(transaction=True)
def test_two_analysts_acknowledging_at_the_same_moment_in_two_threads_one_succeeds(
    refuted_claim, analyst, make_user
):
    if connection.vendor != "postgresql":
        pytest.skip("needs row locks across connections (PostgreSQL); SQLite serialises writers")
    other = make_user("analyst2", roles.L1_ANALYST)
    (case,) = services.cases_open_for_answer(answer=refuted_claim.answer)
    barrier = threading.Barrier(2)
    outcomes: dict[str, str] = {}

    def acknowledge(user):
        mine = ReviewCase.objects.get(pk=case.pk)
        barrier.wait()
        try:
            services.case_acknowledge(case=mine, actor=user)
            outcomes[user.username] = "ok"
        except CaseConflict:
            outcomes[user.username] = "conflict"
        finally:
            connection.close()

    threads = [threading.Thread(target=acknowledge, args=(u,)) for u in (analyst, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(outcomes.values()) == ["conflict", "ok"]
    assert ReviewEvent.objects.filter(case=case, kind="acknowledged").count() == 1


def test_acknowledging_a_resolved_case_is_not_allowed(case, analyst):
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="Evidence checked")
    with pytest.raises(TransitionNotAllowed, match="resolved"):
        services.case_acknowledge(case=case, actor=analyst)


def test_escalating_needs_a_note_and_moves_the_case_up_with_a_business_hours_clock(case, analyst):
    with pytest.raises(ValidationError) as err:
        services.case_escalate(case=case, actor=analyst, reason="")
    assert "reason" in err.value.message_dict
    with time_machine.travel(MONDAY_10, tick=False):
        case = services.case_escalate(case=case, actor=analyst, reason="Needs a pharmacologist")
    assert (case.tier, case.status, case.owner) == (2, "open", None)
    # default calendar Mon-Fri 09:00-17:00 UTC: 4 business hours from Monday 10:00
    assert case.due_at == MONDAY_10 + timedelta(hours=4)
    event = case.events.get(kind="escalated")
    assert (event.tier, event.reason, event.details["from_tier"]) == (2, "Needs a pharmacologist", 1)


def test_an_l1_analyst_cannot_act_on_a_tier_2_case_but_an_expert_can(case, analyst, expert):
    case = services.case_escalate(case=case, actor=analyst, reason="Needs an expert")
    with pytest.raises(NotPermitted):
        services.case_acknowledge(case=case, actor=analyst)
    assert services.case_acknowledge(case=case, actor=expert).owner == expert


def test_the_last_tier_cannot_be_escalated(case, lead):
    case = services.case_escalate(case=case, actor=lead, reason="to L2")
    case = services.case_escalate(case=case, actor=lead, reason="to L3")
    with pytest.raises(TransitionNotAllowed, match="last tier"):
        services.case_escalate(case=case, actor=lead, reason="beyond")


def test_assigning_needs_an_owner_who_may_work_the_tier(case, analyst, expert, auditor):
    with pytest.raises(ValidationError) as err:
        services.case_assign(case=case, actor=analyst, owner=auditor)
    assert "owner" in err.value.message_dict
    case = services.case_assign(case=case, actor=analyst, owner=expert)
    assert case.owner == expert
    assert case.events.get(kind="assigned").details == {"from": None, "to": "expert1"}


def test_pausing_stops_the_clock_and_resuming_restarts_it_from_where_it_stopped(case, analyst):
    opened = case.opened_at
    with time_machine.travel(opened + timedelta(minutes=10), tick=False):
        case = services.case_pause(case=case, actor=analyst, reason="Asked the submitter for the source")
    assert (case.status, case.due_at, case.at_risk_at) == ("paused", None, None)
    assert case.clock_used_s == pytest.approx(600)
    resumed_at = opened + timedelta(hours=3)
    with time_machine.travel(resumed_at, tick=False):
        case = services.case_resume(case=case, actor=analyst)
    assert case.status == "open"
    assert case.due_at == resumed_at + timedelta(minutes=20)
    assert case.at_risk_at == resumed_at + timedelta(minutes=14)
    assert kinds(case) == ["opened", "paused", "resumed"]


def test_a_note_is_recorded_without_changing_the_case(case, analyst):
    version = case.version
    services.case_note(case=case, actor=analyst, note="Called the author")
    case.refresh_from_db()
    assert case.version == version
    assert case.events.get(kind="note").reason == "Called the author"


# --- resolution and feedback ----------------------------------------------------------------------


def test_a_relabel_decision_flows_back_to_the_claim_keeping_the_machine_label(case, analyst):
    case = services.case_resolve(
        case=case, actor=analyst, decision="relabel_supported", rationale="Section 4.2 says so"
    )
    assert case.status == "resolved" and case.resolved_at is not None and case.due_at is None
    claim = Claim.objects.get(pk=case.claim_id)
    assert (claim.label, claim.machine_label) == ("SUPPORTED", "REFUTED")
    entry = claim.label_history[-1]
    assert (entry["from"], entry["to"], entry["by"], entry["by_human"]) == (
        "REFUTED",
        "SUPPORTED",
        "analyst1",
        True,
    )
    assert case.ticket in entry["reason"]
    assert AuditEvent.objects.filter(action="claim.relabelled", object_id=str(claim.pk)).exists()
    assert case.events.get(kind="resolved").details["label"] == "SUPPORTED"


def test_a_confirm_decision_records_the_human_confirmation(case, analyst):
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="Indeed wrong")
    claim = Claim.objects.get(pk=case.claim_id)
    assert claim.label == "REFUTED"
    assert claim.label_history[-1]["from"] == claim.label_history[-1]["to"] == "REFUTED"


def test_resolving_needs_a_rationale_and_a_known_decision(case, analyst):
    with pytest.raises(ValidationError) as err:
        services.case_resolve(case=case, actor=analyst, decision="confirm", rationale=" ")
    assert "rationale" in err.value.message_dict
    with pytest.raises(ValidationError) as err:
        services.case_resolve(case=case, actor=analyst, decision="shrug", rationale="x")
    assert "decision" in err.value.message_dict
    case.refresh_from_db()
    assert case.status == "open"


def test_a_knowledge_base_correction_decision_opens_a_curation_item(case, analyst):
    services.case_resolve(
        case=case, actor=analyst, decision="kb_correction", rationale="Handbook page is outdated"
    )
    item = CurationItem.objects.get()
    assert (item.case_id, item.claim_id, item.source, item.status) == (
        case.pk,
        case.claim_id,
        "review",
        "open",
    )
    assert item.reason == "Handbook page is outdated"


def test_only_the_compliance_lead_may_suppress_an_answer(case, analyst, lead):
    with pytest.raises(NotPermitted):
        services.case_resolve(case=case, actor=analyst, decision="suppress", rationale="harmful")
    services.case_resolve(case=case, actor=lead, decision="suppress", rationale="harmful")
    case.claim.answer.refresh_from_db()
    assert case.claim.answer.suppressed is True
    assert AuditEvent.objects.filter(action="answer.suppressed").count() == 1


def test_reopening_restarts_the_clock_unless_another_case_is_open_for_the_claim(case, analyst):
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="ok")
    case = services.case_reopen(case=case, actor=analyst, reason="New evidence")
    assert (case.status, case.resolved_at, case.decision) == ("open", None, "")
    assert case.due_at is not None
    services.case_resolve(case=case, actor=analyst, decision="confirm", rationale="ok again")
    newer = services.case_open(claim=case.claim, actor=analyst, reason="Another complaint")
    with pytest.raises(TransitionNotAllowed, match=newer.ticket):
        services.case_reopen(case=case, actor=analyst, reason="again")


def test_the_live_sla_state_of_a_case_never_goes_back_within_one_clock(case):
    opened = case.opened_at
    assert case.sla_state_at(opened + timedelta(minutes=1)) == "on_track"
    assert case.sla_state_at(opened + timedelta(minutes=24)) == "at_risk"
    assert case.sla_state_at(opened + timedelta(minutes=31)) == "breached"
    case.sla_state = "breached"
    assert case.sla_state_at(opened) == "breached"


def test_a_human_label_from_a_resolution_survives_a_later_machine_re_verification(case, analyst):
    from audit.services.labels import claim_machine_relabel

    services.case_resolve(
        case=case, actor=analyst, decision="relabel_supported", rationale="Checked the source"
    )
    claim = Claim.objects.select_related("answer__workspace").get(pk=case.claim_id)
    claim_machine_relabel(
        claim=claim, label="NEI", confidence=0.4, verdict="not_found", source="nightly_audit"
    )
    claim.refresh_from_db()
    assert (claim.label, claim.machine_label) == ("SUPPORTED", "NEI")
