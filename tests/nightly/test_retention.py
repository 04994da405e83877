"""Retention of audit data: the cutoff at its boundaries, open escalation cases, events, dry runs."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import CommandError, call_command

from audit.models import Answer, AuditEvent, Claim, Evidence, NightlyReport, VerificationRun
from audit.services.retention import retention_purge

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.timezone.utc)


def _cutoff(workspace):
    return NOW - dt.timedelta(days=workspace.retention_days)


def test_it_purges_answers_just_before_the_cutoff_and_keeps_those_at_and_after_it(workspace, store_answer):
    cutoff = _cutoff(workspace)
    before = store_answer(
        workspace, cutoff - dt.timedelta(seconds=1), claims=[("a", "NEI", 0.1), ("b", "REFUTED", 0.2)]
    )
    at = store_answer(workspace, cutoff)
    after = store_answer(workspace, cutoff + dt.timedelta(seconds=1))

    result = retention_purge(workspace=workspace, now=NOW)

    assert (result.answers, result.claims, result.evidence, result.runs) == (1, 2, 2, 1)
    assert set(Answer.objects.values_list("id", flat=True)) == {at.id, after.id}
    assert not Claim.objects.filter(answer_id=before.id).exists()
    assert not Evidence.objects.filter(claim__answer_id=before.id).exists()
    assert not VerificationRun.objects.filter(answer_id=before.id).exists()


def test_it_uses_the_workspace_retention_period(workspace, store_answer):
    workspace.retention_days = 30
    workspace.save(update_fields=["retention_days"])
    old = store_answer(workspace, NOW - dt.timedelta(days=31))
    recent = store_answer(workspace, NOW - dt.timedelta(days=29))

    retention_purge(workspace=workspace, now=NOW)

    assert list(Answer.objects.values_list("id", flat=True)) == [recent.id]
    assert not Answer.objects.filter(id=old.id).exists()


def test_it_leaves_other_workspaces_alone(workspace, store_answer):
    from audit.models import Workspace

    other = Workspace.objects.create(name="Other", slug="other", retention_days=365)
    kept = store_answer(other, NOW - dt.timedelta(days=100))
    store_answer(workspace, NOW - dt.timedelta(days=100))

    retention_purge(workspace=workspace, now=NOW)

    assert list(Answer.objects.values_list("id", flat=True)) == [kept.id]


def test_it_purges_audit_events_before_the_cutoff_only(workspace):
    cutoff = _cutoff(workspace)
    AuditEvent.objects.create(
        action="test.old",
        object_type="x",
        object_id="1",
        workspace=workspace,
        at=cutoff - dt.timedelta(microseconds=1),
    )
    AuditEvent.objects.create(
        action="test.edge", object_type="x", object_id="2", workspace=workspace, at=cutoff
    )

    result = retention_purge(workspace=workspace, now=NOW)

    assert result.events == 1
    assert set(AuditEvent.objects.values_list("action", flat=True)) == {"test.edge", "retention.purged"}


def test_it_keeps_an_answer_under_an_open_case_with_its_events_however_old(workspace, store_answer, lead):
    from escalation.services import case_open

    old_open = store_answer(
        workspace, NOW - dt.timedelta(days=400), claims=[("x", "REFUTED", 0.1), ("y", "NEI", 0.2)]
    )
    old_closed = store_answer(workspace, NOW - dt.timedelta(days=400))
    case = case_open(claim=old_open.claims.get(claim_id="c2"), actor=lead, reason="check this")
    # events about the kept answer and its claims, older than retention
    for obj_type, obj_id in (
        ("audit.answer", old_open.id),
        ("audit.claim", old_open.claims.get(claim_id="c1").id),
        ("audit.answer", old_closed.id),
    ):
        AuditEvent.objects.create(
            action="answer.audited",
            object_type=obj_type,
            object_id=str(obj_id),
            workspace=workspace,
            at=NOW - dt.timedelta(days=400),
        )

    result = retention_purge(workspace=workspace, now=NOW)

    assert result.kept_for_open_cases == 1 and result.answers == 1
    assert list(Answer.objects.values_list("id", flat=True)) == [old_open.id]
    assert old_open.claims.count() == 2  # the whole answer stays, not only the escalated claim
    kept_events = AuditEvent.objects.filter(action="answer.audited")
    assert sorted((e.object_type, e.object_id) for e in kept_events) == sorted(
        [("audit.answer", str(old_open.id)), ("audit.claim", str(old_open.claims.get(claim_id="c1").id))]
    )
    case.refresh_from_db()
    assert case.is_open


def test_it_purges_an_old_answer_once_its_case_is_resolved(workspace, store_answer, lead):
    from escalation.services import case_open, case_resolve

    answer = store_answer(workspace, NOW - dt.timedelta(days=400), claims=[("x", "REFUTED", 0.1)])
    case = case_open(claim=answer.claims.get(), actor=lead, reason="check this")
    case_resolve(case=case, actor=lead, decision="confirm", rationale="the source says otherwise")

    result = retention_purge(workspace=workspace, now=NOW)

    assert (result.answers, result.kept_for_open_cases) == (1, 0)
    assert not Answer.objects.exists()


def test_it_records_one_audit_event_per_purge_with_the_counts(workspace, store_answer):
    store_answer(workspace, NOW - dt.timedelta(days=91))

    retention_purge(workspace=workspace, now=NOW)
    retention_purge(workspace=workspace, now=NOW)

    events = list(AuditEvent.objects.filter(action="retention.purged").order_by("id"))
    assert len(events) == 2
    assert events[0].details["answers"] == 1 and events[1].details["answers"] == 0
    assert events[0].actor_label == "retention" and events[0].workspace_id == workspace.id


def test_a_dry_run_counts_and_changes_nothing(workspace, store_answer):
    store_answer(workspace, NOW - dt.timedelta(days=91), claims=[("a", "NEI", 0.1), ("b", "NEI", 0.1)])
    events_before = AuditEvent.objects.count()

    result = retention_purge(workspace=workspace, now=NOW, dry_run=True)

    assert (result.answers, result.claims, result.dry_run) == (1, 2, True)
    assert Answer.objects.count() == 1 and Claim.objects.count() == 2
    assert AuditEvent.objects.count() == events_before


def test_it_purges_nightly_reports_of_days_before_the_cutoff(workspace):
    cutoff_day = _cutoff(workspace).date()
    NightlyReport.objects.create(workspace=workspace, date=cutoff_day - dt.timedelta(days=1))
    kept = NightlyReport.objects.create(workspace=workspace, date=cutoff_day)

    result = retention_purge(workspace=workspace, now=NOW)

    assert result.nightly_reports == 1
    assert list(NightlyReport.objects.values_list("id", flat=True)) == [kept.id]


def test_the_command_dry_run_prints_counts_and_deletes_nothing(workspace, store_answer, capsys):
    store_answer(workspace, dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=120))

    call_command("purge_expired", "--dry-run")

    assert "default: would delete 1 answers, 1 claims" in capsys.readouterr().out
    assert Answer.objects.count() == 1


def test_the_command_purges(workspace, store_answer, capsys):
    store_answer(workspace, dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=120))

    call_command("purge_expired", "--workspace", "default")

    assert "default: deleted 1 answers" in capsys.readouterr().out
    assert Answer.objects.count() == 0


def test_the_command_refuses_an_unknown_workspace(db):
    with pytest.raises(CommandError, match="no workspace with the slug 'nope'"):
        call_command("purge_expired", "--workspace", "nope")


def test_the_daily_task_purges_every_workspace(workspace, store_answer, django_capture_on_commit_callbacks):
    from django_q.tasks import async_task

    store_answer(workspace, dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=120))

    with django_capture_on_commit_callbacks(execute=True):
        async_task("audit.tasks.purge_expired")

    assert Answer.objects.count() == 0
    assert AuditEvent.objects.filter(action="retention.purged").count() == 1


def _job(workspace, *, status, created, finished=None, answer=None):
    from audit.models import BackgroundJob

    return BackgroundJob.objects.create(
        workspace=workspace,
        kind=BackgroundJob.KIND_AUDIT,
        status=status,
        request={"query": "q", "answer": "held text"},
        created_at=created,
        finished_at=finished,
        answer=answer,
    )


def test_it_purges_queued_jobs_past_their_retention_and_keeps_their_answers(workspace, store_answer):
    from audit import constants
    from audit.models import BackgroundJob

    cutoff = NOW - dt.timedelta(days=constants.BACKGROUND_JOB_RETENTION_DAYS)
    second = dt.timedelta(seconds=1)
    answer = store_answer(workspace, NOW - dt.timedelta(days=10))  # well inside the workspace's retention
    old_done = _job(
        workspace, status="done", created=cutoff - 2 * second, finished=cutoff - second, answer=answer
    )
    old_failed = _job(workspace, status="failed", created=cutoff - 2 * second, finished=cutoff - second)
    stuck = _job(workspace, status="running", created=cutoff - second)  # the task queue ended it long ago
    kept = [
        _job(workspace, status="done", created=cutoff - 2 * second, finished=cutoff),  # at the cutoff
        _job(workspace, status="done", created=NOW - second, finished=NOW),
        _job(workspace, status="queued", created=cutoff),
        _job(workspace, status="running", created=NOW - second),
    ]

    counted = retention_purge(workspace=workspace, now=NOW, dry_run=True)
    assert counted.jobs == 3 and BackgroundJob.objects.count() == 7

    result = retention_purge(workspace=workspace, now=NOW)

    assert result.jobs == 3 and result.answers == 0
    assert set(BackgroundJob.objects.values_list("id", flat=True)) == {job.id for job in kept}
    assert not BackgroundJob.objects.filter(id__in=[old_done.id, old_failed.id, stuck.id]).exists()
    assert Answer.objects.filter(id=answer.id).exists()  # the job's answer is the workspace's to keep
    event = AuditEvent.objects.get(action="retention.purged")
    assert event.details["jobs"] == 3


def test_the_daily_task_and_the_command_purge_old_jobs(workspace, capsys, django_capture_on_commit_callbacks):
    from django_q.tasks import async_task

    from audit import constants
    from audit.models import BackgroundJob

    long_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(
        days=constants.BACKGROUND_JOB_RETENTION_DAYS + 1
    )
    _job(workspace, status="done", created=long_ago, finished=long_ago)

    call_command("purge_expired", "--dry-run")
    assert "1 queued jobs past their retention" in capsys.readouterr().out
    assert BackgroundJob.objects.count() == 1

    with django_capture_on_commit_callbacks(execute=True):
        async_task("audit.tasks.purge_expired")
    assert not BackgroundJob.objects.exists()
