"""The PipelineGraph: the optimized plan as a DAG of operators and data edges.

As in GeaFlow, each vertex is one operator with a kind — SOURCE (reads a table
or a graph), ONE_INPUT / TWO_INPUT (relational work), ITERATOR (graph
traversal and algorithms that repeat), SINK — and a parallelism.  Each edge
says how data moves between operators: FORWARD (same partitioning), KEY
(shuffled by key fields) or BROADCAST (the whole input to every task).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from geaflow_sql.core.config import TABLE_PARALLELISM, Config

from .expressions import input_refs
from .graph_nodes import EdgeMatch, GraphAlgorithm, RepeatMatch
from .logical import (
    SINK_TYPES,
    Aggregate,
    Correlate,
    Filter,
    Job,
    Join,
    LogicalNode,
    Project,
    Sort,
    TableScan,
    Union,
    Values,
)

VertexKind = Literal["SOURCE", "ONE_INPUT", "TWO_INPUT", "MULTI_INPUT", "ITERATOR", "SINK"]
SOURCE: VertexKind = "SOURCE"
ONE_INPUT: VertexKind = "ONE_INPUT"
TWO_INPUT: VertexKind = "TWO_INPUT"
MULTI_INPUT: VertexKind = "MULTI_INPUT"
ITERATOR: VertexKind = "ITERATOR"
SINK: VertexKind = "SINK"

Partition = Literal["FORWARD", "KEY", "BROADCAST"]
FORWARD: Partition = "FORWARD"
KEY: Partition = "KEY"
BROADCAST: Partition = "BROADCAST"


@dataclass(frozen=True)
class PipelineVertex:
    id: int
    kind: VertexKind
    operator: str
    node: LogicalNode = field(compare=False, repr=False)
    parallelism: int = 1

    def label(self) -> str:
        return f"{self.id}:{self.operator}"


@dataclass(frozen=True)
class PipelineEdge:
    src: int
    dst: int
    partition: Partition
    keys: tuple[int, ...] = ()
    input_index: int = 0


@dataclass(frozen=True)
class PipelineGraph:
    vertices: tuple[PipelineVertex, ...]
    edges: tuple[PipelineEdge, ...]

    def vertex(self, vid: int) -> PipelineVertex:
        return self.vertices[vid]

    def inputs_of(self, vid: int) -> list[PipelineEdge]:
        return sorted((e for e in self.edges if e.dst == vid), key=lambda e: e.input_index)

    @property
    def sinks(self) -> list[PipelineVertex]:
        return [v for v in self.vertices if v.kind == SINK]

    @property
    def sources(self) -> list[PipelineVertex]:
        return [v for v in self.vertices if v.kind == SOURCE]


def _kind_of(node: LogicalNode) -> VertexKind:
    if isinstance(node, SINK_TYPES):
        return SINK
    if isinstance(node, (TableScan, Values)):
        return SOURCE
    if isinstance(node, (GraphAlgorithm, RepeatMatch)) or (
        isinstance(node, EdgeMatch) and node.is_loop
    ):
        return ITERATOR
    n = len(node.inputs)
    if n == 0:
        return SOURCE
    if n == 1:
        return ONE_INPUT
    if n == 2:
        return TWO_INPUT
    return MULTI_INPUT


def _equi_keys(join: Join) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Key fields of an equi-join condition (left keys, right keys)."""
    from sqlglot import exp

    from .expressions import conjuncts, ref_index

    width = len(join.left.schema)
    lk: list[int] = []
    rk: list[int] = []
    for c in conjuncts(join.condition):
        inner: Any = c.unnest() if isinstance(c, exp.Paren) else c
        if isinstance(inner, exp.EQ):
            lhs: Any = inner.this.unnest() if isinstance(inner.this, exp.Paren) else inner.this
            rhs: Any = (
                inner.expression.unnest()
                if isinstance(inner.expression, exp.Paren)
                else inner.expression
            )
            a = ref_index(lhs)
            b = ref_index(rhs)
            if a is not None and b is not None:
                if a < width <= b:
                    lk.append(a)
                    rk.append(b - width)
                elif b < width <= a:
                    lk.append(b)
                    rk.append(a - width)
    return tuple(lk), tuple(rk)


def _is_small(node: LogicalNode) -> bool:
    return isinstance(node, Values) or (
        isinstance(node, (Project, Filter)) and _is_small(node.inputs[0])
    )


def _parallelism(node: LogicalNode, config: Config) -> int:
    if isinstance(node, TableScan):
        value = node.table.option("geaflow.dsl.table.parallelism")
        if value is None:
            value = config.raw(TABLE_PARALLELISM)
        try:
            return max(1, int(value))
        except (TypeError, ValueError):
            return 1
    shard = getattr(node, "graph", None)
    if shard is not None and hasattr(shard, "shard_count"):
        return int(shard.shard_count)
    if isinstance(node, Values):
        return 1
    return max(1, config.get_int(TABLE_PARALLELISM))


def build_pipeline(plan: LogicalNode, config: Config) -> PipelineGraph:
    """Number the plan's nodes (children first) and connect them with edges."""
    vertices: list[PipelineVertex] = []
    edges: list[PipelineEdge] = []
    ids: dict[int, int] = {}

    def visit(node: LogicalNode) -> int:
        if id(node) in ids:
            return ids[id(node)]
        child_ids = [visit(c) for c in node.inputs]
        if isinstance(node, Job):
            ids[id(node)] = -1
            return -1
        vid = len(vertices)
        ids[id(node)] = vid
        vertices.append(
            PipelineVertex(vid, _kind_of(node), node.kind, node, _parallelism(node, config))
        )
        for idx, (child, cid) in enumerate(zip(node.inputs, child_ids, strict=True)):
            partition: Partition = FORWARD
            keys: tuple[int, ...] = ()
            if isinstance(node, Aggregate):
                partition, keys = (KEY, node.group) if node.group else (KEY, ())
            elif isinstance(node, Join):
                lk, rk = _equi_keys(node)
                if node.join_type == "CROSS" or not lk:
                    partition = BROADCAST if idx == 1 else FORWARD
                elif _is_small(child) and idx == 1:
                    partition = BROADCAST
                else:
                    partition, keys = KEY, (lk if idx == 0 else rk)
            elif isinstance(node, Sort) and node.keys:
                partition, keys = KEY, tuple(k.index for k in node.keys)
            elif isinstance(node, (Correlate, Union)):
                partition = FORWARD
            elif getattr(node, "partition_by", None) is not None:
                partition, keys = KEY, tuple(node.partition_by)  # type: ignore[attr-defined]
            if isinstance(node, Filter) and input_refs(node.condition) == set():
                partition = FORWARD
            edges.append(PipelineEdge(cid, vid, partition, tuple(keys), idx))
        return vid

    visit(plan)
    return PipelineGraph(tuple(vertices), tuple(edges))
