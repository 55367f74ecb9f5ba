"""Relational operators on DataFrames.

Every operator takes its input DataFrames (columns ``c0..cN``, positionally the
input schema) and returns a DataFrame in the same convention.  Nothing here
runs a Spark job; sinks do (see ``sinks.py``).
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import EXACT_DOUBLE_SUM
from geaflow_sql.core.errors import UnsupportedError
from planner.logical import (
    AggCall,
    Aggregate,
    Correlate,
    Filter,
    GroupLimit,
    Join,
    Project,
    Sort,
    TableScan,
    Union,
    Values,
)
from runtime.connectors.base import ReadRequest
from runtime.connectors.registry import connector_for
from runtime.env import Env
from runtime.expressions import column, spark_sql
from runtime.held import local_frame
from runtime.operators.exact_sum import exact_avg_sql, exact_sum_sql, helper_columns
from runtime.operators.literal_rows import python_rows, spark_schema
from runtime.spark_adapter import select_sql


def table_scan(env: Env, node: TableScan, inputs: list[Any]) -> Any:
    table = node.table
    projection = (
        node.projection if node.projection is not None else tuple(range(len(table.columns)))
    )
    options = dict(node.options)
    window_df = env.reads.table_rows(table)
    if window_df is not None:
        # Windowed job: the rows of this round (all table columns, c0..cN).
        df = select_sql(window_df, [f"c{p} AS c{i}" for i, p in enumerate(projection)])
    else:
        df = connector_for(table).read(env.ctx, ReadRequest(table, options, tuple(projection)))
    for f in node.filters:
        df = df.where(column(f))
    return df


def values(env: Env, node: Values, inputs: list[Any]) -> Any:
    spark = env.spark
    width = len(node.fields_)
    base = spark.range(1)
    if width == 0:
        if len(node.rows) == 1:
            return base.select()
        return spark.range(len(node.rows)).select()
    if len(node.rows) == 1:
        return base.select(
            *[
                column(e).cast(T.spark_sql_type(f.type)).alias(f"c{i}")
                for i, (e, f) in enumerate(zip(node.rows[0], node.fields_, strict=True))
            ]
        )
    rows = python_rows(node)
    if rows is not None:
        # Constants: one local relation, not a Spark column per value.
        return local_frame(spark, rows, spark_schema(node))
    # Expressions: one SQL text for all rows (a Column per value would be a
    # py4j round trip each).
    types = [T.spark_sql_type(f.type) for f in node.fields_]
    structs = ", ".join(
        "struct("
        + ", ".join(
            f"CAST({spark_sql(e)} AS {t}) AS c{i}"
            for i, (e, t) in enumerate(zip(row, types, strict=True))
        )
        + ")"
        for row in node.rows
    )
    return base.selectExpr(f"inline(array({structs}))")


def project(env: Env, node: Project, inputs: list[Any]) -> Any:
    df = inputs[0]
    # One SQL projection (a Column per expression costs round trips each).
    return select_sql(df, [f"{spark_sql(e)} AS c{i}" for i, e in enumerate(node.exprs)])


def filter_(env: Env, node: Filter, inputs: list[Any]) -> Any:
    return inputs[0].where(spark_sql(node.condition))


def exact_sum_applies(call: AggCall, input_types: list[Any], exact_sums: bool = True) -> bool:
    """Is this a SUM or AVG of FLOAT or DOUBLE values, summed exactly
    (``geaflow.dsl.sum.exact``, on by default)?"""
    return (
        exact_sums
        and call.function in ("SUM", "AVG")
        and call.user_function is None
        and not call.distinct
        and len(call.args) == 1
        and bool(getattr(input_types[call.args[0]], "is_approx", False))
    )


def sum_or_zero(total: str, spark_type: str) -> str:
    """SQL text of a SUM as GeaFlow gives it: starting from 0, so a group whose
    values are all null sums to 0; cast to ``spark_type``."""
    return f"coalesce(CAST({total} AS {spark_type}), CAST(0 AS {spark_type}))"


def aggregate_sql(call: AggCall, input_types: list[Any], exact_sums: bool = True) -> str:
    """Spark SQL text of a built-in aggregate call over columns ``c0..cN``.

    SQL text, not Column objects: each Column function is several py4j
    round trips."""
    args = [f"c{a}" for a in call.args]
    name = call.function
    spark_type = T.spark_sql_type(call.type)
    if name == "COUNT":
        if not args:
            return "count(1)"
        if call.distinct:
            return f"count(DISTINCT {', '.join(args)})"
        if len(args) == 1:
            return f"count({args[0]})"
        both = " AND ".join(f"{a} IS NOT NULL" for a in args)
        return f"count(CASE WHEN {both} THEN 1 END)"
    arg = args[0]
    if exact_sum_applies(call, input_types, exact_sums):
        # The same doubles whatever the partitioning, over the helper
        # columns ``aggregate`` added (exact_sum).
        if name == "AVG":
            return exact_avg_sql(f"__x{call.args[0]}")
        return sum_or_zero(exact_sum_sql(f"__x{call.args[0]}")[0], spark_type)
    if name == "SUM":
        return sum_or_zero(f"sum(DISTINCT {arg})" if call.distinct else f"sum({arg})", spark_type)
    x = f"CAST({arg} AS DOUBLE)"
    if name == "AVG":
        return f"avg(DISTINCT {x})" if call.distinct else f"avg({x})"
    if name == "STDDEV_SAMP":
        # GeaFlow's StdDevSamp UDAF: sqrt((sum(x^2) - sum(x)^2 / n) / n), and 0.0
        # when the group has no values.  The same formula gives the same doubles.
        n = f"count({x})"
        value = f"sqrt((sum({x} * {x}) - power(sum({x}), 2) / {n}) / {n})"
        return f"CASE WHEN {n} = 0 THEN 0.0D ELSE {value} END"
    if name in ("STDDEV_POP", "VAR_SAMP", "VAR_POP"):
        return f"{name.lower()}({x})"
    if name == "PERCENTILE":
        # GeaFlow uses Commons Math's StatUtils.percentile: p is a percentage in
        # (0, 100] and positions interpolate as p * (n + 1) / 100.
        p = float(call.constants[0]) if call.constants else 50.0
        pos = f"({p!r} * (size(a) + 1) / 100.0)"
        return (
            f"transform(array(array_sort(collect_list({x}))), a -> "
            f"CASE WHEN size(a) = 0 THEN CAST(NULL AS DOUBLE) "
            f"WHEN {pos} < 1 THEN a[0] "
            f"WHEN {pos} >= size(a) THEN a[size(a) - 1] "
            f"ELSE a[CAST(floor({pos}) AS INT) - 1] + ({pos} - floor({pos})) * "
            f"(a[CAST(floor({pos}) AS INT)] - a[CAST(floor({pos}) AS INT) - 1]) END)[0]"
        )
    plain = {
        "MIN": "min",
        "MAX": "max",
        "FIRST_VALUE": "first",
        "LAST_VALUE": "last",
        "COLLECT_LIST": "collect_list",
        "COLLECT_SET": "collect_set",
        "BIT_AND": "bit_and",
        "BIT_OR": "bit_or",
        "BOOL_AND": "bool_and",
        "BOOL_OR": "bool_or",
    }
    if name in plain:
        return f"{plain[name]}({arg})"
    raise UnsupportedError(f"aggregate {name} is not supported")


def _as_call_type(value: str, call: AggCall) -> str:
    """``value`` cast to the call's type (nested types are left as they are)."""
    if isinstance(call.type, (T.StructType, T.ArrayType, T.MapType)):
        return value
    return f"CAST({value} AS {T.spark_sql_type(call.type)})"


