"""The reader's walk through one call: how often a newcomer who follows it changes file, goes back
to a file already left, and climbs back up the stack.

Issue 36 measured the walk of one ``POST /api/v1/audits`` with a static walk of the code's calls,
which is not a command of this project. This module counts the same three things from the running code, with its own
definitions (docs/ARCHITECTURE.md, "The path of one audit"):

- **the walk**: every project function the entry point runs, in the order a reader meets them (the
  order of their first call), each read once; comprehensions, generator expressions and lambdas are
  read with the function that holds them, module imports are left out;
- **a stay**: a run of consecutive functions of the walk in one file;
- **a return**: a stay in a file the walk has already left (stays minus files);
- **a climb**: a stay that starts higher on the call stack than the stay before it started, so the
  reader must go back up more than the one room they came down from.

``record`` runs a callable under a profile hook and returns the walk; ``figures`` counts it. Django
stays out: the caller provides the request (``tests/api/test_request_walk.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROJECT_APPS = ("audit", "escalation", "showcase", "theoria")
# read with the function that holds them, not as functions of their own
INLINE = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"})


@dataclass(frozen=True)
class Stop:
    """One function of the walk: its file (relative to the repository), name and call depth below the
    entry point (the entry point is 0)."""

    file: str
    function: str
    depth: int


@dataclass(frozen=True)
class Figures:
    functions: int
    stays: int
    files: int
    returns: int
    climbs: int
    entries: dict[str, int]  # file -> stays in it

    def line(self) -> str:
        return (
            f"{self.functions} functions, {self.stays} stays in {self.files} files, "
            f"{self.climbs} climbs, {self.returns} returns"
        )


class _Recorder:
    """The profile hook: the frames inside the entry point, their depth, and the functions read."""

    def __init__(self, entry: str, prefixes: tuple[str, ...]) -> None:
        self.entry = entry
        self.prefixes = prefixes
        self.walk: list[Stop] = []
        self.seen: set[tuple[str, int]] = set()
        self.depth_of: dict[int, int] = {}  # id(frame) -> depth below the entry point
        self.inside = False

    def _parent_depth(self, frame: FrameType | None) -> int:
        while frame is not None and id(frame) not in self.depth_of:
            frame = frame.f_back
        return -1 if frame is None else self.depth_of[id(frame)]

    def _read(self, frame: FrameType, file: str) -> None:
        code = frame.f_code
        depth = 0 if not self.inside else self._parent_depth(frame.f_back) + 1
        self.depth_of[id(frame)] = depth
        if (code.co_filename, code.co_firstlineno) not in self.seen:
            self.seen.add((code.co_filename, code.co_firstlineno))
            self.walk.append(Stop(file, code.co_qualname, depth))

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "return":
            if self.depth_of.pop(id(frame), None) == 0:
                self.inside = False
            return
        code = frame.f_code
        if event != "call" or code.co_name == "<module>" or code.co_name in INLINE:
            return
        if not self.inside and code.co_qualname == self.entry:
            self._read(frame, _relative(code.co_filename))
            self.inside = True
        elif self.inside and code.co_filename.startswith(self.prefixes):
            self._read(frame, _relative(code.co_filename))


def _relative(filename: str) -> str:
    return filename.removeprefix(str(ROOT) + "/")


def record(
    call: Callable[[], Any], *, entry: str, apps: tuple[str, ...] = PROJECT_APPS
) -> tuple[Any, list[Stop]]:
    """Run ``call`` and return its result and the walk of the project functions (of ``apps``) that
    ``entry`` (a function's qualified name, e.g. ``AuditCreateApi.post``) runs, the entry included."""
    recorder = _Recorder(entry, tuple(str(ROOT / app) + "/" for app in apps))
    previous = sys.getprofile()
    sys.setprofile(recorder)
    try:
        result = call()
    finally:
        sys.setprofile(previous)
    return result, recorder.walk


def figures(walk: list[Stop]) -> Figures:
    """Count the walk's stays, files, returns and climbs (definitions in the module's docstring)."""
    stays: list[Stop] = []  # the first function of each stay
    for stop in walk:
        if not stays or stays[-1].file != stop.file:
            stays.append(stop)
    entries: dict[str, int] = {}
    for stay in stays:
        entries[stay.file] = entries.get(stay.file, 0) + 1
    climbs = sum(1 for before, stay in pairwise(stays) if stay.depth < before.depth)
    return Figures(
        functions=len(walk),
        stays=len(stays),
        files=len(entries),
        returns=len(stays) - len(entries),
        climbs=climbs,
        entries=entries,
    )
