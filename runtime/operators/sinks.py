"""Sinks: the operators that run Spark jobs (one action per sink per round)."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.config import table_options
from planner.logical import CollectSink, GraphSink, TableSink
from runtime.connectors.base import WriteRequest
from runtime.connectors.registry import connector_for
from runtime.env import Env
from runtime.profile import phase


def table_sink(env: Env, node: TableSink, inputs: list[Any]) -> Any:
    table = node.table
    options = table_options(env.ctx.config, table)
    types = [f.type for f in node.input.schema]
    connector = connector_for(table)
    with phase("spark"):
        return connector.write(
            env.ctx, inputs[0], WriteRequest(table, options, types, env.windowed)
        )


def collect_sink(env: Env, node: CollectSink, inputs: list[Any]) -> Any:
    # The caller decides how to fetch (Arrow, pandas, rows): nothing runs yet.
    return inputs[0]


def graph_sink(env: Env, node: GraphSink, inputs: list[Any]) -> Any:
    with phase("spark"):
        return env.ctx.stores.write(env, node, inputs[0])
