"""Handing a task to the task queue (django-q2) together with the write that asked for it.

With the ORM broker on the default database (the embedded SQLite default, no Redis) the task's
row is written inside the caller's transaction: the job and its task commit together or not at
all, and an SQLite request waits for the write lock once, not twice. With Redis (or any broker
outside the database) the task is sent once the transaction commits, so a worker never picks up a
job whose rows it cannot read yet. Synchronous tasks (the suite's setting) also run on commit,
never inside the caller's transaction.
"""

from __future__ import annotations

from typing import Any

from django.db import DEFAULT_DB_ALIAS, transaction

__all__ = ["enqueue", "enqueued_with_the_write"]


def enqueued_with_the_write(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether a task enqueued now inside a transaction on ``using`` is part of that transaction."""
    from django_q.conf import Conf

    return not Conf.BROKER_CLASS and using == Conf.ORM and not Conf.SYNC


def enqueue(task: str, *args: Any, using: str = DEFAULT_DB_ALIAS) -> None:
    """Queue ``task`` (a dotted function name) with ``args``: in the caller's transaction on
    ``using`` where the broker writes there, otherwise once that transaction commits (at once
    outside one)."""
    from django_q.tasks import async_task

    if enqueued_with_the_write(using) and transaction.get_connection(using).in_atomic_block:
        async_task(task, *args)
        return
    transaction.on_commit(lambda: async_task(task, *args), using=using)
