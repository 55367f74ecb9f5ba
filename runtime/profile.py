"""Where a statement's time goes, when ``geaflow.dsl.profile`` is on.

Phases, in the order a statement passes them:

* ``parse``: the script text to its syntax tree (a script's parse is counted
  in its first statement);
* ``bind``: names, types and the logical plan;
* ``optimize``: the rules;
* ``build``: the DataFrames of the plan's operators (including the Spark jobs
  an operator runs while it is built: a loop's eager checkpoints, a graph
  write's staging);
* ``local``: a query the local engine runs (``runtime.local``): its
  translation, the fetch of inputs not yet kept, and DuckDB's run;
* ``spark``: the statement's own Spark jobs: a sink's write, a query's fetch.

Each phase also counts the py4j round trips made in it (classic Spark; a
Spark Connect session makes none).  A profile belongs to the thread running
the statement: ``recording(profile)`` makes it the thread's, and
``phase(name)`` charges the time inside the block to ``name`` (a phase inside
another is not counted twice) and does nothing when no profile is recorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

PHASES = ("parse", "bind", "optimize", "build", "local", "spark")

_active = threading.local()


class Profile:
    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.calls = dict.fromkeys(PHASES, 0)
        self._stack: list[str] = []
        self._since = 0.0

    def add(self, phase: str, seconds: float, calls: int = 0) -> None:
        self.seconds[phase] += seconds
        self.calls[phase] += calls

    def count_call(self) -> None:
        if self._stack:
            self.calls[self._stack[-1]] += 1

    def enter(self, phase: str) -> None:
        now = time.perf_counter()
        if self._stack:
            self.seconds[self._stack[-1]] += now - self._since
        self._stack.append(phase)
        self._since = now

    def leave(self) -> None:
        now = time.perf_counter()
        self.seconds[self._stack.pop()] += now - self._since
        self._since = now

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        return {p: {"seconds": self.seconds[p], "py4j_calls": self.calls[p]} for p in PHASES}

    def table(self) -> str:
        """The profile as a small text table (the CLI and the shell print it)."""
        lines = [f"{'phase':<10} {'ms':>9} {'py4j calls':>11}"]
        for p in PHASES:
            lines.append(f"{p:<10} {self.seconds[p] * 1000:9.1f} {self.calls[p]:11d}")
        total_calls = sum(self.calls.values())
        lines.append(f"{'total':<10} {self.total * 1000:9.1f} {total_calls:11d}")
        return "\n".join(lines)


def active() -> Profile | None:
    return getattr(_active, "profile", None)


@contextmanager
def recording(profile: Profile | None) -> Iterator[Profile | None]:
    """Make ``profile`` (or none) the one this thread's phases are charged to."""
    outer = active()
    _active.profile = profile
    if profile is not None:
        from runtime.spark_adapter import count_py4j_calls

        count_py4j_calls(_count)
    try:
        yield profile
    finally:
        _active.profile = outer


@contextmanager
def phase(name: str) -> Iterator[None]:
    profile = active()
    if profile is None:
        yield
        return
    profile.enter(name)
    try:
        yield
    finally:
        profile.leave()


def _count() -> None:
    profile = active()
    if profile is not None:
        profile.count_call()
