"""The task cluster's workers yield the CPU to the web workers: each worker process, as django-q2
starts it (its ``post_spawn`` signal), lowers its own priority by ``Q_WORKER_NICE`` and runs torch on
``Q_WORKER_TORCH_THREADS`` threads, before its first inference."""

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
"""


def test_a_task_worker_lowers_its_priority_and_runs_torch_on_one_thread_as_it_starts():
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "theoria.settings.base",
        "DJANGO_DEBUG": "1",
        "THEORIA_TORCH_THREADS": "2",  # what a web worker of a one-worker server would use
        "THEORIA_Q_NICE": "",
        "THEORIA_Q_TORCH_THREADS": "",
    }
    out = subprocess.run(
        [sys.executable, "-c", SPAWNED], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    before, after, step, threads = (int(x) for x in out.stdout.split()[-4:])
    assert step == 10 and after == min(19, before + step)
    assert threads == 1
