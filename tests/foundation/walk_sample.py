"""A small call tree for ``tools.walk``'s recorder (tests/foundation/test_walk_counts.py)."""


def helper(n: int) -> int:
    return sum(n for _ in range(1))  # a generator expression is read with its function


def first() -> int:
    return helper(1) + helper(2)  # the second call is not read again


def second() -> int:
    return helper(3)


def entry() -> int:
    return first() + second()
