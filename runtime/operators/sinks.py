"""Sinks: the operators that run Spark jobs (one action per sink per round)."""

from __future__ import annotations

from typing import Any

from planner.logical import CollectSink, GraphSink, TableSink
from runtime.connectors.base import connector_for, merged_options

from .registry import operator


@operator(TableSink)
def table_sink(ctx: Any, node: TableSink, inputs: list[Any]) -> Any:
    df = inputs[0]
    table = node.table
    options = merged_options(ctx, table)
    types = [f.type for f in node.input.schema]
    ctx.metrics.spark_actions += 1
    written = connector_for(table).write(ctx, df, table, options, types)
    if written > 0:
        ctx.metrics.rows_written += written
    return written


@operator(CollectSink)
def collect_sink(ctx: Any, node: CollectSink, inputs: list[Any]) -> Any:
    # The caller decides how to fetch (Arrow, pandas, rows): nothing runs yet.
    return inputs[0]


@operator(GraphSink)
def graph_sink(ctx: Any, node: GraphSink, inputs: list[Any]) -> Any:
    return ctx.stores.write(ctx, node, inputs[0])
