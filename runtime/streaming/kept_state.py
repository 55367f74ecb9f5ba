"""Stream operators that keep their state between windows.

``emissions.py`` says what a windowed DISTINCT and GROUP BY emit: a row the
first time the stream has it, and the groups a window touched with their
values over every row so far.  Computed over every row so far, a window
costs what the whole history costs.  Here the operator keeps what it needs
from one window to the next instead, so a window costs what its rows and
the groups they touch cost:

* DISTINCT (GROUP BY without aggregates, UNION): the distinct rows seen so
  far; a window emits its distinct rows less those, and adds them.
* GROUP BY with COUNT, SUM (of integers and decimals), MIN and MAX, none
  DISTINCT: per group the partial values (a count, a sum, a least or
  greatest value); a window aggregates its own rows, merges them into the
  groups it touched and emits those.  Sums of exact types only: a float
  sum built window by window rounds differently from one over all rows.

While the state and a window's partial rows are small (at most
``geaflow.dsl.store.local.max.bytes`` each) they are kept and merged on the
driver (Arrow): a window then runs one Spark job for its rows and none for
the state; larger states stay in Spark, checkpointed each window.

Both need an input whose rows in a window are exactly the rows it gained
(scans, projections, filters, lateral table functions, UNION ALL of those),
and the operator over those rows only; anything else keeps the computation
over every row so far.  The state lives in the job
(``WindowRound.operator_state``), not in its checkpoint: after a restart,
or if a window was not seen, it is rebuilt once from the rows so far.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import STORE_LOCAL_MAX_BYTES, STREAM_OPERATOR_STATE
from planner.logical import (
    AggCall,
    Aggregate,
    Correlate,
    Filter,
    LogicalNode,
    Project,
    TableScan,
    Union,
    walk,
)
from runtime.env import Env
from runtime.operators.relational import sum_or_zero
from runtime.stores.arrow_parts import collect_small

_APPEND_ONLY = (TableScan, Project, Filter, Correlate)
# A mergeable aggregate's partial value over a window's rows, and how the
# partial values of two sets of rows merge (by the aggregate's function).
_PARTIAL = {"COUNT": "count", "SUM": "sum", "MIN": "min", "MAX": "max"}
_MERGE = {"COUNT": "sum", "SUM": "sum", "MIN": "min", "MAX": "max"}


def _not_on_driver() -> tuple[type[BaseException], ...]:
    import pyarrow as pa

    return (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError)


def keeps_state(env: Env, node: LogicalNode) -> bool:
    """Can ``node`` (a DISTINCT or GROUP BY of a windowed statement) keep its
    state between windows?"""
    window = env.reads.window
    if window is None or not env.ctx.config.get_bool(STREAM_OPERATOR_STATE, True):
        return False
    inputs = node.inputs
    for below in inputs:
        for n in walk(below):
            if isinstance(n, Union) and n.all:
                continue
            if not isinstance(n, _APPEND_ONLY):
                return False
    if isinstance(node, Aggregate) and node.calls:
        return bool(node.group) and all(_mergeable(c, node) for c in node.calls)
    return True


def _mergeable(call: AggCall, node: Aggregate) -> bool:
    if call.distinct or call.user_function is not None:
        return False
    if call.function == "COUNT":
        return len(call.args) <= 1
    if len(call.args) != 1:
        return False
    arg_type = node.input.schema[call.args[0]].type
    if call.function == "SUM":
        return bool(arg_type.is_integer or arg_type.name == "DECIMAL")
    if call.function in ("MIN", "MAX"):
        return not isinstance(arg_type, T.StructType)
    return False


def _entry(env: Env, node: LogicalNode, rebuild: Any) -> Any:
    """The operator's state as of the window before this one (``rebuild``
    makes it from the rows so far when the job has none)."""
    window = env.reads.window
    assert window is not None
    key = (window.statement, id(node))
    kept = window.operator_state.get(key)
    if kept is not None and kept[0] == window.number:
        return kept[1]  # this window again: from the same state
    if kept is not None and kept[0] == window.number - 1:
        return kept[2]
    return rebuild()


def _keep(env: Env, node: LogicalNode, before: Any, after: Any) -> None:
    window = env.reads.window
    assert window is not None
    window.operator_state[(window.statement, id(node))] = (window.number, before, after)


# ------------------------------------------------------------------ distinct
def new_distinct_rows(env: Env, node: LogicalNode, frame: Any, so_far_before: Any) -> Any:
    """This window's distinct rows that no earlier window had (NULLs equal);
    ``so_far_before()`` is the operator over the rows before this window
    (None before the first)."""
    limit = _limit(env)

    def rebuild() -> Any:
        rows = so_far_before()
        return None if rows is None else _small_or_kept(rows.distinct(), limit)

    seen = _entry(env, node, rebuild)
    rows = frame.distinct()
    if seen is None or _is_arrow(seen):
        got = collect_small(rows, limit)
        if got is not None:
            try:
                new, after = _first_seen(seen, got)
            except _not_on_driver():
                pass
            else:
                _keep(env, node, seen, _small_or_frame(env, after, rows.schema, limit))
                return _frame(env, new, rows.schema)
        if seen is not None:
            seen = _frame(env, seen, rows.schema)
    new = rows if seen is None else rows.subtract(seen)
    new = new.localCheckpoint(eager=True)
    after = new if seen is None else seen.unionByName(new).localCheckpoint(eager=True)
    _keep(env, node, seen, after)
    return new


def _first_seen(seen: Any, rows: Any) -> tuple[Any, Any]:
    """(rows not in ``seen``, ``seen`` with them), NULLs equal, on the driver."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if seen is None:
        return rows, rows
    columns = rows.column_names
    marked = pa.concat_tables(
        [
            seen.append_column("__t", pa.array([0] * seen.num_rows, pa.int8())),
            rows.append_column("__t", pa.array([1] * rows.num_rows, pa.int8())),
        ]
    )
    groups = marked.group_by(columns).aggregate([("__t", "min")])
    after = pa.table({c: groups[c] for c in columns}).cast(rows.schema)
    new = after.filter(pc.equal(groups["__t_min"], 1))
    return new, after


