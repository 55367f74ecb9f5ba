"""When the windows of a job can run as one round.

A windowed job runs one scheduler round per window, and every round costs
a few Spark jobs per statement.  When no statement can tell where one window
ends and the next begins, the rounds are pure overhead: the sinks receive the
same rows in the same order, and the graphs end in the same state, whether
the bounded sources arrive in 80 windows of one row or in one window of 80.
Loading a graph from files with ``geaflow.dsl.window.size = 1`` is the common
case.  A statement can tell the windows apart when it

* aggregates, sorts, limits, deduplicates or joins (its output per window is
  not the per-window pieces of its output over everything),
* reads a graph (MATCH and CALL run on each window's version),
* reads a table or graph another statement of the job writes,
* writes a file sink that marks the end of every window (split line);

and the job itself can tell when its sources are unbounded (a socket, a
Structured Streaming source) or when it keeps a checkpoint after every
window.  Otherwise the job's windows are fused into one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlglot import exp

from geaflow_sql.core.config import SINK_SPLIT_LINE
from planner.logical import (
    CollectSink,
    Correlate,
    Filter,
    GraphSink,
    LogicalNode,
    Project,
    TableScan,
    TableSink,
    Union,
    walk,
)
from runtime.connectors.base import ReplayableSource
from runtime.context import RuntimeContext
from runtime.reads import graph_key, table_key

# Nodes whose output over a stream is the concatenation of their outputs
# over its windows.
_ROW_WISE = (TableScan, Project, Filter, Correlate, TableSink, GraphSink, CollectSink)


def _row_wise_expressions(node: LogicalNode) -> bool:
    exprs: Iterable[exp.Expression] = ()
    if isinstance(node, Project):
        exprs = node.exprs
    elif isinstance(node, Filter):
        exprs = (node.condition,)
    return not any(
        isinstance(n, (exp.Subquery, exp.Select, exp.Window, exp.AggFunc))
        for e in exprs
        for n in e.walk()
    )


def is_row_wise(plan: LogicalNode) -> bool:
    """Does the plan map each input row to output rows on its own?"""
    for node in walk(plan):
        if isinstance(node, Union):
            if not node.all:
                return False
            continue
        if not isinstance(node, _ROW_WISE) or not _row_wise_expressions(node):
            return False
    return True


def _written_and_read(ctx: RuntimeContext, plan: LogicalNode) -> tuple[set[str], set[str]]:
    written: set[str] = set()
    read: set[str] = set()
    for node in walk(plan):
        if isinstance(node, TableSink):
            written.add("table:" + table_key(node.table))
        elif isinstance(node, GraphSink):
            written.add("graph:" + graph_key(node.graph))
            written.update("table:" + table_key(t) for t in ctx.catalog.tables_of(node.graph))
        elif isinstance(node, TableScan):
            read.add("table:" + table_key(node.table))
    return written, read


def _marks_windows(plan: LogicalNode, config: Any) -> bool:
    job_wide = config.raw(SINK_SPLIT_LINE) is not None
    return any(
        isinstance(node, TableSink)
        and (job_wide or node.table.option(SINK_SPLIT_LINE.name) is not None)
        for node in walk(plan)
    )


def can_fuse_windows(
    ctx: RuntimeContext, plans: list[LogicalNode], sources: Iterable[Any], checkpointed: bool
) -> bool:
    """True when running every window of the job in one round gives the same result."""
    if checkpointed:
        return False  # the user asked for a durable point after every window
    srcs = list(sources)
    if not srcs or not all(type(s) is ReplayableSource for s in srcs):
        return False  # unbounded sources have no "all of it" to read at once
    written: set[str] = set()
    read: set[str] = set()
    for plan in plans:
        if not is_row_wise(plan) or _marks_windows(plan, ctx.config):
            return False
        w, r = _written_and_read(ctx, plan)
        written |= w
        read |= r
    return not (written & read)
