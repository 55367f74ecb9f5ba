"""A batch statement: its ExecutionGraph's root group run as one cycle of one round.

The head builds every operator's DataFrame (lazily, children first); the
tail runs the sinks, whose Spark actions are the statement's jobs.  An
ITERATOR inside runs its own child cycle (a round per superstep) while the
head builds its frame.
"""

from __future__ import annotations

from typing import Any

from planner.pipeline import SINK

from .evaluator import Evaluator, evaluate
from .scheduler import ExecutionCycle, RoundOutcome


class BatchCycle(ExecutionCycle):
    """The root group of a batch statement: one round."""

    def __init__(self, evaluator: Evaluator) -> None:
        prepared = evaluator.prepared
        super().__init__(prepared.execution.root.id, max_rounds=1)
        self.evaluator = evaluator
        self.env = evaluator.env()
        self.memo: dict[int, Any] = {}
        self.written: Any = None

    def head(self, round_no: int) -> None:
        for v in self.evaluator.prepared.pipeline.vertices:
            if v.kind != SINK:
                evaluate(self.env, v.node, self.memo)

    def tail(self, round_no: int) -> RoundOutcome:
        for v in self.evaluator.prepared.pipeline.sinks:
            self.written = evaluate(self.env, v.node, self.memo)
        return RoundOutcome(False, self.written)

    def finish(self) -> Any:
        """What the (single) sink gave: a DataFrame to fetch, or rows written."""
        return self.written

    def sink_input(self) -> Any:
        """The frame the sink reads (for EXPLAIN's Spark plan), built by ``head``."""
        sink = self.evaluator.prepared.pipeline.sinks[-1].node
        return self.memo[id(sink.inputs[0])]
