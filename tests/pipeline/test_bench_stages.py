"""The bench's stage clock (audit/evaluation/bench_stages.py)."""

from __future__ import annotations

import time

from audit.evaluation.bench_stages import StageClock


class _Calls:
    def outer(self) -> str:
        time.sleep(0.01)
        return self.inner()

    def inner(self) -> str:
        time.sleep(0.2)
        return "read"


def test_the_stage_clock_counts_each_stage_without_the_stages_inside_it_and_unwraps_on_exit():
    calls = _Calls()
    with StageClock() as clock:
        clock.wrap(calls, "outer", "outer stage")
        clock.wrap(calls, "inner", "inner stage")
        assert calls.outer() == "read"
    assert clock.wall["inner stage"] >= 0.2
    assert 0.01 <= clock.wall["outer stage"] < 0.15  # its callee's 0.2 s is not its own
    assert "outer" not in vars(calls) and "inner" not in vars(calls)


class _Model:
    def infer(self, pairs: list[tuple[str, str]]) -> list[int]:
        return [len(p) + len(h) for p, h in pairs]


def test_the_pairs_read_are_recorded_call_by_call_and_the_model_is_itself_again_after():
    from audit.evaluation.bench_stages import pairs_read

    model = _Model()
    with pairs_read(model) as calls:
        assert model.infer([("ab", "c")]) == [3]
        model.infer([("d", "e"), ("f", "g")])
    assert calls == [[("ab", "c")], [("d", "e"), ("f", "g")]]
    assert "infer" not in vars(model)
