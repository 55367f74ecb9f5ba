"""A statement planned down to what runs: rules, PipelineGraph, ExecutionGraph.

``prepare`` runs the optimizer over each statement's plan and builds one
PipelineGraph and one ExecutionGraph: for a batch statement, of that
statement; for a windowed job, of all its statements together (one sink
each, a group per statement inside the per-window root group).  A windowed
job is prepared once and its ExecutionGraph runs every window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from geaflow_sql.core.catalog import Catalog, TableInfo
from geaflow_sql.core.config import Config
from planner.graph_nodes import EdgeMatch, GraphAlgorithm, GraphLabelScan, VertexMatch
from planner.logical import GraphSink, Job, LogicalNode, TableScan, walk
from planner.optimizer import OptimizeResult, optimize
from planner.physical import ExecutionGraph, build_execution_graph
from planner.pipeline import PipelineGraph, build_pipeline
from planner.statements import PlanStatement
from runtime.profile import phase

from .connectors.registry import reads_in_windows

GRAPH_READS = (VertexMatch, EdgeMatch, GraphLabelScan, GraphAlgorithm)


@dataclass(frozen=True)
class PreparedPlan:
    statements: tuple[PlanStatement, ...]
    optimized: tuple[OptimizeResult, ...]
    pipeline: PipelineGraph
    execution: ExecutionGraph

    @property
    def plans(self) -> tuple[LogicalNode, ...]:
        """Each statement's plan after the rules (a sink at the top)."""
        return tuple(o.after for o in self.optimized)

    @property
    def udfs(self) -> tuple[Any, ...]:
        """The user scalar functions the statements call (each once)."""
        seen: dict[str, Any] = {}
        for st in self.statements:
            for udf in st.udfs:
                seen.setdefault(udf.spark_name, udf)
        return tuple(seen.values())


def prepare(statements: Sequence[PlanStatement], config: Config, windowed: bool) -> PreparedPlan:
    optimized = []
    for st in statements:
        assert st.root is not None
        with phase("optimize"):
            optimized.append(optimize(st.root, config))
    roots = [o.after for o in optimized]
    root = roots[0] if len(roots) == 1 else Job(tuple(roots))
    pipeline = build_pipeline(root, config)
    execution = build_execution_graph(pipeline, windowed)
    return PreparedPlan(tuple(statements), tuple(optimized), pipeline, execution)


def plan_tables(catalog: Catalog, plan: LogicalNode) -> list[TableInfo]:
    """Every table a plan reads, directly or through a graph defined USING it."""
    out: dict[TableInfo, None] = {}
    for node in walk(plan):
        if isinstance(node, TableScan):
            out[node.table] = None
        if isinstance(node, (*GRAPH_READS, GraphSink)):
            for t in catalog.tables_of(node.graph):
                out[t] = None
    return list(out)


def reads_windows(catalog: Catalog, config: Config, plan: LogicalNode) -> bool:
    """Does the plan read a table window by window (a stream, or a window size)?"""
    return any(reads_in_windows(t, config) for t in plan_tables(catalog, plan))
