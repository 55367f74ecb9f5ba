"""The ExecutionGraph: PipelineGraph vertices grouped into ExecutionGroups.

A group is a set of operators that run as one unit, and the runtime's
scheduler runs each group as a cycle (``runtime.scheduler``) with its id.
Groups nest, and a group's mode says how many rounds its cycle runs each time
its parent runs it:

* ``once``: one round.  A batch statement is one such group; in a windowed
  job each statement is one, run once per window, in script order (so a
  window's graph inserts are visible to the queries after them);
* ``per_window``: a round per source window (the root group of a windowed
  job, over all of its statements);
* ``per_iteration``: a round per superstep, until convergence or the bound
  (an ITERATOR operator: variable-length expansion, a graph algorithm).

Grouping, following GeaFlow: operators connected by any edge share a group
(Spark pipelines FORWARD edges and shuffles KEY/BROADCAST edges inside one
job), except that an ITERATOR gets a nested group of its own that repeats per
iteration.  Group ids are numbered depth first from the root (0), so the ids
EXPLAIN prints are the ids of the cycles that run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from .pipeline import ITERATOR, SINK, PipelineGraph

Mode = Literal["once", "per_window", "per_iteration"]
ONCE: Mode = "once"
PER_WINDOW: Mode = "per_window"
PER_ITERATION: Mode = "per_iteration"


@dataclass(frozen=True)
class ExecutionGroup:
    id: int
    vertex_ids: tuple[int, ...]
    mode: Mode
    children: tuple[ExecutionGroup, ...] = ()
    # Vertices where a round starts (no input inside the group: sources, an
    # algorithm reading its graph) and vertices that answer when it is done.
    head: tuple[int, ...] = ()
    tail: tuple[int, ...] = ()

    def all_groups(self) -> Iterator[ExecutionGroup]:
        yield self
        for c in self.children:
            yield from c.all_groups()


@dataclass(frozen=True)
class ExecutionGraph:
    pipeline: PipelineGraph
    root: ExecutionGroup

    @property
    def groups(self) -> list[ExecutionGroup]:
        return list(self.root.all_groups())

    @property
    def windowed(self) -> bool:
        return self.root.mode == PER_WINDOW

    @property
    def statements(self) -> tuple[ExecutionGroup, ...]:
        """One group per statement, in script order (the root, in batch)."""
        return self.root.children if self.windowed else (self.root,)

    def iteration_group(self, vertex_id: int) -> ExecutionGroup:
        """The group an ITERATOR vertex repeats in."""
        for g in self.root.all_groups():
            if g.mode == PER_ITERATION and g.vertex_ids == (vertex_id,):
                return g
        raise KeyError(vertex_id)


def _upstream(pipeline: PipelineGraph, sink: int) -> list[int]:
    """The vertices a sink reads from, directly or not, and the sink (ascending)."""
    seen = {sink}
    stack = [sink]
    while stack:
        for e in pipeline.inputs_of(stack.pop()):
            if e.src not in seen:
                seen.add(e.src)
                stack.append(e.src)
    return sorted(seen)


def _heads(pipeline: PipelineGraph, vertex_ids: list[int]) -> tuple[int, ...]:
    return tuple(v for v in vertex_ids if not pipeline.inputs_of(v))


def build_execution_graph(pipeline: PipelineGraph, windowed: bool = False) -> ExecutionGraph:
    """Group a statement's PipelineGraph (``windowed``: a job's, one sink per
    statement, whose sources are read window by window)."""
    counter = iter(range(1_000_000))

    def group(vertex_ids: list[int], mode: Mode) -> ExecutionGroup:
        gid = next(counter)
        children = tuple(
            ExecutionGroup(next(counter), (v,), PER_ITERATION, (), (v,), (v,))
            for v in vertex_ids
            if pipeline.vertex(v).kind == ITERATOR
        )
        return ExecutionGroup(
            gid,
            tuple(vertex_ids),
            mode,
            children,
            _heads(pipeline, vertex_ids),
            tuple(v for v in vertex_ids if pipeline.vertex(v).kind == SINK),
        )

    everything = [v.id for v in pipeline.vertices]
    if not windowed:
        return ExecutionGraph(pipeline, group(everything, ONCE))
    root_id = next(counter)
    statements = tuple(group(_upstream(pipeline, s.id), ONCE) for s in pipeline.sinks)
    root = ExecutionGroup(
        root_id,
        tuple(everything),
        PER_WINDOW,
        statements,
        _heads(pipeline, everything),
        tuple(v.id for v in pipeline.sinks),
    )
    return ExecutionGraph(pipeline, root)
