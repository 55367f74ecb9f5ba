"""The ExecutionGraph: PipelineGraph vertices grouped into ExecutionGroups.

A group is a set of operators that run as one unit: here, one Spark job (its
lineage evaluated by a single action at the group's tail).  Groups nest, and a
group runs once (batch), once per window (a stream source feeds it) or once
per iteration (graph traversal and algorithms).  The scheduler turns each
group into a cycle (``runtime.scheduler``).

Grouping, following GeaFlow: operators connected by any edge share a group
(Spark pipelines FORWARD edges and shuffles KEY/BROADCAST edges inside one
job), except that an ITERATOR operator gets a nested group of its own that
repeats per iteration, and a windowed source makes its whole group repeat per
window.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .pipeline import ITERATOR, SINK, SOURCE, PipelineGraph

ONCE = "once"
PER_WINDOW = "per_window"
PER_ITERATION = "per_iteration"


@dataclass(frozen=True)
class ExecutionGroup:
    id: int
    vertex_ids: tuple[int, ...]
    mode: str  # once | per_window | per_iteration
    children: tuple[ExecutionGroup, ...] = ()
    head: tuple[int, ...] = ()  # vertices that receive the cycle's events (sources)
    tail: tuple[int, ...] = ()  # vertices that answer when a round is done (sinks)

    def all_groups(self) -> list[ExecutionGroup]:
        out = [self]
        for c in self.children:
            out += c.all_groups()
        return out


@dataclass(frozen=True)
class ExecutionGraph:
    pipeline: PipelineGraph
    root: ExecutionGroup
    group_edges: tuple[tuple[int, int], ...] = field(default=())

    @property
    def groups(self) -> list[ExecutionGroup]:
        return self.root.all_groups()


def build_execution_graph(pipeline: PipelineGraph, windowed: bool = False) -> ExecutionGraph:
    counter = iter(range(1_000_000))
    iterators = [v for v in pipeline.vertices if v.kind == ITERATOR]
    children: list[ExecutionGroup] = []
    for it in iterators:
        children.append(
            ExecutionGroup(
                next(counter) + 1,
                (it.id,),
                PER_ITERATION,
                (),
                (it.id,),
                (it.id,),
            )
        )
    windowed = windowed or any(v.repeats == PER_WINDOW for v in pipeline.vertices)
    root = ExecutionGroup(
        0,
        tuple(v.id for v in pipeline.vertices),
        PER_WINDOW if windowed else ONCE,
        tuple(children),
        tuple(v.id for v in pipeline.vertices if v.kind == SOURCE),
        tuple(v.id for v in pipeline.vertices if v.kind == SINK),
    )
    edges = tuple((0, c.id) for c in children)
    return ExecutionGraph(pipeline, root, edges)