# ------------------------------------------------------------------ group by
def touched_groups(env: Env, node: Aggregate, window_rows: Any, so_far_before: Any) -> Any:
    """The groups this window's rows touch, with their values over every row
    so far; ``so_far_before()`` is the aggregate's input over the rows before
    this window (None before the first)."""
    from pyspark.sql import functions as F

    keys = [f"__k{i}" for i in range(len(node.group))]
    parts = [f"__p{j}" for j in range(len(node.calls))]

    def partials(rows: Any) -> Any:
        # SQL text: a Column per function would be py4j round trips each.
        group = [F.expr(f"c{g} AS {k}") for g, k in zip(node.group, keys, strict=True)]
        values = [
            F.expr(f"{_PARTIAL[call.function]}({f'c{call.args[0]}' if call.args else 1}) AS {name}")
            for call, name in zip(node.calls, parts, strict=True)
        ]
        return rows.groupBy(*group).agg(*values)

    limit = _limit(env)

    def rebuild() -> Any:
        rows = so_far_before()
        return None if rows is None else _small_or_kept(partials(rows), limit)

    state = _entry(env, node, rebuild)
    window = partials(window_rows)
    kinds = [call.function for call in node.calls]
    merged: Any = None
    if state is None or _is_arrow(state):
        got = collect_small(window, limit)
        if got is not None:
            try:
                touched, after = _merged_groups(state, got, keys, parts, kinds)
            except _not_on_driver():
                pass
            else:
                schema = window.schema
                _keep(env, node, state, _small_or_frame(env, after, schema, limit))
                merged = _frame(env, touched, schema)
        if merged is None and state is not None:
            state = _frame(env, state, window.schema)
    if merged is None:
        merged = _merged_in_spark(env, node, state, window, keys, parts)
    return _finals(node, merged, keys, parts)


