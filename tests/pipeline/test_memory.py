"""An audit hands the heap's free pages back to the kernel (``audit.pipeline.memory``), so a process's
resident size follows what it holds instead of creeping up to its peak."""

from __future__ import annotations

import json
import subprocess
import sys
from types import SimpleNamespace

import pytest

from audit.pipeline.memory import glibc

# One large block freed raises glibc's threshold above its size; the 100 blocks after it come from
# the heap, and freeing every other one leaves holes the heap keeps. Prints the MB given back.
PROBE = """
import json, sys
from audit.pipeline.memory import free_pages_back
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS'):
            return int(line.split()[1]) / 1024
warm = bytearray(3 << 20); del warm
blocks = [bytearray(b'x' * (3 << 20)) for _ in range(100)]
held = rss()
del blocks[::2]
if sys.argv[1] == "trim":
    free_pages_back()
print(json.dumps({"given_back_mb": held - rss()}))
"""


def _given_back(how: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, how], capture_output=True, text=True, check=True
    ).stdout
    return float(json.loads(out)["given_back_mb"])


@pytest.mark.skipif(glibc() is None, reason="glibc only")
def test_the_freed_pages_go_back_to_the_kernel():
    assert _given_back("trim") > 120  # 50 blocks of 3 MB freed: about 150 MB


@pytest.mark.skipif(glibc() is None, reason="glibc only")
def test_without_it_the_heap_keeps_them():
    assert _given_back("plain") < 30  # the contrast the trim is for


def test_every_audit_gives_free_pages_back_as_it_ends(monkeypatch):
    from audit.constants import Thresholds
    from audit.pipeline import memory
    from audit.pipeline.audit import audit_passages

    calls = []
    monkeypatch.setattr(memory, "GLIBC", SimpleNamespace(malloc_trim=calls.append))
    audit_passages("q", "", [], thresholds=Thresholds().updated({"verification_depth": "fast"}))
    assert calls == [0]


def test_the_heap_frozen_for_the_audits_is_the_collectors_again_after():
    import gc

    from audit.pipeline.memory import frozen_heap

    kept = [[n] for n in range(1000)]  # long-lived objects the collector tracks

    def walked() -> set[int]:  # what a full collection walks (the frozen are left out)
        return {id(o) for o in gc.get_objects()}

    assert gc.get_freeze_count() == 0 and id(kept[0]) in walked()
    with frozen_heap() as frozen:
        assert frozen > len(kept) and gc.get_freeze_count() > len(kept)
        assert not {id(k) for k in kept} & walked()
    assert gc.get_freeze_count() == 0 and {id(k) for k in kept} <= walked()


def test_a_cycle_made_after_the_freeze_is_still_collected():
    import gc
    import weakref

    from audit.pipeline.memory import frozen_heap

    class Node:
        pass

    with frozen_heap():
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None


def test_a_heap_frozen_before_stays_frozen_after_the_bench_freezes_it_too():
    import gc

    from audit.pipeline.memory import frozen_heap

    gc.freeze()  # as a server's worker did after its warm-up
    try:
        before = gc.get_freeze_count()
        with frozen_heap():
            pass
        assert gc.get_freeze_count() >= before > 0
    finally:
        gc.unfreeze()
