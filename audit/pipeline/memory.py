"""Giving the heap's free pages back to the kernel after each audit.

glibc's malloc serves the encoders' activations (tensors of a few hundred KB to tens of MB, of a new
shape in each batch) from its heap once its own threshold has risen past their size, and a heap
that fragments keeps its free pages: the process's resident size creeps up answer after answer and
stays at its highest. ``malloc_trim(0)`` hands every wholly free page back (glibc releases pages in
the middle of the heap too). It costs a few milliseconds, so it runs once per audit
(``audit.pipeline.audit.audit_passages``).

Keeping large blocks out of the heap altogether (a fixed ``M_MMAP_THRESHOLD``) lowered the peak
further but made every batch fault in fresh pages: `manage.py bench` p50 +26 % at 4 MB, +34 % at
128 KB. Not done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@lru_cache(maxsize=1)
def glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def free_pages_back() -> bool:
    """Hand the heap's wholly free pages back to the kernel; False where that is not glibc."""
    libc = glibc()
    return bool(libc is not None and libc.malloc_trim(0))


def gives_free_pages_back(function: Callable[P, R]) -> Callable[P, R]:
    """``function``, then ``free_pages_back()`` however it ends."""

    @wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        finally:
            free_pages_back()

    return wrapper