def _merged_in_spark(
    env: Env, node: Aggregate, state: Any, window: Any, keys: list[str], parts: list[str]
) -> Any:
    from pyspark.sql import functions as F

    if state is None:
        merged = window
    else:
        touched = state.join(_renamed(window, keys), _same(keys), "left_semi")
        merged = (
            touched.unionByName(window)
            .groupBy(*[F.expr(k) for k in keys])
            .agg(
                *[
                    F.expr(f"{_MERGE[call.function]}({name}) AS {name}")
                    for call, name in zip(node.calls, parts, strict=True)
                ]
            )
        )
    merged = merged.localCheckpoint(eager=True)
    if state is None:
        after = merged
    else:
        kept = state.join(_renamed(merged, keys), _same(keys), "left_anti")
        after = kept.unionByName(merged).localCheckpoint(eager=True)
    _keep(env, node, state, after)
    return merged


def _finals(node: Aggregate, merged: Any, keys: list[str], parts: list[str]) -> Any:
    """The aggregate's rows (c0..cN) from the merged partial values."""
    out = [f"{k} AS c{i}" for i, k in enumerate(keys)]
    for j, (call, name) in enumerate(zip(node.calls, parts, strict=True)):
        value = name
        if call.function == "SUM":
            # As the aggregate operator: a group of NULLs sums to 0.
            value = sum_or_zero(name, T.spark_sql_type(call.type))
        elif call.function == "COUNT":
            value = f"CAST({name} AS {T.spark_sql_type(call.type)})"
        out.append(f"{value} AS c{len(keys) + j}")
    return merged.selectExpr(*out)


def _merged_groups(
    state: Any, window: Any, keys: list[str], parts: list[str], kinds: list[str]
) -> tuple[Any, Any]:
    """On the driver: (the groups ``window`` touches with their merged
    partial values, every group's values after the window)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tables = [window.append_column("__t", pa.array([1] * window.num_rows, pa.int8()))]
    if state is not None:
        tables.insert(0, state.append_column("__t", pa.array([0] * state.num_rows, pa.int8())))
    groups = (
        pa.concat_tables(tables)
        .group_by(keys)
        .aggregate([*[(p, _MERGE[k]) for p, k in zip(parts, kinds, strict=True)], ("__t", "max")])
    )
    columns = {k: groups[k] for k in keys}
    columns.update({p: groups[f"{p}_{_MERGE[k]}"] for p, k in zip(parts, kinds, strict=True)})
    after = pa.table(columns).cast(window.schema)
    return after.filter(pc.equal(groups["__t_max"], 1)), after


def _limit(env: Env) -> int:
    return env.ctx.config.get_int(STORE_LOCAL_MAX_BYTES)


def _is_arrow(state: Any) -> bool:
    import pyarrow as pa

    return isinstance(state, pa.Table)


def _small_or_kept(df: Any, limit: int) -> Any:
    """``df``'s rows on the driver when small, else ``df`` checkpointed."""
    got = collect_small(df, limit)
    return got if got is not None else df.localCheckpoint(eager=True)


def _small_or_frame(env: Env, rows: Any, schema: Any, limit: int) -> Any:
    """State rows kept on the driver while small, else in Spark."""
    if rows.nbytes <= limit:
        return rows
    return _frame(env, rows, schema).localCheckpoint(eager=True)


def _frame(env: Env, rows: Any, schema: Any) -> Any:
    return env.ctx.spark.createDataFrame(rows, schema)


def _renamed(frame: Any, keys: list[str]) -> Any:
    return frame.selectExpr(*[f"{k} AS __j{i}" for i, k in enumerate(keys)])


def _same(keys: list[str]) -> Any:
    from pyspark.sql import functions as F

    if not keys:
        return None
    return F.expr(" AND ".join(f"{k} <=> __j{i}" for i, k in enumerate(keys)))
