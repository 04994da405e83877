"""How ``tools.walk`` counts a reader's walk: stays, returns to a file already left, climbs."""

from __future__ import annotations

from tools.walk import Stop, figures, record


def _walk(*steps: tuple[str, int]) -> list[Stop]:
    return [Stop(file, f"f{n}", depth) for n, (file, depth) in enumerate(steps)]


def test_consecutive_functions_of_one_file_are_one_stay():
    counted = figures(_walk(("a.py", 0), ("a.py", 1), ("a.py", 2)))
    assert (counted.stays, counted.files, counted.returns, counted.climbs) == (1, 1, 0, 0)


def test_going_back_to_a_file_already_left_is_a_return():
    counted = figures(_walk(("view.py", 0), ("service.py", 1), ("view.py", 1), ("service.py", 1)))
    assert (counted.stays, counted.files, counted.returns) == (4, 2, 2)
    assert counted.entries == {"view.py": 2, "service.py": 2}


def test_a_stay_that_starts_higher_than_the_one_before_is_a_climb_and_a_sibling_is_not():
    down_and_along = figures(_walk(("s.py", 1), ("p.py", 2), ("q.py", 2), ("r.py", 2)))
    back_up = figures(_walk(("s.py", 1), ("p.py", 2), ("q.py", 3), ("r.py", 2), ("t.py", 1)))
    assert down_and_along.climbs == 0
    assert back_up.climbs == 2


def test_the_recorder_reads_each_function_once_in_the_order_it_is_first_called():
    from tests.foundation import walk_sample

    result, stops = record(walk_sample.entry, entry="entry", apps=("tests",))

    assert result == 6
    assert [(stop.function, stop.depth) for stop in stops] == [
        ("entry", 0),
        ("first", 1),
        ("helper", 2),
        ("second", 1),
    ]
    assert {stop.file for stop in stops} == {"tests/foundation/walk_sample.py"}


def test_the_recorder_sees_nothing_outside_the_entry_point():
    from tests.foundation import walk_sample

    walk_sample.first()  # before the entry: not read
    _, stops = record(walk_sample.first, entry="entry", apps=("tests",))
    assert stops == []
