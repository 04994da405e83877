"""Giving the heap's free pages back to the kernel after each audit, and keeping the collector off
what lives as long as the process.

glibc's malloc serves the encoders' activations (tensors of a few hundred KB to tens of MB, of a new
shape in each batch) from its heap once its own threshold has risen past their size, and a heap
that fragments keeps its free pages: the process's resident size creeps up answer after answer and
stays at its highest. ``malloc_trim(0)`` hands every wholly free page back (glibc releases pages in
the middle of the heap too). It costs a few milliseconds, so it runs once per audit, once
its models have read (``audit.pipeline.audit.audit_passages``).

Keeping large blocks out of the heap altogether (a fixed ``M_MMAP_THRESHOLD``) lowered the peak
further but made every batch fault in fresh pages: `manage.py bench` p50 +26 % at 4 MB, +34 % at
128 KB. Not done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Iterator
from contextlib import contextmanager


def glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


GLIBC = glibc()  # found once, as the module loads


def free_pages_back() -> bool:
    """Hand the heap's wholly free pages back to the kernel; False where that is not glibc."""
    return bool(GLIBC is not None and GLIBC.malloc_trim(0))


def freeze_long_lived() -> int:
    """Collect once, then move every object alive now (modules, settings, the models, a loaded index)
    to the collector's permanent generation (``gc.freeze``) and return how many there are now. Python's
    collections are triggered by allocations, and an audit's checks allocate many small objects; each
    full collection walked every object the process holds. In a `manage.py bench` process (about
    450,000 of them) the structural rules took 30-34 ms an answer, frozen after the warm-up 18-24 ms
    (`python manage.py bench`, before and after, alternately). Called where a process has loaded what it keeps: the web
    server's master before it forks and each worker after its warm-up (``theoria/gunicorn.conf.py``),
    and a task worker as it starts; the bench through :func:`frozen_heap`. A frozen object that later becomes
    cyclic garbage is not collected: these are the objects a process keeps until it ends."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


@contextmanager
def frozen_heap() -> Iterator[int]:
    """Within ``with``: the heap as a server's worker holds it after its warm-up (:func:`freeze_long_lived`,
    the count given), and as it was after, so a process that goes on, a test's, is left as it was: the
    objects go back to the collector unless the heap was frozen before (``gc.unfreeze`` cannot give back
    only what this froze, and a process that froze its heap meant to keep it so)."""
    frozen_before = gc.get_freeze_count() > 0
    try:
        yield freeze_long_lived()
    finally:
        if not frozen_before:
            gc.unfreeze()
