"""The Theoria Audit project (settings, URLs, servers).

Thread settings go here because every entry point (``manage.py``, WSGI/ASGI, the task worker, pytest)
imports this package before NumPy: OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when NumPy loads, and
its threads fight torch's for the cores (docs/PERFORMANCE.md: embedding 10 claims after NumPy matrix
work took twice as long). ``audit.pipeline.embedding`` sets the same for code that runs without Django.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
