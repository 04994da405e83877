"""How the cost of a text function grows with its input: a scaling check, not a time limit.

``growth(fn, family)`` runs ``fn`` on the family's text at two sizes, SMALL and LARGE characters,
and returns the ratio of the CPU time per call (the thread's own time, so other processes on the
machine hardly matter). A linear function gives about LARGE / SMALL; a quadratic one its square.
That quick screen only names suspects: ``super_linear`` counts a family when the growth
exponent fitted over three larger sizes (``fitted_growth``: 8k, 32k and 128k characters, best of
three) is over MAX_EXPONENT too. A run that does not finish within STOP_AFTER_S seconds of CPU
time (catastrophic backtracking) is stopped by a timer signal and reported as unbounded growth.

``path_exponents`` does the same for whole HTTP paths (``tests/api/test_linear_http.py``): the
CPU time of each step of a request flow, fitted over three sizes.

``ADVERSARIAL`` holds the inputs that make regular expressions backtrack: nested and unbalanced
brackets, long runs of one punctuation mark (with and without a character that ends the match),
whitespace, digits, quotes, markup and repeated short sentences.
"""

from __future__ import annotations

import ast
import importlib
import math
import pkgutil
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

SMALL = 500
LARGE = 8_000
LINEAR_RATIO = LARGE / SMALL
MAX_RATIO = 2.5 * LINEAR_RATIO  # n·log n stays well below it; n² is 16 times above
STOP_AFTER_S = 5.0
MIN_SAMPLE_S = 0.0005  # repeat a call until one measurement takes at least this long


