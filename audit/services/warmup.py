"""Load the models and the knowledge-base indexes when a server process starts, not on its first audit.

gunicorn does it in ``theoria/gunicorn.conf.py`` (weights in the master, the first inference in each
worker after the fork). The development server of ``make run`` (``runserver``: one process that
serves with threads and never forks) calls :func:`warm_in_background` from ``audit.apps`` in the
serving process only (``RUN_MAIN``, set by runserver's reloader for its child), so the page answers
at once. The warm-up goes through what a first audit would load: the URL configuration and the
templates, the embedder, the judge, the parser and the stacker, each workspace's index, and one audit
computed per workspace as a request computes it (thresholds, retrieval, the revision loop), with
nothing written. Then it prints the line ``make run`` tells a person to wait for (``READY_LINE``):
from then on the first Audit-Local submission is as fast as the next (``python -m tools.first_audit``
prints both). The task worker (``qcluster``, which forks) never warms here.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from audit.models import Workspace

logger = logging.getLogger(__name__)

READY_LINE = "Theoria is ready"
SAMPLE_QUERY = "What does the hippocampus do?"
SAMPLE_ANSWER = "The hippocampus is essential for forming new declarative memories."
SAMPLE_SECOND_SENTENCE = "It stores about 40 percent of memories for 3 days."  # numbers parsed too
SAMPLE_PASSAGE = (
    "The hippocampus is essential for forming new declarative memories, that is memories of facts."
)


def warm_pages() -> int:
    """Load the URL configuration (it imports every view) and compile the project's templates into the
    template engine's cache, as a first request would; return the number of templates compiled."""
    from django.conf import settings
    from django.template import TemplateDoesNotExist, TemplateSyntaxError
    from django.template.loader import get_template
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018  (imports theoria.urls and every view module)
    compiled = 0
    engines: list[dict[str, Any]] = settings.TEMPLATES
    folders = [Path(d) for engine in engines for d in engine.get("DIRS", [])]
    for folder in folders:
        for path in sorted(folder.rglob("*.html")):
            try:
                get_template(path.relative_to(folder).as_posix())
            except (TemplateDoesNotExist, TemplateSyntaxError):  # a fragment of another app's template
                continue
            compiled += 1
    return compiled


def warm_workspace_audit(workspace: Workspace) -> None:
    """Compute one offline audit of the sample answer in ``workspace`` as a request computes it
    (its thresholds, its knowledge base, the revision loop), with no LLM client and nothing written."""
    from audit.services.audit import audit_compute
    from audit.services.job import audit_job_build

    job = audit_job_build(
        workspace,
        query=SAMPLE_QUERY,
        answer_text=SAMPLE_ANSWER + " " + SAMPLE_SECOND_SENTENCE,
        revise=True,
        offline="the start-up warm-up calls no model service",
    )
    audit_compute(job)


def warm_models() -> float:
    """Load the URL configuration and the templates, run one offline audit of a sample answer
    through the pipeline, load every workspace's index and compute one audit in each workspace as a
    request does (nothing stored); return the seconds it took."""
    from audit.kb.search import kb_index
    from audit.models import Workspace
    from audit.pipeline.audit import audit_answer

    started = time.perf_counter()
    warm_pages()
    audit_answer(SAMPLE_QUERY, SAMPLE_ANSWER, contexts=[{"id": "warm-up", "text": SAMPLE_PASSAGE}])
    for workspace in Workspace.objects.all():
        kb = kb_index(workspace.pk)
        warm = getattr(getattr(kb, "index", None), "warm", None)
        if callable(warm):
            warm()
        warm_workspace_audit(workspace)
    return time.perf_counter() - started


def _warm_logged() -> None:
    try:
        seconds = warm_models()
    except Exception:  # a failed warm-up only means the first audit loads what it needs
        logger.exception("theoria: warming the models failed; the first audit will load them")
    else:
        # the line `make run` tells a person to wait for (and tools.first_audit waits for)
        print(
            f"{READY_LINE}: models, indexes, pages and one audit per workspace loaded in {seconds:.1f} s",
            flush=True,
        )
    finally:
        from django.db import connection

        connection.close()


def warm_in_background() -> threading.Thread:
    """Warm in a thread of this process, so the server answers while the models load."""
    thread = threading.Thread(target=_warm_logged, name="theoria-warm-up", daemon=True)
    thread.start()
    return thread
