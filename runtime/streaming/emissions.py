"""What a table operator emits in one window of a stream.

A windowed job evaluates a statement once per window on the window's rows
(``Reads.so_far`` false).  Row-wise operators (scans, projections, filters,
UNION ALL, lateral table functions) emit what they make of this window's
rows, and sorts and limits order and cut each window's rows on their own,
as GeaFlow's ``OrderByFunctionImpl`` clears its buffer at every window end.
The operators that need history get it here, in ``emissions`` (the
evaluator's rewrite hook), following GeaFlow's stream operators:

* **GROUP BY with aggregates** (``IncrAggregateOperator`` over
  ``TableGlobalAggregateFunction``): at the end of a window, one row per
  group that received rows in the window, with the values over every row so
  far; untouched groups emit nothing.
* **DISTINCT, GROUP BY without aggregates, UNION** (GeaFlow's
  ``TableGlobalDistinctFunction``; UNION is rewritten to UNION ALL under a
  distinct aggregate): a row is emitted once per stream, in the first
  window that has it.
* **Joins.**  GeaFlow has no join of two streams (its runtime table rejects
  joins; only joins of a graph's vertex and edge tables run, as MATCH).
  Here a join whose inputs change from window to window emits, in each
  window, the joined rows that are new since the window before, so that all
  windows together hold the join of everything read, as GeaFlow's
  sql2graph rewrite answers on a graph that grows.  A join of a stream with
  a table that does not change is the window's rows joined with the table.

This applies to statements over tables.  A statement that reads a graph
with requests streamed from a table answers each window's requests on the
graph as it is then, keeping nothing (``job.py``), as GeaFlow's
parameterised queries do.

"Every row so far" is evaluated as such (the sources' rows up to this
window, ``Reads.so_far``), which is exact for an input made of row-wise
operators, distinct operators and joins.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from planner.logical import Aggregate, Join, LogicalNode, TableScan, Union, walk
from runtime.env import Env

from .kept_state import keeps_state, new_distinct_rows, touched_groups


def adds_history(node: LogicalNode) -> bool:
    """May ``node`` emit other than its rows over the window alone (the
    cases ``emissions`` treats: an aggregation, DISTINCT union or join)?"""
    return (
        (isinstance(node, Aggregate) and not node.internal)
        or (isinstance(node, Union) and not node.all)
        or isinstance(node, Join)
    )


def emissions(env: Env, node: LogicalNode, frame: Any, inputs: list[Any]) -> Any:
    """``node``'s emission in this window, given its frame over the window's
    rows (``frame``, built from its inputs' emissions ``inputs``)."""
    if isinstance(node, Aggregate) and not node.internal:
        if node.calls:
            return _touched_groups(env, node, inputs[0])
        return _new_since_last_window(env, node, frame)
    if isinstance(node, Union) and not node.all:
        return _new_since_last_window(env, node, frame)
    if isinstance(node, Join):
        left, right = (_changes(env, n) for n in (node.left, node.right))
        if not (left or right):
            return frame
        if left != right and node.grows_with("left" if left else "right"):
            return frame
        return _joined_since_last_window(env, node)
    return frame


def _changes(env: Env, node: LogicalNode) -> bool:
    window = env.reads.window
    return window is not None and any(
        isinstance(n, TableScan) and window.reads_table(n.table) for n in walk(node)
    )


def _so_far(env: Env, node: LogicalNode, before: bool = False) -> Any:
    """``node`` over every row read up to this window (or up to the one
    before it); None before the first window."""
    from runtime.evaluator import evaluate

    window = env.reads.window
    assert window is not None
    if before:
        if window.number == 0:
            return None
        window = replace(window, number=window.number - 1)
    return evaluate(env.with_reads(replace(env.reads, window=window, so_far=True)), node)


def _touched_groups(env: Env, node: Aggregate, window_input: Any) -> Any:
    """The groups the window's rows touch, with values over all rows so far."""
    from pyspark.sql import functions as F

    if keeps_state(env, node):
        return touched_groups(env, node, window_input, lambda: _so_far(env, node.input, True))
    cumulative = _so_far(env, node)
    if not node.group:
        marker = window_input.limit(1).select(F.lit(1).alias("__touched"))
        return cumulative.crossJoin(marker).drop("__touched")
    keys = window_input.select(
        *[F.col(f"c{g}").alias(f"__k{i}") for i, g in enumerate(node.group)]
    ).distinct()
    cond = None
    for i in range(len(node.group)):
        c = F.col(f"c{i}").eqNullSafe(F.col(f"__k{i}"))
        cond = c if cond is None else cond & c
    return cumulative.join(keys, cond, "left_semi")


def _new_since_last_window(env: Env, node: LogicalNode, frame: Any) -> Any:
    """Distinct rows of this window that no earlier window had (NULLs equal)."""
    if keeps_state(env, node):
        return new_distinct_rows(env, node, frame, lambda: _so_far(env, node, before=True))
    earlier = _so_far(env, node, before=True)
    return frame.distinct() if earlier is None else frame.subtract(earlier)


def _joined_since_last_window(env: Env, node: Join) -> Any:
    """The join over all rows so far, less what it was a window ago."""
    now = _so_far(env, node)
    earlier = _so_far(env, node, before=True)
    return now if earlier is None else now.exceptAll(earlier)