def _run(unit: str, tail: str = "") -> Callable[[int], str]:
    return lambda size: unit * max(1, (size - len(tail)) // len(unit)) + tail


def _nested(open_: str, close: str) -> Callable[[int], str]:
    return lambda size: open_ * (size // 2) + "x" + close * (size // 2)


_PUNCTUATION = ".!?,;:-*_#`~'\"|/\\=+<>()[]{}\u201c\u201d\u2019\u2022\u3002%$&@^"
ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "nested square brackets": _nested("[", "]"),
    "nested parentheses": _nested("(", ")"),
    "nested links": lambda size: "[" * (size // 4) + "x](" * (size // 4),
    "unclosed link texts": _run("[a"),
    "unclosed link targets": _run("[x]("),
    "link ends": _run("]("),
    "citation openers": _run("[1,"),
    "citation markers": _run("[1]"),
    "source openers": _run("(source "),
    **{f"run of {ch!r}": _run(ch) for ch in _PUNCTUATION},
    **{f"run of {ch!r} then a letter": _run(ch, "x") for ch in _PUNCTUATION},
    **{f"run of {ch!r} then a space": _run(ch, " ") for ch in ".!?;:\"'\u201d"},
    "spaces": _run(" ", "x"),
    "spaces after a word": lambda size: "a" + " " * size + "!",
    "spaces after a name": lambda size: "Ab" + " " * size + "x",
    "newlines": lambda size: "a" + "\n" * size + "!",
    "tabs": _run("\t", "x"),
    "spaces and newlines": _run(" \n", "x"),
    "blank lines and bullets": _run("\n - "),
    "digits": _run("1", "x"),
    "digits and commas": _run("1,"),
    "digits and points": _run("1."),
    "digits and hyphens": _run("1-"),
    "digits and spaces": _run("1 "),
    "amounts": _run("$1"),
    "quoted words": _run('"x'),
    "curly quoted words": _run("\u201cx"),
    "words": _run("a "),
    "names": _run("Ab "),
    "one long word": _run("a", "!"),
    "one long capitalised word": _run("A", " "),
    "dotted letters": _run("a."),
    "initials": _run("A. "),
    "abbreviations": _run("e.g. "),
    "titles": _run("Dr. "),
    "short sentences": _run("A b. "),
    "list numbers": _run("1. "),
    "hyphenated letters": _run("a-"),
    "apostrophes": _run("a'"),
    "names with of": _run("The of "),
    "tags": _run("<a"),
    "bold marks": _run("**x"),
    "urls": _run("http://"),
    "at signs": _run("a@"),
    "dotted local part": _run("a.", "@"),
    # the families of the probe of the running server (issue 34)
    "citation starts": _run("[cite:"),
    "source citation lists": _run("[source: 1,"),
    "parenthesised source lists": _run("(source: 1,"),
    "one long citation list": lambda size: "[1" + ",1" * ((size - 2) // 2),
    "code words": _run("`a "),
    "starred words": _run("*a "),
    "number pairs": _run("1 2 "),
    "number lists": _run("1, "),
    "and lists": _run(", and "),
}


class _Stopped(Exception):
    pass


def _stop(signum, frame):
    raise _Stopped


def cost(fn: Callable[[str], object], text: str, samples: int = 1) -> float:
    """CPU seconds per call of ``fn(text)`` (the best of ``samples``); inf when one sample ran
    past STOP_AFTER_S seconds of CPU time (a profiling timer: a busy machine does not stop it)."""
    previous = signal.signal(signal.SIGPROF, _stop)
    try:
        best = float("inf")
        for _ in range(samples):
            signal.setitimer(signal.ITIMER_PROF, STOP_AFTER_S)
            reps = 1
            while True:
                started = time.thread_time()
                for _ in range(reps):
                    fn(text)
                spent = time.thread_time() - started
                if spent >= MIN_SAMPLE_S or reps >= 4096:
                    break
                reps *= 4
            best = min(best, spent / reps)
        return best
    except _Stopped:
        return float("inf")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def growth(fn: Callable[[str], object], family: Callable[[int], str], samples: int = 1) -> float:
    """How much more one call costs on LARGE characters of ``family`` than on SMALL ones."""
    large = cost(fn, family(LARGE), samples)
    if large == float("inf"):
        return large
    small = cost(fn, family(SMALL), samples)
    return large / max(small, 1e-9)


FIT_SIZES = (LARGE, 4 * LARGE, 16 * LARGE)  # 8k, 32k and 128k characters


def fitted_growth(fn: Callable[[str], object], family: Callable[[int], str], samples: int = 3) -> float:
    """The growth exponent of ``fn`` on ``family``, fitted over FIT_SIZES (best of ``samples`` at each)."""
    costs: dict[int, float] = {}
    for size in FIT_SIZES:
        costs[size] = cost(fn, family(size), samples)
        if costs[size] == float("inf"):
            break
    return fitted_exponent(costs)


def super_linear(fn: Callable[[str], object], families=None) -> dict[str, float]:
    """The families on which ``fn`` grows faster than linearly.

    A quick screen (SMALL against LARGE characters) names the suspects; a suspect counts only when
    its growth fitted over three sizes large enough to measure (FIT_SIZES, best of three runs at
    each) is over MAX_EXPONENT too, so a busy machine does not make a linear function look
    quadratic (a single ratio of 41.9 against a limit of 40 once failed ``strip_markdown``). The
    value reported is that fitted exponent.
    """
    found = {}
    for name, family in (families or ADVERSARIAL).items():
        if growth(fn, family) > MAX_RATIO:
            exponent = fitted_growth(fn, family)
            if exponent > MAX_EXPONENT:
                found[name] = round(exponent, 2)
    return found


# --- the patterns of the project's modules -------------------------------------------------------


def _patterns_in(value) -> list[re.Pattern]:
    if isinstance(value, re.Pattern):
        return [value]
    if isinstance(value, dict):
        value = list(value.values()) + list(value.keys())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [p for item in value for p in _patterns_in(item)]
    return []


def _literal_patterns(path: Path) -> list[tuple[int, str, int]]:
    """(line, pattern, flags) of each ``re.<function>("literal", …)`` call in a source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.args
        ):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.append((node.lineno, first.value, 0))
    return found


def project_patterns(packages: tuple[str, ...], skip: tuple[str, ...] = ()) -> dict[str, re.Pattern]:
    """Every compiled pattern held by a module of ``packages`` (module globals, also inside lists,
    tuples and dicts) and every literal pattern passed to a function of ``re`` in their source."""
    out: dict[str, re.Pattern] = {}
    for package in packages:
        root = importlib.import_module(package)
        names = [package] + [
            info.name for info in pkgutil.walk_packages(root.__path__, package + ".") if not info.ispkg
        ]
        for name in names:
            if any(name.startswith(s) for s in skip) or ".migrations" in name or ".tests" in name:
                continue
            module = importlib.import_module(name)
            for attr, value in vars(module).items():
                for i, pattern in enumerate(_patterns_in(value)):
                    out.setdefault(f"{name}.{attr}" + (f"[{i}]" if i else ""), pattern)
            source = Path(module.__file__)
            for line, text, flags in _literal_patterns(source):
                out.setdefault(f"{name}:{line}", re.compile(text, flags))
    # the same pattern imported into several modules is measured once
    unique: dict[tuple, str] = {}
    for name, pattern in sorted(out.items()):
        unique.setdefault((pattern.pattern, pattern.flags), name)
    return {name: out[name] for name in unique.values()}


def scanner(pattern: re.Pattern) -> Callable[[str], int]:
    """A search over the whole text, as ``sub`` and ``findall`` do: every match from every position."""
    return lambda text: sum(1 for _ in pattern.finditer(text))


# --- growth of a whole HTTP path, fitted over several sizes ---------------------------------------

# the families of the probe of the running server (issue 34), one size of text each
PROBE_FAMILIES = (
    "code words",
    "starred words",
    "number lists",
    "number pairs",
    "abbreviations",
    "initials",
    "and lists",
    "digits and spaces",
    "citation starts",
    "digits and hyphens",
    "one long citation list",
)
LAST_COSTS: dict[str, dict[int, float]] = {}  # {step: {size: CPU seconds}} of the last path_exponents
MAX_EXPONENT = 1.5  # linear growth fits about 1 (less while fixed costs weigh), quadratic about 2


def fitted_exponent(costs: dict[int, float]) -> float:
    """The slope of log(cost) against log(size), by least squares over every size measured: about 1
    for a cost linear in the size, 2 for a quadratic one; infinite when a size ran too long."""
    if any(c == float("inf") for c in costs.values()):
        return float("inf")
    xs = [math.log(n) for n in costs]
    ys = [math.log(max(c, 1e-6)) for c in costs.values()]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


class StepTimer:
    """CPU seconds of the named steps of one run (the process's own time: all its threads, not
    the other processes of a busy machine); a step past STEP_STOP_AFTER_S seconds of CPU time (a
    profiling timer, so a busy machine that leaves it waiting does not stop it) is stopped and
    counts as unbounded."""

    STEP_STOP_AFTER_S = 120.0

    def __init__(self) -> None:
        self.costs: dict[str, float] = {}
        self.walls: dict[str, float] = {}  # wall-clock seconds of the same steps

    def __call__(self, name: str, fn: Callable[[], object]):
        previous = signal.signal(signal.SIGPROF, _stop)
        signal.setitimer(signal.ITIMER_PROF, self.STEP_STOP_AFTER_S)
        started, wall = time.process_time(), time.perf_counter()
        try:
            result = fn()
        except _Stopped:
            self.costs[name] = self.walls[name] = float("inf")
            return None
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
        self.costs[name] = time.process_time() - started
        self.walls[name] = time.perf_counter() - wall
        return result


def path_exponents(
    run: Callable[[str], dict[str, float]],
    family: Callable[[int], str],
    sizes: tuple[int, ...],
    repeats: int = 2,
) -> dict[str, float]:
    """The fitted exponent of each step of ``run`` (text -> {step: CPU seconds}) over ``sizes`` of
    ``family``, each size's cost the best of ``repeats`` runs; a step over MAX_EXPONENT after one
    run is measured ``repeats`` times more before it counts."""
    best: dict[str, dict[int, float]] = LAST_COSTS
    best.clear()

    def measure(size: int) -> None:
        for step, spent in run(family(size)).items():
            best.setdefault(step, {})[size] = min(spent, best.get(step, {}).get(size, float("inf")))

    for size in sizes:
        measure(size)
    exponents = {step: fitted_exponent(costs) for step, costs in best.items()}
    if any(e > MAX_EXPONENT for e in exponents.values()):
        for _ in range(repeats):
            for size in sizes:
                measure(size)
        exponents = {step: fitted_exponent(costs) for step, costs in best.items()}
    return exponents
