"""The task cluster's workers yield the CPU to the web workers: each worker process, as django-q2
starts it (its ``post_spawn`` signal), lowers its own priority by ``Q_WORKER_NICE`` and runs torch on
``Q_WORKER_TORCH_THREADS`` threads, before its first inference; its writes (``@at_web_priority``)
run on a thread that kept the web's priority, so a niced worker never holds SQLite's write lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SPAWNED = """
import os, django
django.setup()
from django.conf import settings
from django_q.signals import post_spawn
before = os.nice(0)
post_spawn.send(sender="django_q", proc_name="Process-1")  # what django-q2's worker sends as it starts
from audit.pipeline.embedding import load_model
load_model()  # the worker's first model load
import torch
print(before, os.nice(0), settings.Q_WORKER_NICE, torch.get_num_threads())

import threading
from django.db import transaction
from audit.services.write_priority import at_web_priority, writer_thread

@at_web_priority
def where(fail=False):
    if fail:
        raise ValueError("the write failed")
    return threading.current_thread() is writer_thread(), os.getpriority(os.PRIO_PROCESS, 0)

on_writer, nice_there = where()
try:
    where(fail=True)
    raised = 0
except ValueError:
    raised = 1
with transaction.atomic():  # a write inside the caller's transaction stays in it, on its thread
    inside, _ = where()
print(int(on_writer), nice_there, raised, int(inside))
"""


def test_a_task_worker_computes_below_the_webs_priority_on_one_torch_thread_and_writes_at_the_webs(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "theoria.settings.base",
        "DJANGO_DEBUG": "1",
        "THEORIA_TORCH_THREADS": "2",  # what a web worker of a one-worker server would use
        "THEORIA_Q_NICE": "",
        "THEORIA_Q_TORCH_THREADS": "",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    out = subprocess.run(
        [sys.executable, "-c", SPAWNED], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    before, after, step, threads, on_writer, nice_there, raised, inside = (
        int(x) for x in out.stdout.split()[-8:]
    )
    assert step == 10 and after == min(19, before + step)
    assert threads == 1
    # a write runs on the writer thread, at the priority the worker had before it lowered its own,
    # and hands its exception back; inside the caller's transaction it stays on the caller's thread
    assert (on_writer, nice_there, raised, inside) == (1, before, 1, 0)


def test_a_process_running_a_task_synchronously_keeps_its_priority_threads_writes_and_collector():
    """Q_CLUSTER sync (the tests' setting) runs django-q2's worker in the caller's own process and sends
    ``post_spawn`` there as ``MainProcess``: nothing a task worker sets up may happen to that process."""
    import gc

    from audit import apps
    from audit.services import write_priority

    nice, threads_env = os.nice(0), os.environ.get("THEORIA_TORCH_THREADS")
    frozen, writer = gc.get_freeze_count(), write_priority.writer_thread()
    apps._task_worker_yields(sender="django_q", proc_name="MainProcess")
    assert os.nice(0) == nice
    assert os.environ.get("THEORIA_TORCH_THREADS") == threads_env
    assert gc.get_freeze_count() == frozen
    assert write_priority.writer_thread() is writer


def test_a_spawned_task_worker_freezes_its_heap(monkeypatch):
    from audit import apps
    from audit.pipeline import memory
    from audit.services import write_priority

    frozen = []
    monkeypatch.setattr(memory, "freeze_long_lived", lambda: frozen.append(1) or 1)
    monkeypatch.setattr(write_priority, "writer_start", lambda: None)
    monkeypatch.setattr(apps.os, "nice", lambda n: 0)
    monkeypatch.setenv("THEORIA_TORCH_THREADS", os.environ.get("THEORIA_TORCH_THREADS", "1"))
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # no torch threads set in this process
    apps._task_worker_yields(sender="django_q", proc_name="Process-1")  # a worker the cluster spawned
    assert frozen == [1]
