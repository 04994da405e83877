"""gunicorn settings for serving Theoria in production.

    gunicorn -c theoria/gunicorn.conf.py theoria.wsgi:application

Each web worker is a process with its own embedding model (~600-700 MB resident with Django and
torch, measured by ``manage.py bench --backend pgvector``). With ``preload_app`` the master loads
Django and the model's weights once before forking, so workers start at once and share those
pages until they write them. The master runs torch on one thread while it loads (converting the
weights is parallel work: with more threads it started libgomp's OpenMP pool, which does not
survive ``fork``; the workers then hung at boot in ``gomp_team_barrier_wait_end`` with 0 CPU),
and each worker sets its own threads and runs its first inference after the fork. Torch uses
``THEORIA_TORCH_THREADS`` threads per worker, by default the cores divided among the workers, so
workers never fight over cores. A worker whose warm-up does not finish within
``THEORIA_WEB_BOOT_TIMEOUT_S`` (60 s) exits, and the master starts another.

Worker count: an Audit-Local request is CPU-bound (embedding and judging claims) for its whole
length, so one worker per core is the ceiling worth running; more only queue inside the machine.
Default: ``THEORIA_WEB_WORKERS`` or the number of cores.

Threads: each worker serves ``THEORIA_WEB_THREADS`` (2) requests at once, so a cheap request (a
refusal, a page, ``/healthz``) never waits for a whole audit to end. More threads only run more
audits at once on the worker's core: under ``tools/attack_load``, 4 threads answered half the normal
audits of 2, at twice their p95, and held the database's write lock longer. A worker accepts no more
connections than it has threads: one it could not start at once would wait in its thread pool's
queue behind its audits (the slow refusals of ``tools/attack_load``); left in the listen
queue, it goes to the first worker with a free thread. So no connection is kept alive between
requests (a proxy in front reconnects on loopback).

Memory: workers x ~0.7 GB with the pgvector back end (the knowledge base stays in PostgreSQL); with
the in-process index add about 14 MB per 1,000 chunks to every worker. Workers are recycled after
``max_requests`` (jittered by up to half of it) so memory stays bounded over weeks. Scale out with more machines behind a proxy.
"""

from __future__ import annotations

import os

_cores = os.cpu_count() or 1

bind = os.environ.get("THEORIA_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("THEORIA_WEB_WORKERS") or _cores)
worker_class = "gthread"
threads = int(os.environ.get("THEORIA_WEB_THREADS") or 2)
# a worker takes a connection only when a thread is free to start it (see above)
worker_connections = threads
preload_app = True
# Long audits (full depth, many claims) must not be killed as hung workers.
timeout = int(os.environ.get("THEORIA_WEB_TIMEOUT_S") or 300)
# A worker's warm-up (its first inference) takes seconds; one that has not finished by then exits.
boot_timeout = int(os.environ.get("THEORIA_WEB_BOOT_TIMEOUT_S") or 60)
graceful_timeout = 30
keepalive = 0  # with no connection beyond its threads a worker keeps none alive (see above)
# A listen queue deep enough that a burst waits instead of being refused (runserver dropped them).
backlog = int(os.environ.get("THEORIA_WEB_BACKLOG") or 2048)
max_requests = int(os.environ.get("THEORIA_WEB_MAX_REQUESTS") or 1000)
# Spread wide: workers serving one load reach their limit together, and two restarting at once
# left none to answer for seconds (docs/ARCHITECTURE.md, "What the slow refusals waited for").
max_requests_jitter = max_requests // 2
accesslog = os.environ.get("THEORIA_ACCESS_LOG", "-")
errorlog = "-"
proc_name = "theoria-web"

os.environ.setdefault("THEORIA_TORCH_THREADS", str(max(1, _cores // max(1, workers))))


def when_ready(server):
    """In the master, after the app is loaded and before forking: load the models' weights once (the
    embedder, and the default judge's cross-encoder) on one torch thread, so no OpenMP pool exists
    to be forked; and no database connection is carried into the workers (SQLite forbids using a
    connection across ``fork``)."""
    from django.db import connections

    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.nli_model import get_nli_model

    threads = os.environ["THEORIA_TORCH_THREADS"]
    os.environ["THEORIA_TORCH_THREADS"] = "1"  # the loaders read it
    try:
        get_embedder().model  # noqa: B018 — loads the weights; no inference before the fork
        get_nli_model().load()
    finally:
        os.environ["THEORIA_TORCH_THREADS"] = threads
    connections.close_all()
    from audit.pipeline.memory import freeze_long_lived

    frozen = freeze_long_lived()  # before the fork: the workers inherit it, and their copies stay shared
    server.log.info(
        "theoria: embedding and NLI models loaded in the master; %s workers, %s torch threads each; "
        "%s objects kept out of the collector's reach",
        workers,
        os.environ["THEORIA_TORCH_THREADS"],
        frozen,
    )


def post_fork(server, worker):
    """In each worker: its own connections, its torch threads, and its own first inference (torch's
    thread pool starts here). A warm-up that hangs ends the worker after ``boot_timeout`` seconds
    (gunicorn's own ``timeout`` does not reach a worker that has not started serving)."""
    import faulthandler
    import sys

    import torch
    from django.db import connections

    connections.close_all()
    torch.set_num_threads(int(os.environ["THEORIA_TORCH_THREADS"]))
    from audit.pipeline.embedding import get_embedder

    faulthandler.dump_traceback_later(boot_timeout, exit=True, file=sys.stderr)  # prints where it hung
    try:
        get_embedder().encode(["warm-up"])
    finally:
        faulthandler.cancel_dump_traceback_later()
    from audit.pipeline.memory import freeze_long_lived

    freeze_long_lived()  # what the warm-up left is kept too


def worker_exit(server, worker):
    """In a worker that ends normally (its request limit reached, or the server stopping), once its
    requests are answered: flush the logs, close its connections and leave at once. Python's own
    shutdown of a process holding torch and the models took 2 to 4 s, while the master waited to
    start its replacement and the other workers carried the load. Any other ending (a boot that
    failed) exits as gunicorn says, so the master still sees its code."""
    import logging
    import sys

    ending = sys.exc_info()[1]
    if not (isinstance(ending, SystemExit) and ending.code in (0, None)):
        return
    from django.db import connections

    connections.close_all()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
