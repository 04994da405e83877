"""``make run`` says the URL it serves: the one HOST and PORT choose, not a fixed 8000."""

from __future__ import annotations

import os
import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_ensure_admin_names_the_url_of_host_and_port(monkeypatch):
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("PORT", "8127")
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    assert "Log in at http://0.0.0.0:8127/ as admin" in out.getvalue()
    monkeypatch.delenv("HOST")
    monkeypatch.delenv("PORT")
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    assert "Log in at http://127.0.0.1:8000/" in out.getvalue()


def _plan(*args: str) -> str:
    """What ``make run`` would run (``-n``: printed, not run), with HOST and PORT in the environment."""
    env = {**os.environ, "PORT": "8128", "HOST": "127.0.0.2"}
    command = ["make", "-n", "-W", "pyproject.toml", "run", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_hands_port_and_host_to_every_command_it_runs():
    plan = _plan()
    assert "http://127.0.0.2:8128/" in plan and "runserver 127.0.0.2:8128" in plan
    assert "runserver 127.0.0.2:8129" in _plan("PORT=8129")
    makefile = (ROOT / "Makefile").read_text()
    assert "export HOST PORT" in makefile  # ensure_admin, run by setup, reads them
