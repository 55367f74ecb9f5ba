"""Python user functions on Spark: scalar (row or pandas), aggregate, table.

A bound statement lists the user scalar functions it calls
(``planner.user_functions.ScalarUdf``, each with a Spark name unique to the
class, the number of arguments and the result type); before its plan runs
they are registered with the SparkSession, so the generated Spark SQL can
call them.  Aggregates run as grouped-aggregate pandas UDFs (the
rows of a group are folded with ``accumulate`` in chunks whose accumulators
are combined with ``merge``, as GeaFlow combines partial accumulators); table
functions run per Arrow batch with ``mapInArrow``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from geaflow_sql.core import types as T

# Spark names already registered, per SparkSession.
_REGISTERED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
# Rows folded into one accumulator before it is merged into the group's.
MERGE_CHUNK_ROWS = 4096


def ensure_registered(spark: Any, udfs: Iterable[Any]) -> None:
    """Register the user scalar functions a statement calls with this SparkSession."""
    from pyspark.sql.functions import pandas_udf, udf

    done = _REGISTERED.setdefault(spark, set())
    for scalar in udfs:
        name = scalar.spark_name
        if name in done:
            continue
        spark_type = T.to_spark_type(scalar.result)
        instance = scalar.function.instance
        if getattr(instance, "vectorized", False):
            # Spark picks the pandas UDF kind from "Series, ... -> Series" type hints.
            vec = _with_series_hints(instance.eval, scalar.n_args, "pd.Series")
            spark.udf.register(name, pandas_udf(vec, spark_type))  # type: ignore[call-overload]
        else:

            def run(*args: Any, _i: Any = instance) -> Any:
                return _i.eval(*args)

            spark.udf.register(name, udf(run, spark_type))
        done.add(name)


def user_modules(catalog: Any) -> list[str]:
    """The Python modules of the catalog's user functions (CREATE FUNCTION of
    a Python class): what executors must import to run them."""
    out: list[str] = []
    for info in catalog.functions.values():
        instance = getattr(info.implementation, "instance", None)
        if instance is None:
            continue
        module = (
            type(instance).__module__ if not isinstance(instance, type) else instance.__module__
        )
        if module not in out:
            out.append(module)
    return out


def _plain(value: Any, integral: bool) -> Any:
    """A pandas value as the Python value a user function expects (NaN -> None)."""
    import pandas as pd

    if value is None or (not isinstance(value, (list, dict)) and pd.isna(value)):
        return None
    if integral and isinstance(value, float):
        return int(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def aggregate_column(
    call: Any, fn: Any, arg_cols: list[Any], arg_types: list[Any] | None = None
) -> Any:
    """A grouped-aggregate pandas UDF applying a user AggregateFunction to each group."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    instance = fn.instance
    spark_type = T.to_spark_type(call.type)
    n_args = len(arg_cols)
    integral = [bool(t is not None and t.is_integer) for t in (arg_types or [None] * n_args)]

    def agg(*series: Any) -> Any:
        columns = [
            [_plain(v, integral[i]) for v in s.tolist()] for i, s in enumerate(series[:n_args])
        ]
        n_rows = len(series[0]) if series else 0
        rows = list(zip(*columns, strict=True)) if columns else [()] * n_rows
        total = instance.init()
        for start in range(0, len(rows), MERGE_CHUNK_ROWS):
            acc = instance.init()
            for row in rows[start : start + MERGE_CHUNK_ROWS]:
                result = instance.accumulate(acc, *row)
                acc = acc if result is None else result
            merged = instance.merge(total, acc)
            total = total if merged is None else merged
        return instance.get_result(total)

    cols = arg_cols or [F.lit(1)]
    return pandas_udf(spark_type)(_with_series_hints(agg, len(cols), "Any"))(*cols)  # type: ignore[call-overload]


def empty_result(fn: Any) -> Any:
    """What a user aggregate returns for no rows at all (a global aggregate of nothing)."""
    instance = fn.instance
    return instance.get_result(instance.init())


def _with_series_hints(fn: Callable[..., Any], n: int, returns: str) -> Any:
    import pandas as pd

    params = ", ".join(f"a{i}: pd.Series" for i in range(n))
    args = ", ".join(f"a{i}" for i in range(n))
    namespace: dict[str, Any] = {"pd": pd, "fn": fn, "Any": Any}
    exec(f"def udf({params}) -> {returns}:\n    return fn({args})\n", namespace)  # noqa: S102 - fixed template
    return namespace["udf"]


def table_function_batches(
    instance: Any, n_input: int, n_args: int, n_out: int, schema: Any
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A mapInArrow function: input columns + args -> input columns + function outputs.

    Arrow keeps each value's type and nulls (no NaN for a missing integer), so
    the user function sees the same Python values a row UDF would.
    """
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    out_schema = to_arrow_schema(schema)
    names = [f"c{i}" for i in range(n_input + n_out)]

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            columns = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
            out: list[list[Any]] = [[] for _ in names]
            for row in zip(*columns, strict=True):
                inputs = row[:n_input]
                args = row[n_input : n_input + n_args]
                for produced in instance.eval(*args) or ():
                    values = list(produced) if isinstance(produced, (tuple, list)) else [produced]
                    values = (values + [None] * n_out)[:n_out]
                    for i, v in enumerate((*inputs, *values)):
                        out[i].append(v)
            yield pa.RecordBatch.from_arrays(
                [pa.array(col, type=out_schema.field(i).type) for i, col in enumerate(out)],
                schema=out_schema,
            )

    return run