def aggregate(env: Env, node: Aggregate, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    df = inputs[0]
    in_types = [f.type for f in node.input.schema]
    k = len(node.group)
    if not node.calls:
        if not k:
            return df.limit(1).select()
        return select_sql(df, [f"c{g} AS c{i}" for i, g in enumerate(node.group)]).distinct()
    exact_sums = env.ctx.config.get_bool(EXACT_DOUBLE_SUM)
    exact = sorted({c.args[0] for c in node.calls if exact_sum_applies(c, in_types, exact_sums)})
    if exact:
        # What an exact sum of doubles adds up, computed once a row.
        steps = [helper_columns(f"CAST(c{a} AS DOUBLE)", f"__x{a}") for a in exact]
        for n in range(len(steps[0])):
            df = select_sql(df, ["*", *[item for s in steps for item in s[n]]])
    if all(c.user_function is None for c in node.calls):
        # One aggregation whose output is already c0..cN.  (Input columns keep
        # their names inside the aggregates: they resolve against the input,
        # not against a key's alias.)
        values = [
            F.expr(f"{_as_call_type(aggregate_sql(c, in_types, exact_sums), c)} AS c{k + i}")
            for i, c in enumerate(node.calls)
        ]
        if not k:
            return df.agg(*values)
        return df.groupBy(*[F.expr(f"c{g} AS c{i}") for i, g in enumerate(node.group)]).agg(*values)
    from runtime.udfs import aggregate_column

    def user_value(call: AggCall) -> Any:
        args = [F.col(f"c{a}") for a in call.args]
        return aggregate_column(call, call.user_function, args, [in_types[a] for a in call.args])

    aggs = [
        (
            F.expr(f"{aggregate_sql(c, in_types, exact_sums)} AS __a{i}")
            if c.user_function is None
            else user_value(c).alias(f"__a{i}")
        )
        for i, c in enumerate(node.calls)
    ]
    # Spark cannot mix pandas (user) aggregates with built-in ones in one
    # aggregation: compute each kind separately and join them on the keys.
    user = [a for a, c in zip(aggs, node.calls, strict=True) if c.user_function is not None]
    builtin = [a for a, c in zip(aggs, node.calls, strict=True) if c.user_function is None]
    if k:
        key_cols = [F.expr(f"c{g} AS __k{i}") for i, g in enumerate(node.group)]
        parts = [df.groupBy(*key_cols).agg(*group) for group in (builtin, user) if group]
        grouped = parts[0]
        for other in parts[1:]:
            renamed = other.toDF(*[f"__r{c}" if c.startswith("__k") else c for c in other.columns])
            same = " AND ".join(f"__k{i} <=> __r__k{i}" for i in range(k))
            grouped = grouped.join(renamed, F.expr(same), "inner")
    else:
        grouped = _global_aggregate(df, node, builtin, user)
    return select_sql(
        grouped,
        [
            *[f"__k{i} AS c{i}" for i in range(k)],
            *[f"{_as_call_type(f'__a{i}', c)} AS c{k + i}" for i, c in enumerate(node.calls)],
        ],
    )


def _global_aggregate(df: Any, node: Aggregate, builtin: list[Any], user: list[Any]) -> Any:
    """An aggregate without GROUP BY: always exactly one row, even over no input."""
    from pyspark.sql import functions as F

    from runtime.udfs import empty_result

    grouped = df.agg(*builtin) if builtin else df.sparkSession.range(1).select()
    if not user:
        return grouped
    # Grouped pandas UDFs run on one constant group (Spark rejects them in a
    # global aggregate next to others); with no input there is no group, and
    # the row gets what the function returns for no rows.
    per_group = df.groupBy(F.lit(0).alias("__g")).agg(*user).drop("__g")
    joined = grouped.join(per_group, F.lit(True), "left")
    fills = {}
    for i, call in enumerate(node.calls):
        if call.user_function is not None:
            value = empty_result(call.user_function)
            if value is not None:
                fills[f"__a{i}"] = F.coalesce(F.col(f"__a{i}"), F.lit(value))
    return joined.withColumns(fills) if fills else joined


def sort(env: Env, node: Sort, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    df = inputs[0]
    if node.keys:
        order = []
        for k in node.keys:
            c = F.col(f"c{k.index}")
            nulls_first = k.nulls_first
            if nulls_first is None:
                # Nulls sort as the smallest value (Spark's and GeaFlow's default).
                nulls_first = not k.descending
            if k.descending:
                order.append(c.desc_nulls_first() if nulls_first else c.desc_nulls_last())
            else:
                order.append(c.asc_nulls_first() if nulls_first else c.asc_nulls_last())
        if node.offset or node.limit is not None:
            return first_rows(df, order, node.offset or 0, node.limit)
        return df.orderBy(*order)
    if node.offset:
        df = df.offset(node.offset)
    if node.limit is not None:
        df = df.limit(node.limit)
    return df


def group_limit(env: Env, node: GroupLimit, inputs: list[Any]) -> Any:
    """The first ``count`` rows of each group in order (a row number over the
    group), or the rows of its ``count`` least order values (a dense rank)."""
    rank = "dense_rank" if node.ties else "row_number"
    keys = ", ".join(spark_sql(k) for k in node.keys)
    over = f"PARTITION BY {keys} ORDER BY {spark_sql(node.order)}"
    width = len(node.schema)
    return (
        inputs[0]
        .selectExpr("*", f"{rank}() OVER ({over}) AS __rank")
        .where(f"__rank <= {int(node.count)}")
        .select(*[f"c{i}" for i in range(width)])
    )


def first_rows(df: Any, order: list[Any], offset: int, limit: int | None) -> Any:
    """Rows ``offset + 1`` to ``offset + limit`` of ``df`` in ``order``, sorted.

    Not ``orderBy().offset().limit()``: Spark keeps such a limit next to its
    sort (a top-k per partition, then merged and sorted again) only while at
    most one projection separates them.  Projections added above (a sink's
    formatting) are pushed below the limit, and the limit then takes the
    first rows of the sorted partitions in the order a single-partition
    shuffle delivers them, which on a cluster is the order they arrive in:
    the wrong rows.  Here the top-k stays next to its sort, and the rows are
    numbered in order over that one partition, cut at the offset and sorted
    by their number, which holds whatever is planned above."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if limit is not None:
        df = df.orderBy(*order).limit(offset + limit)
    number = F.row_number().over(Window.orderBy(*order))
    df = df.withColumn("__row", number)
    if offset:
        df = df.where(F.col("__row") > offset)
    return df.orderBy("__row").drop("__row")


_HOW = {
    "INNER": "inner",
    "LEFT": "left",
    "RIGHT": "right",
    "FULL": "full",
    "SEMI": "left_semi",
    "ANTI": "left_anti",
}


def join(env: Env, node: Join, inputs: list[Any]) -> Any:
    left, right = inputs
    lw = len(node.left.schema)
    right = right.toDF(*[f"c{lw + i}" for i in range(len(node.right.schema))])
    if node.join_type == "CROSS" or node.condition is None:
        if node.join_type in ("CROSS", "INNER"):
            return left.crossJoin(right)
        from pyspark.sql import functions as F

        out = left.join(right, F.lit(True), _HOW[node.join_type])
    else:
        out = left.join(right, column(node.condition), _HOW[node.join_type])
    return out


def union(env: Env, node: Union, inputs: list[Any]) -> Any:
    out = inputs[0]
    for other in inputs[1:]:
        out = out.union(other)
    return out


def correlate(env: Env, node: Correlate, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    df = inputs[0]
    n_in = len(node.input.schema)
    fn = node.function
    args = [column(a) for a in fn.args]
    if fn.implementation is None:
        if fn.name == "split":
            # GeaFlow's Split is StringUtils.split: every character of the
            # separator splits, runs of them count once, empty pieces are
            # dropped; a null separator splits on whitespace.
            sep = args[1] if len(args) > 1 else F.lit(",")
            char_class = F.concat(
                F.lit("["), F.regexp_replace(sep, r"([\\\[\]^\-&])", r"\\$1"), F.lit("]+")
            )
            regex = F.when(sep.isNull() | (sep == ""), F.lit(r"\s+")).otherwise(char_class)
            pieces = F.filter(F.split(args[0], regex, -1), lambda p: p != "")
            return df.select("*", F.explode(pieces).alias(f"c{n_in}"))
        raise UnsupportedError(f"table function {fn.name} is not supported")
    from pyspark.sql import types as ST

    from runtime.udfs import table_function_batches

    arg_names = [f"__arg{i}" for i in range(len(args))]
    staged = df.select(
        *[F.col(f"c{i}") for i in range(n_in)],
        *[a.alias(n) for a, n in zip(args, arg_names, strict=True)],
    )
    schema = ST.StructType(
        [ST.StructField(f"c{i}", T.to_spark_type(f.type)) for i, f in enumerate(node.input.schema)]
        + [ST.StructField(f"c{n_in + j}", T.to_spark_type(f.type)) for j, f in enumerate(fn.output)]
    )
    run = table_function_batches(
        fn.implementation.instance, n_in, len(args), len(fn.output), schema
    )
    return staged.mapInArrow(run, schema)
