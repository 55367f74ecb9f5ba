"""The CycleScheduler: an event-driven state machine that runs cycles.

As in GeaFlow, each ExecutionGroup becomes a cycle.  The scheduler sends an
event to the cycle's head (its sources), the head does one round of work, and
the tail (its sinks) answers with the round's outcome; from that answer the
state machine decides the next event: another round (a new window, the next
iteration) or the end.  A batch job is one round; a stream is a round per
window; a graph iteration is a round per superstep.  Cycles nest: a round of
one cycle may run a whole child cycle (an iteration inside a window).
"""

from __future__ import annotations

import enum
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class EventKind(enum.Enum):
    LAUNCH = "launch"  # start the cycle
    EXECUTE = "execute"  # head: run round n
    ROUND_DONE = "round_done"  # tail: round n finished (payload: RoundOutcome)
    FINISH = "finish"  # clean up, produce the cycle's result


class CycleState(enum.Enum):
    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"


@dataclass(frozen=True)
class Event:
    kind: EventKind
    cycle_id: int
    round: int = 0
    payload: Any = None


@dataclass(frozen=True)
class RoundOutcome:
    """What the tail reports after a round: is another round needed, and data."""

    more: bool
    result: Any = None


class ExecutionCycle:
    """A schedulable unit.  Subclasses implement the head, the tail and finish."""

    mode = "once"

    def __init__(self, cycle_id: int, max_rounds: int | None = None) -> None:
        self.id = cycle_id
        self.max_rounds = max_rounds
        self.state = CycleState.CREATED
        self.rounds_run = 0

    def on_launch(self) -> None:
        """Prepare (e.g. open sources)."""

    def head(self, round_no: int) -> None:
        """Receive the EXECUTE event: do round ``round_no``'s work."""
        raise NotImplementedError

    def tail(self, round_no: int) -> RoundOutcome:
        """Answer when round ``round_no`` is complete."""
        raise NotImplementedError

    def finish(self) -> Any:
        """The cycle's result after its last round."""
        return None


@dataclass
class SchedulerTrace:
    events: list[tuple[int, str, int]] = field(default_factory=list)
    seconds: float = 0.0


class CycleScheduler:
    """Runs a cycle to completion by exchanging events with its head and tail."""

    def __init__(
        self,
        listener: Callable[[Event], None] | None = None,
        *,
        record: bool = True,
        check: Callable[[], None] | None = None,
    ) -> None:
        self.listener = listener
        # Called before every round; raises to stop the cycle (a cancel that
        # reached work which runs no Spark job for Spark to stop).
        self.check = check
        # Keep every event in ``trace`` (a long windowed job runs many: the
        # runtime records them only when asked, geaflow.dsl.trace.cycles).
        self.record = record
        self.trace = SchedulerTrace()

    def _emit(self, queue: deque[Event], event: Event) -> None:
        queue.append(event)

    def run(self, cycle: ExecutionCycle) -> Any:
        start = time.perf_counter()
        queue: deque[Event] = deque()
        self._emit(queue, Event(EventKind.LAUNCH, cycle.id))
        try:
            while queue:
                event = queue.popleft()
                if self.record:
                    self.trace.events.append((event.cycle_id, event.kind.value, event.round))
                if self.listener is not None:
                    self.listener(event)
                if event.kind is EventKind.LAUNCH:
                    cycle.state = CycleState.RUNNING
                    cycle.on_launch()
                    self._emit(queue, Event(EventKind.EXECUTE, cycle.id, 0))
                elif event.kind is EventKind.EXECUTE:
                    if self.check is not None:
                        self.check()
                    cycle.head(event.round)
                    outcome = cycle.tail(event.round)
                    cycle.rounds_run = event.round + 1
                    self._emit(queue, Event(EventKind.ROUND_DONE, cycle.id, event.round, outcome))
                elif event.kind is EventKind.ROUND_DONE:
                    outcome = event.payload
                    limit_reached = (
                        cycle.max_rounds is not None and event.round + 1 >= cycle.max_rounds
                    )
                    if outcome.more and not limit_reached:
                        self._emit(queue, Event(EventKind.EXECUTE, cycle.id, event.round + 1))
                    else:
                        self._emit(queue, Event(EventKind.FINISH, cycle.id, event.round))
                elif event.kind is EventKind.FINISH:
                    result = cycle.finish()
                    cycle.state = CycleState.FINISHED
                    return result
        except BaseException:
            cycle.state = CycleState.FAILED
            raise
        finally:
            self.trace.seconds += time.perf_counter() - start
        return None  # pragma: no cover - FINISH always ends the loop


class FunctionCycle(ExecutionCycle):
    """A cycle whose round is a function: ``step(round) -> (more, result)``.

    Iterations (graph algorithms, variable-length traversal) use this: each
    round is a superstep; ``more`` is False on convergence.
    """

    mode = "per_iteration"

    def __init__(
        self,
        cycle_id: int,
        step: Callable[[int], tuple[bool, Any]],
        max_rounds: int | None = None,
        on_finish: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__(cycle_id, max_rounds)
        self.step = step
        self.on_finish = on_finish
        self._last: tuple[bool, Any] = (False, None)

    def head(self, round_no: int) -> None:
        self._last = self.step(round_no)

    def tail(self, round_no: int) -> RoundOutcome:
        more, result = self._last
        return RoundOutcome(more, result)

    def finish(self) -> Any:
        if self.on_finish is not None:
            return self.on_finish()
        return self._last[1]


@dataclass(frozen=True)
class IterationRunner:
    """Runs an iteration as a child cycle: rounds of ``step`` under the
    scheduler running the statement, with the id of the iteration's
    ExecutionGroup, so the scheduler's trace names the groups EXPLAIN shows."""

    scheduler: CycleScheduler
    cycle_id: int

    def run(
        self,
        step: Callable[[int], tuple[bool, Any]],
        max_rounds: int | None,
        on_finish: Callable[[], Any] | None = None,
    ) -> Any:
        """Rounds until ``step`` says stop or the bound; the last round's result
        (or ``on_finish()``)."""
        return self.scheduler.run(FunctionCycle(self.cycle_id, step, max_rounds, on_finish))

    @staticmethod
    def standalone() -> IterationRunner:
        """For an algorithm called outside any statement (its kernels' tests,
        the benchmarks): a scheduler of its own and cycle 0."""
        return IterationRunner(CycleScheduler(), 0)
