"""Load the models and the knowledge-base indexes when a server process starts, not on its first audit.

gunicorn does it in ``theoria/gunicorn.conf.py`` (weights in the master, the first inference in each
worker after the fork). The development server of ``make run`` (``runserver``: one process that
serves with threads and never forks) calls :func:`warm_in_background` from ``audit.apps`` in the
serving process only (``RUN_MAIN``, set by runserver's reloader for its child), so the page answers
at once and the first Audit-Local submission finds the embedder, the judge, the parser and the
workspaces' indexes loaded. The task worker (``qcluster``, which forks) never warms here.
"""

from __future__ import annotations

import logging
import threading
import time

logger = logging.getLogger(__name__)

SAMPLE_QUERY = "What does the hippocampus do?"
SAMPLE_ANSWER = "The hippocampus is essential for forming new declarative memories."
SAMPLE_PASSAGE = (
    "The hippocampus is essential for forming new declarative memories, that is memories of facts."
)


def warm_models() -> float:
    """Run one offline audit of a sample answer (nothing stored) and load every workspace's index;
    return the seconds it took."""
    from audit.kb.search import kb_index
    from audit.models import Workspace
    from audit.pipeline.audit import audit_answer

    started = time.perf_counter()
    audit_answer(SAMPLE_QUERY, SAMPLE_ANSWER, contexts=[{"id": "warm-up", "text": SAMPLE_PASSAGE}])
    for workspace_id in Workspace.objects.values_list("pk", flat=True):
        kb = kb_index(workspace_id)
        warm = getattr(getattr(kb, "index", None), "warm", None)
        if callable(warm):
            warm()
    return time.perf_counter() - started


def _warm_logged() -> None:
    try:
        seconds = warm_models()
    except Exception:  # a failed warm-up only means the first audit loads what it needs
        logger.exception("theoria: warming the models failed; the first audit will load them")
    else:
        logger.warning("theoria: models and knowledge-base indexes loaded in %.1f s", seconds)
    finally:
        from django.db import connection

        connection.close()


def warm_in_background() -> threading.Thread:
    """Warm in a thread of this process, so the server answers while the models load."""
    thread = threading.Thread(target=_warm_logged, name="theoria-warm-up", daemon=True)
    thread.start()
    return thread
