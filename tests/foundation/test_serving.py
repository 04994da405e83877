"""Production serving settings: gunicorn's configuration and the django-q2 cluster on Redis.

Each case reads the settings in a fresh interpreter with its own environment, as a server does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def read_in_fresh_process(code: str, **env) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("THEORIA_", "DJANGO_SETTINGS"))}
    env = {"DJANGO_DEBUG": "1", **env}  # development settings: no secret key needed to read them
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


GUNICORN = (
    "import json, os, runpy; c = runpy.run_path('theoria/gunicorn.conf.py'); print(json.dumps({k: c[k] for k in "
    "('bind', 'workers', 'worker_class', 'threads', 'worker_connections', 'preload_app', 'timeout', 'backlog', "
    "'max_requests', 'max_requests_jitter')} | "
    "{'torch_threads': os.environ['THEORIA_TORCH_THREADS']}))"
)
Q_CLUSTER = "import json; import theoria.settings.base as s; print(json.dumps(s.Q_CLUSTER))"


def test_gunicorn_preloads_the_app_and_gives_each_worker_its_share_of_the_cores():
    config = read_in_fresh_process(GUNICORN, THEORIA_WEB_WORKERS="1", THEORIA_BIND="127.0.0.1:8123")

    assert config["bind"] == "127.0.0.1:8123" and config["workers"] == 1
    assert config["preload_app"] is True and config["worker_class"] == "gthread" and config["threads"] == 2
    assert config["torch_threads"] == str(os.cpu_count() or 1)
    assert config["timeout"] >= 300 and config["backlog"] >= 2048 and config["max_requests"] > 0


def test_a_gunicorn_worker_takes_no_more_connections_than_it_has_threads():
    """A connection a worker cannot start at once would wait in its thread pool behind its audits
    (issue 46); left in the listen queue, the first worker with a free thread takes it."""
    config = read_in_fresh_process(GUNICORN, THEORIA_WEB_THREADS="6")

    assert config["threads"] == 6 and config["worker_connections"] == 6


def test_gunicorn_spreads_the_workers_request_limits_over_half_the_limit():
    """Workers serving one load reach the same limit together; two restarting at once left no worker
    to answer for seconds (issue 46)."""
    config = read_in_fresh_process(GUNICORN, THEORIA_WEB_MAX_REQUESTS="2000")

    assert config["max_requests"] == 2000 and config["max_requests_jitter"] == 1000


WORKER_EXIT = """
import atexit, os, runpy, sys
import django
django.setup()
hooks = runpy.run_path('theoria/gunicorn.conf.py')
atexit.register(lambda: print('python shut down', flush=True))
try:
    sys.exit(int(os.environ['CODE']))
finally:
    hooks['worker_exit'](None, None)
"""


@pytest.mark.parametrize(("code", "shut_down"), [(0, False), (3, True), (-1, True)])
def test_a_worker_that_ends_normally_leaves_without_pythons_shutdown_and_any_other_keeps_its_code(
    code, shut_down
):
    """Python's shutdown of a worker holding the models took 2 to 4 s while the master waited to
    start its replacement; a boot failure (3) must still reach the master with its code."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("THEORIA_", "DJANGO_SETTINGS"))}
    done = subprocess.run(
        [sys.executable, "-c", WORKER_EXIT],
        cwd=ROOT,
        env={
            **clean,
            "DJANGO_DEBUG": "1",
            "DJANGO_SETTINGS_MODULE": "theoria.settings.base",
            "CODE": str(code),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == code % 256, done.stderr[-2000:]
    assert ("python shut down" in done.stdout) is shut_down


def test_gunicorn_never_gives_a_worker_less_than_one_torch_thread():
    config = read_in_fresh_process(GUNICORN, THEORIA_WEB_WORKERS=str(4 * (os.cpu_count() or 1)))

    assert config["torch_threads"] == "1"


def test_the_task_cluster_uses_redis_with_a_worker_per_core_when_redis_is_configured():
    cluster = read_in_fresh_process(Q_CLUSTER, THEORIA_REDIS_URL="redis://127.0.0.1:6379/3")

    assert cluster["redis"] == "redis://127.0.0.1:6379/3" and "orm" not in cluster
    assert cluster["workers"] == (os.cpu_count() or 1)
    assert cluster["recycle"] > 0 and cluster["max_rss"] > 0


def test_the_task_cluster_keeps_one_worker_on_the_database_broker_and_takes_a_set_count():
    assert read_in_fresh_process(Q_CLUSTER)["workers"] == 1
    assert read_in_fresh_process(Q_CLUSTER)["orm"] == "default"
    assert (
        read_in_fresh_process(Q_CLUSTER, THEORIA_REDIS_URL="redis://127.0.0.1:6379/3", THEORIA_Q_WORKERS="6")[
            "workers"
        ]
        == 6
    )


def test_with_debug_off_the_collected_plotly_bundle_is_served_compressed_in_under_600_kb(settings, tmp_path):
    """WhiteNoise serves collectstatic's compressed copy to a browser that accepts it: gzip always, and
    brotli where the brotli package is installed (locust's load-test extra brings it)."""
    from django.core.management import call_command
    from django.test import Client

    settings.STATIC_ROOT = str(tmp_path)
    call_command("collectstatic", interactive=False, verbosity=0)
    url = "/static/vendor/plotly-basic.min.js"

    zipped = Client().get(url, HTTP_ACCEPT_ENCODING="gzip, deflate")
    either = Client().get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    plain = Client().get(url)

    assert zipped.status_code == 200 and zipped["Content-Encoding"] == "gzip"
    assert int(zipped["Content-Length"]) < 600_000
    assert either["Content-Encoding"] in ("gzip", "br") and int(either["Content-Length"]) < 600_000
    assert "Content-Encoding" not in plain and int(plain["Content-Length"]) > 1_000_000


@pytest.mark.slow
def test_gunicorn_with_fewer_workers_than_cores_and_two_torch_threads_answers_healthz_within_a_minute(
    tmp_path,
):
    """The master loads the models before the fork: with more than one torch thread there it started
    an OpenMP pool that the forked workers then waited on for ever (issue 46)."""
    from tools.boot_check import healthz_after_boot

    answered, log = healthz_after_boot(tmp_path, workers=1, torch_threads=2, limit=60)

    assert answered is not None, log[-3000:]
    # the master froze what it loaded before the fork, so the collector never walks it again
    frozen = int(log.split(" objects kept out of the collector's reach")[0].rsplit("; ", 1)[1])
    assert frozen > 100_000, log[-3000:]
