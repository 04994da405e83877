"""The task queue takes a job's task with the write that stored it where the broker is the database
(the embedded default), and only after the commit where it is not."""

from __future__ import annotations

import pytest
from django.db import transaction
from django_q.conf import Conf
from django_q.models import OrmQ

from audit.services.task_queue import enqueue, enqueued_with_the_write

pytestmark = pytest.mark.django_db


class _RolledBack(Exception):
    pass


@pytest.fixture
def database_broker(monkeypatch):
    """django-q2 as `make run` configures it without Redis: the ORM broker on the default database, not synchronous."""
    monkeypatch.setattr(Conf, "ORM", "default")
    monkeypatch.setattr(Conf, "BROKER_CLASS", None)
    monkeypatch.setattr(Conf, "SYNC", False)


def test_a_task_on_the_database_broker_is_written_in_the_callers_transaction(database_broker):
    assert enqueued_with_the_write()
    with pytest.raises(_RolledBack), transaction.atomic():
        enqueue("audit.tasks.background_job", 41)
        assert OrmQ.objects.count() == 1  # there before the commit, so it commits with the job
        raise _RolledBack
    assert not OrmQ.objects.exists()  # a rolled-back write leaves no task behind
    with transaction.atomic():
        enqueue("audit.tasks.background_job", 42)
    assert OrmQ.objects.count() == 1


def test_a_synchronous_or_outside_broker_waits_for_the_commit(
    monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(Conf, "SYNC", True)
    assert not enqueued_with_the_write()
    ran = []
    monkeypatch.setattr("django_q.tasks.async_task", lambda task, *args: ran.append((task, args)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks, transaction.atomic():
        enqueue("audit.tasks.background_job", 43)
    assert ran == [] and len(callbacks) == 1
    callbacks[0]()
    assert ran == [("audit.tasks.background_job", (43,))]


def test_a_queued_audit_and_its_task_are_one_write_on_the_database_broker(
    database_broker, client_for, make_user, monkeypatch
):
    from audit import constants, roles
    from audit.models import BackgroundJob

    monkeypatch.setattr(constants, "AUDIT_INLINE_COST_BUDGET", 1)  # every audit goes to the queue
    client = client_for(make_user("frontend", roles.SUBMITTER))
    answer = "The office opens at nine and closes at five on weekdays."
    response = client.post(
        "/api/v1/audits", {"query": "q", "answer": answer, "mode": "audit-local"}, format="json"
    )
    assert response.status_code == 202, response.content
    job = BackgroundJob.objects.get()
    task = OrmQ.objects.get()
    assert task.task["args"] == (job.pk,) and task.func() == "audit.tasks.background_job"
