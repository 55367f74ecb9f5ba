"""The one evaluator: a prepared plan, or any sub-plan of it, into DataFrames.

Every path that runs a plan goes through ``evaluate``: a batch statement's
cycle, each window of a windowed job, incremental MATCH's cut versions, an
incremental algorithm's delta.  What the plan reads is the ``Env``'s
``Reads``, given by the caller; the iterations of the plan run as child
cycles of the scheduler that runs the statement, under the ids of their
ExecutionGroups.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planner.logical import LogicalNode
from planner.pipeline import ITERATOR

from .context import RuntimeContext
from .env import Env
from .operators.registry import operator_for
from .plans import PreparedPlan
from .reads import Reads
from .scheduler import CycleScheduler, IterationRunner

# Called on each node's frame as it is built, with the frames of its inputs
# (a windowed job's stateful operators emit only what is new in the window:
# runtime.streaming.emissions); returns the frame to use.
Rewrite = Callable[[Env, LogicalNode, Any, list[Any]], Any]


def evaluate(
    env: Env,
    node: LogicalNode,
    memo: dict[int, Any] | None = None,
    rewrite: Rewrite | None = None,
) -> Any:
    """The DataFrame of ``node`` (a sink: what it wrote).

    ``memo`` holds frames already built, by node id: a shared subtree is
    built once, and a caller may put a frame there to stand for a node (its
    subtree is then not evaluated)."""
    memo = {} if memo is None else memo
    stack: list[tuple[LogicalNode, bool]] = [(node, False)]
    # Children first, without recursion: plans of long chains are deep.
    while stack:
        current, ready = stack.pop()
        key = id(current)
        if key in memo:
            continue
        if not ready:
            stack.append((current, True))
            stack.extend((c, False) for c in reversed(current.inputs) if id(c) not in memo)
            continue
        inputs = [memo[id(c)] for c in current.inputs]
        frame = operator_for(current)(env, current, inputs)
        if rewrite is not None:
            frame = rewrite(env, current, frame, inputs)
        memo[key] = frame
    return memo[id(node)]


class Evaluator:
    """Evaluation of one prepared plan under one scheduler: makes the ``Env``
    whose iterations run as the plan's iteration groups."""

    def __init__(
        self, ctx: RuntimeContext, prepared: PreparedPlan, scheduler: CycleScheduler
    ) -> None:
        self.ctx = ctx
        self.prepared = prepared
        self.scheduler = scheduler
        execution = prepared.execution
        self.iterations = {
            id(v.node): IterationRunner(scheduler, execution.iteration_group(v.id).id)
            for v in prepared.pipeline.vertices
            if v.kind == ITERATOR
        }

    def env(self, reads: Reads | None = None) -> Env:
        """A fresh evaluation's environment (its own cache of USING tables)."""
        if reads is None:
            reads = Reads()
            pinned = self.ctx.catalog.graph_versions
            if pinned:  # (USE GRAPH g VERSION n)
                reads = reads.at_versions(pinned)
        return Env(self.ctx, reads, self.iterations, {})
