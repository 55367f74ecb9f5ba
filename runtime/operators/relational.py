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
from runtime.operators.exact_sum import exact_double_avg, exact_double_sum, helper_columns
from runtime.operators.literal_rows import python_rows, spark_schema


def table_scan(env: Env, node: TableScan, inputs: list[Any]) -> Any:
    table = node.table
    projection = (
        node.projection if node.projection is not None else tuple(range(len(table.columns)))
    )
    options = dict(node.options)
    window_df = env.reads.table_rows(table)
    if window_df is not None:
        # Windowed job: the rows of this round (all table columns, c0..cN).
        df = window_df.selectExpr(*[f"c{p} AS c{i}" for i, p in enumerate(projection)])
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
        return spark.createDataFrame(rows, spark_schema(node))
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
    return df.selectExpr(*[f"{spark_sql(e)} AS c{i}" for i, e in enumerate(node.exprs)])


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


def aggregate_expression(call: AggCall, input_types: list[Any], exact_sums: bool = True) -> Any:
    from pyspark.sql import functions as F

    args = [F.col(f"c{a}") for a in call.args]
    name = call.function
    if call.user_function is not None:
        from runtime.udfs import aggregate_column

        return aggregate_column(call, call.user_function, args, [input_types[a] for a in call.args])
    spark_type = T.spark_sql_type(call.type)
    if name == "COUNT":
        if not args:
            return F.count(F.lit(1))
        if call.distinct:
            return F.count_distinct(*args)
        if len(args) == 1:
            return F.count(args[0])
        cond = F.lit(True)
        for a in args:
            cond = cond & a.isNotNull()
        return F.count(F.when(cond, F.lit(1)))
    arg = args[0]
    if exact_sum_applies(call, input_types, exact_sums):
        # The same doubles whatever the partitioning, over the helper
        # columns ``aggregate`` added (exact_sum).
        if name == "AVG":
            return exact_double_avg(f"__x{call.args[0]}")
        total = exact_double_sum(f"__x{call.args[0]}")
        return F.coalesce(total.cast(spark_type), F.lit(0).cast(spark_type))
    if name == "SUM":
        # GeaFlow's SUM starts from 0: a group whose values are all null sums to 0.
        total = F.sum_distinct(arg) if call.distinct else F.sum(arg)
        return F.coalesce(total.cast(spark_type), F.lit(0).cast(spark_type))
    if name == "AVG":
        if call.distinct:
            return F.expr(f"avg(DISTINCT CAST(c{call.args[0]} AS DOUBLE))")
        return F.avg(arg.cast("double"))
    if name == "MIN":
        return F.min(arg)
    if name == "MAX":
        return F.max(arg)
    if name == "STDDEV_SAMP":
        # GeaFlow's StdDevSamp UDAF: sqrt((sum(x^2) - sum(x)^2 / n) / n), and 0.0
        # when the group has no values.  The same formula gives the same doubles.
        x = arg.cast("double")
        n = F.count(x)
        value = F.sqrt((F.sum(x * x) - F.pow(F.sum(x), 2) / n) / n)
        return F.when(n == 0, F.lit(0.0)).otherwise(value)
    if name == "STDDEV_POP":
        return F.stddev_pop(arg.cast("double"))
    if name == "VAR_SAMP":
        return F.var_samp(arg.cast("double"))
    if name == "VAR_POP":
        return F.var_pop(arg.cast("double"))
    if name == "PERCENTILE":
        # GeaFlow uses Commons Math's StatUtils.percentile: p is a percentage in
        # (0, 100] and positions interpolate as p * (n + 1) / 100.
        p = float(call.constants[0]) if call.constants else 50.0
        pos = f"({p!r} * (size(a) + 1) / 100.0)"
        return F.expr(
            f"transform(array(array_sort(collect_list(CAST(c{call.args[0]} AS DOUBLE)))), a -> "
            f"CASE WHEN size(a) = 0 THEN CAST(NULL AS DOUBLE) "
            f"WHEN {pos} < 1 THEN a[0] "
            f"WHEN {pos} >= size(a) THEN a[size(a) - 1] "
            f"ELSE a[CAST(floor({pos}) AS INT) - 1] + ({pos} - floor({pos})) * "
            f"(a[CAST(floor({pos}) AS INT)] - a[CAST(floor({pos}) AS INT) - 1]) END)[0]"
        )
    if name == "FIRST_VALUE":
        return F.first(arg)
    if name == "LAST_VALUE":
        return F.last(arg)
    if name == "COLLECT_LIST":
        return F.collect_list(arg)
    if name == "COLLECT_SET":
        return F.collect_set(arg)
    if name in ("BIT_AND", "BIT_OR", "BOOL_AND", "BOOL_OR"):
        return getattr(F, name.lower())(arg)
    raise UnsupportedError(f"aggregate {name} is not supported")


def aggregate(env: Env, node: Aggregate, inputs: list[Any]) -> Any:
    from pyspark.sql import functions as F

    df = inputs[0]
    in_types = [f.type for f in node.input.schema]
    keys = [F.col(f"c{g}") for g in node.group]
    k = len(keys)
    if not node.calls:
        if not keys:
            return df.limit(1).select()
        return df.select(
            *[F.col(f"c{g}").alias(f"c{i}") for i, g in enumerate(node.group)]
        ).distinct()
    exact_sums = env.ctx.config.get_bool(EXACT_DOUBLE_SUM)
    exact = sorted({c.args[0] for c in node.calls if exact_sum_applies(c, in_types, exact_sums)})
    if exact:
        # What an exact sum of doubles adds up, computed once a row.
        steps = [helper_columns(f"CAST(c{a} AS DOUBLE)", f"__x{a}") for a in exact]
        for n in range(len(steps[0])):
            df = df.selectExpr("*", *[item for s in steps for item in s[n]])
    aggs = [
        aggregate_expression(c, in_types, exact_sums).alias(f"__a{i}")
        for i, c in enumerate(node.calls)
    ]
    # Spark cannot mix pandas (user) aggregates with built-in ones in one
    # aggregation: compute each kind separately and join them on the keys.
    user = [a for a, c in zip(aggs, node.calls, strict=True) if c.user_function is not None]
    builtin = [a for a, c in zip(aggs, node.calls, strict=True) if c.user_function is None]
    if keys:
        key_cols = [kc.alias(f"__k{i}") for i, kc in enumerate(keys)]
        parts = [df.groupBy(*key_cols).agg(*group) for group in (builtin, user) if group]
        grouped = parts[0]
        for other in parts[1:]:
            renamed = other.toDF(*[f"__r{c}" if c.startswith("__k") else c for c in other.columns])
            cond = F.lit(True)
            for i in range(k):
                cond = cond & F.col(f"__k{i}").eqNullSafe(F.col(f"__r__k{i}"))
            grouped = grouped.join(renamed, cond, "inner")
    else:
        grouped = _global_aggregate(df, node, builtin, user)
    cols = [F.col(f"__k{i}").alias(f"c{i}") for i in range(k)]
    cols += [
        F.col(f"__a{i}").cast(T.spark_sql_type(c.type)).alias(f"c{k + i}")
        if not isinstance(c.type, (T.StructType, T.ArrayType, T.MapType))
        else F.col(f"__a{i}").alias(f"c{k + i}")
        for i, c in enumerate(node.calls)
    ]
    return grouped.select(*cols)


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
