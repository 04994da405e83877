"""Giving the heap's free pages back to the kernel after each audit.

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
