"""Which function builds a plan node's DataFrame: node class -> operator.

An operator is ``fn(env, node, inputs) -> DataFrame`` (sinks: what they
wrote); ``runtime.evaluator`` calls it with the node's input DataFrames.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from geaflow_sql.core.errors import UnsupportedError
from planner.graph_nodes import (
    EdgeMatch,
    GraphAlgorithm,
    GraphLabelScan,
    RepeatMatch,
    VertexMatch,
)
from planner.logical import (
    Aggregate,
    CollectSink,
    Correlate,
    Filter,
    GraphSink,
    GroupLimit,
    Join,
    LogicalNode,
    Project,
    Sort,
    TableScan,
    TableSink,
    Union,
    Values,
)

from . import graph, relational, repeat, sinks

Operator = Callable[[Any, Any, list[Any]], Any]

OPERATORS: dict[type[LogicalNode], Operator] = {
    TableScan: relational.table_scan,
    Values: relational.values,
    Project: relational.project,
    Filter: relational.filter_,
    Aggregate: relational.aggregate,
    Sort: relational.sort,
    GroupLimit: relational.group_limit,
    Join: relational.join,
    Union: relational.union,
    Correlate: relational.correlate,
    VertexMatch: graph.vertex_match,
    EdgeMatch: graph.edge_match,
    RepeatMatch: repeat.repeat_match,
    GraphLabelScan: graph.graph_label_scan,
    GraphAlgorithm: graph.graph_algorithm,
    TableSink: sinks.table_sink,
    CollectSink: sinks.collect_sink,
    GraphSink: sinks.graph_sink,
}


def operator_for(node: LogicalNode) -> Operator:
    fn = OPERATORS.get(type(node))
    if fn is None:  # pragma: no cover - every node class of the planner has one
        raise UnsupportedError(f"no runtime operator for {node.kind}")
    return fn
