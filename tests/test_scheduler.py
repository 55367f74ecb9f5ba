"""The CycleScheduler's state machine: events to the head, answers from the tail."""

from __future__ import annotations

import pytest

from runtime.scheduler import (
    CycleScheduler,
    CycleState,
    ExecutionCycle,
    FunctionCycle,
    RoundOutcome,
)


class Recorder(ExecutionCycle):
    def __init__(self, rounds):
        super().__init__(7)
        self.rounds = rounds
        self.log = []

    def on_launch(self):
        self.log.append("launch")

    def head(self, n):
        self.log.append(f"head{n}")

    def tail(self, n):
        self.log.append(f"tail{n}")
        return RoundOutcome(n + 1 < self.rounds, n)

    def finish(self):
        self.log.append("finish")
        return "done"


def test_batch_cycle_is_one_round():
    cycle = Recorder(1)
    sched = CycleScheduler()
    assert sched.run(cycle) == "done"
    assert cycle.log == ["launch", "head0", "tail0", "finish"]
    assert [e[1] for e in sched.trace.events] == ["launch", "execute", "round_done", "finish"]
    assert cycle.state is CycleState.FINISHED


def test_rounds_continue_until_the_tail_says_stop():
    cycle = Recorder(3)
    CycleScheduler().run(cycle)
    assert cycle.log == ["launch", "head0", "tail0", "head1", "tail1", "head2", "tail2", "finish"]
    assert cycle.rounds_run == 3


def test_iteration_stops_at_convergence_or_bound():
    values = []

    def step(n):
        values.append(n)
        return n < 10, n

    assert CycleScheduler().run(FunctionCycle(1, step, max_rounds=4)) == 3
    assert values == [0, 1, 2, 3]
    values.clear()
    assert CycleScheduler().run(FunctionCycle(1, lambda n: (n < 2, n * 10), max_rounds=100)) == 20


def test_failure_marks_the_cycle_failed():
    def boom(n):
        raise RuntimeError("bad round")

    cycle = FunctionCycle(1, boom)
    with pytest.raises(RuntimeError):
        CycleScheduler().run(cycle)
    assert cycle.state is CycleState.FAILED


def test_a_cancel_from_another_thread_stops_the_next_round():
    """Rounds that run no Spark job stop at a round boundary once cancelled."""
    import threading

    from geaflow_sql.core.errors import CancelledError
    from runtime.jobs import JobTags

    jobs = JobTags()
    started = threading.Event()
    cancelled = threading.Event()
    outcome: dict[str, object] = {}
    seen: list[int] = []

    def step(n):
        seen.append(n)
        if n == 2:
            started.set()
            assert cancelled.wait(10)
        return True, n  # never converges on its own

    def run():
        with jobs.tagged(None):
            try:
                CycleScheduler(check=jobs.check).run(FunctionCycle(1, step))
            except CancelledError as err:
                outcome["error"] = err
            # The cancel holds for the rest of the scope it reached...
            try:
                jobs.check()
            except CancelledError:
                outcome["still"] = True
        with jobs.tagged(None):  # ...and not for the next one.
            jobs.check()
            outcome["fresh"] = True

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(10)
    jobs.cancel(None)
    cancelled.set()
    worker.join(10)
    assert isinstance(outcome.get("error"), CancelledError)
    assert seen == [0, 1, 2]
    assert outcome.get("still") is True and outcome.get("fresh") is True
