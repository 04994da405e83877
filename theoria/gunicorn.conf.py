"""gunicorn settings for serving Theoria in production.

    gunicorn -c theoria/gunicorn.conf.py theoria.wsgi:application

Each web worker is a process with its own embedding model (~600-700 MB resident with Django and
torch, measured by ``manage.py bench --backend pgvector``). With ``preload_app`` the master loads
Django and the model's weights once before forking, so workers start at once and share those
pages until they write them; the first inference (which starts torch's thread pool, not safe
to fork) happens in each worker after the fork. Torch uses ``THEORIA_TORCH_THREADS`` threads per
worker, by default the cores divided among the workers, so workers never fight over cores.

Worker count: an Audit-Local request is CPU-bound (embedding and judging claims) for its whole
length, so one sync worker per core is the ceiling worth running; more only queue inside the
machine. Default: ``THEORIA_WEB_WORKERS`` or the number of cores. Memory: workers x ~0.7 GB with
the pgvector back end (the knowledge base stays in PostgreSQL); with the in-process index add
about 14 MB per 1,000 chunks to every worker. Workers are recycled after ``max_requests``
(jittered) so memory stays bounded over weeks. Scale out with more machines behind a proxy.
"""

from __future__ import annotations

import os

_cores = os.cpu_count() or 1

bind = os.environ.get("THEORIA_BIND", "127.0.0.1:8000")
workers = int(os.environ.get("THEORIA_WEB_WORKERS") or _cores)
worker_class = "sync"
preload_app = True
# Long audits (full depth, many claims) must not be killed as hung workers.
timeout = int(os.environ.get("THEORIA_WEB_TIMEOUT_S") or 300)
graceful_timeout = 30
keepalive = 5
# A listen queue deep enough that a burst waits instead of being refused (runserver dropped them).
backlog = int(os.environ.get("THEORIA_WEB_BACKLOG") or 2048)
max_requests = int(os.environ.get("THEORIA_WEB_MAX_REQUESTS") or 1000)
max_requests_jitter = max_requests // 10
accesslog = os.environ.get("THEORIA_ACCESS_LOG", "-")
errorlog = "-"
proc_name = "theoria-web"

os.environ.setdefault("THEORIA_TORCH_THREADS", str(max(1, _cores // max(1, workers))))


def when_ready(server):
    """In the master, after the app is loaded and before forking: load the models' weights once (the
    embedder, and the default judge's cross-encoder)."""
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.nli_model import get_nli_model

    get_embedder().model  # noqa: B018 — loads the weights; no inference before the fork
    get_nli_model().load()
    server.log.info(
        "theoria: embedding and NLI models loaded in the master; %s workers, %s torch threads each",
        workers,
        os.environ["THEORIA_TORCH_THREADS"],
    )


def post_fork(server, worker):
    """In each worker: its own connections and its own first inference (torch's threads start here)."""
    from django.db import connections

    connections.close_all()
    from audit.pipeline.embedding import get_embedder

    get_embedder().encode(["warm-up"])
