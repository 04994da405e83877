"""The Theoria Audit project (settings, URLs, servers).

Thread settings go here because every entry point (``manage.py``, WSGI/ASGI, the task worker, pytest)
imports this package before NumPy: OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when NumPy loads, and
its threads fight torch's for the cores (docs/PERFORMANCE.md: embedding 10 claims after NumPy matrix
work took twice as long). ``audit.pipeline.embedding`` sets the same for code that runs without Django.

``OMP_WAIT_POLICY=PASSIVE``: torch's OpenMP threads sleep when idle instead of spinning. Where another
process holds a core (a second web worker, the task worker, a nightly run), spinning threads wait for
each other's time slices: 64 sentences took a median 0.97 s to embed with spinning threads and 0.085 s
with PASSIVE on the 2-core machine under load (``python tools/omp_wait.py``, docs/PERFORMANCE.md). It
must be set before torch loads.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
