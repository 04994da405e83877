"""The bench's clocks: the time of each stage of an audit, and the reading floor measured in the same run.

``StageClock`` wraps the few calls an audit's time goes to (the bi-encoder, the search, the cross-encoder,
the role binding, the negation check's parses, the structural rules, the numeric and the other checks) and adds up each one's wall and CPU time (every thread of the process), exclusive of
the wrapped calls inside it, so the stages and the rest add up to the answers' time.

``reading_floor`` is the least work a verifier that reads can do for one answer: embed its claims,
exact cosine search over every chunk, then one cross-encoder pass of each claim against one sentence of
its best chunk, each step from cold (no cache), with the same models as the audits.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

BI_ENCODER, SEARCH, CROSS_ENCODER, BINDING = "bi-encoder", "search", "cross-encoder", "role binding"
# the checks beside the judge: the structure method's own rules (its binding and parses aside), the parses
# the negation check reads on the predicate (stored ones unpacked, the others parsed), the numeric check,
# and the other offline methods together
STRUCTURE, NEGATION_PARSES, NUMERIC, OTHER_CHECKS = (
    "structural rules",
    "negation parses",
    "numeric check",
    "other checks",
)
OTHER_METHODS = ("conflict", "freshness", "linguistic", "cove")


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


class StageClock:
    """Within ``with``: wall and CPU seconds per stage, each exclusive of the stages called inside it."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self._patched: list[tuple[Any, str, bool, Any]] = []
        self._inner: list[list[float]] = []  # per open call: the wall and CPU its timed callees took

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        """Time ``owner.name`` (an instance's method or a module's function) as ``stage``."""
        own = name in vars(owner)
        method = getattr(owner, name)
        self._patched.append((owner, name, own, vars(owner).get(name)))
        setattr(owner, name, self._timed(stage, method))

    def _timed(self, stage: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            wall0, cpu0 = _clocks()
            self._inner.append([0.0, 0.0])
            try:
                return method(*args, **kwargs)
            finally:
                wall1, cpu1 = _clocks()
                inner = self._inner.pop()
                wall, cpu = wall1 - wall0, cpu1 - cpu0
                self.wall[stage] = self.wall.get(stage, 0.0) + wall - inner[0]
                self.cpu[stage] = self.cpu.get(stage, 0.0) + cpu - inner[1]
                if self._inner:
                    self._inner[-1][0] += wall
                    self._inner[-1][1] += cpu

        return call

    def __enter__(self) -> StageClock:
        return self

    def __exit__(self, *exc: object) -> bool:
        for owner, name, own, before in reversed(self._patched):
            if own:
                setattr(owner, name, before)
            else:
                delattr(owner, name)
        self._patched.clear()
        return False


def audit_clock(kb: Any) -> StageClock:
    """A clock on the calls of an in-process audit: the embedder's two methods, the index's search,
    the NLI model's scoring, the role binding's two entry points, the negation check's parses and the
    offline methods beside the judge (each exclusive of the stages inside it)."""
    from audit.pipeline import binding, nli_model
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.methods import REGISTRY

    clock = StageClock()
    embedder = get_embedder()
    clock.wrap(embedder, "encode", BI_ENCODER)
    clock.wrap(embedder, "encode_with_tokens", BI_ENCODER)
    clock.wrap(kb.index, "search_many", SEARCH)
    clock.wrap(nli_model.get_nli_model(), "probabilities", CROSS_ENCODER)
    clock.wrap(binding, "prefetch", BINDING)
    clock.wrap(binding, "apply", BINDING)
    clock.wrap(binding, "prefetch_texts", NEGATION_PARSES)
    clock.wrap(REGISTRY["structure"], "verify_many", STRUCTURE)
    clock.wrap(REGISTRY["numeric"], "verify_many", NUMERIC)
    for name in OTHER_METHODS:
        clock.wrap(REGISTRY[name], "verify_many", OTHER_CHECKS)
    return clock


@contextmanager
def pairs_read(model: Any) -> Iterator[list[list[tuple[str, str]]]]:
    """Within ``with``: the (premise, hypothesis) pairs each call of ``model.infer`` computed, one list
    a call (what its cache did not hold: the cross-encoder's work, as the bench times it)."""
    calls: list[list[tuple[str, str]]] = []
    infer = model.infer

    def record(pairs: list[tuple[str, str]]) -> Any:
        calls.append([(str(a), str(b)) for a, b in pairs])
        return infer(pairs)

    model.infer = record
    try:
        yield calls
    finally:
        del model.infer


def reading_floor(index: Any, claims: list[str], k: int = 10) -> tuple[float, float]:
    """(wall ms, CPU ms) of the least reading of one answer's ``claims``: embed them, exact top-``k``
    over the index, one cross-encoder pass of each claim against the first sentence of its best chunk;
    no cache is read (the models are called directly)."""
    from audit.pipeline.embedding import get_embedder
    from audit.pipeline.extraction import split_sentences
    from audit.pipeline.nli_model import get_nli_model

    embedder, reader = get_embedder(), get_nli_model()
    wall0, cpu0 = _clocks()
    vecs = np.asarray(
        embedder.model.encode(claims, convert_to_numpy=True, normalize_embeddings=True), dtype=np.float32
    )
    tops = index.exact_top(vecs, k)
    sentences = [(split_sentences(index.text(top[0]) or "") or [""])[0] if top else "" for top in tops]
    reader.infer(list(zip(sentences, claims)))
    wall1, cpu1 = _clocks()
    return 1000 * (wall1 - wall0), 1000 * (cpu1 - cpu0)
