"""Python user functions on Spark: scalar (row or pandas), aggregate, table.

The binder registers each user scalar function here; before a plan runs the
runtime registers them with the SparkSession under their unique names, so the
generated Spark SQL can call them.  Aggregates run as grouped pandas UDFs
(init/accumulate/merge/get_result over each group's rows); table functions run
per Arrow batch with ``mapInPandas``.
"""

from __future__ import annotations

import threading
from typing import Any

from geaflow_sql import types as T

_lock = threading.Lock()
# spark name -> (UserFunction, result type)
_SCALARS: dict[str, tuple[Any, Any]] = {}
# (spark session id, spark name) already registered
_REGISTERED: set[tuple[int, str]] = set()


def register_scalar_udf(fn: Any, result_type: Any) -> None:
    with _lock:
        _SCALARS[fn.spark_name] = (fn, result_type)


def ensure_registered(spark: Any, names: set[str]) -> None:
    """Register the user scalar functions a plan calls with this SparkSession."""
    from pyspark.sql.functions import pandas_udf, udf

    for name in names:
        entry = _SCALARS.get(name)
        if entry is None:
            continue
        key = (id(spark), name)
        if key in _REGISTERED:
            continue
        fn, result = entry
        spark_type = T.to_spark_type(result)
        instance = fn.instance
        if getattr(instance, "vectorized", False):
            def run_vec(*cols: Any, _i: Any = instance) -> Any:
                return _i.eval(*cols)

            spark.udf.register(name, pandas_udf(run_vec, spark_type))  # type: ignore[call-overload]
        else:
            def run(*args: Any, _i: Any = instance) -> Any:
                return _i.eval(*args)

            spark.udf.register(name, udf(run, spark_type))
        _REGISTERED.add(key)


def aggregate_column(call: Any, fn: Any, arg_cols: list[Any]) -> Any:
    """A grouped-aggregate pandas UDF applying a user AggregateFunction to each group."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    instance = fn.instance
    spark_type = T.to_spark_type(call.type)
    n_args = len(arg_cols)

    def agg(*series: Any) -> Any:
        acc = instance.init()
        columns = [s.tolist() for s in series[:n_args]] if n_args else []
        rows = zip(*columns, strict=True) if columns else ([()] * len(series[0]))
        for row in rows:
            result = instance.accumulate(acc, *row)
            acc = acc if result is None else result
        return instance.get_result(acc)

    # Spark picks the grouped-aggregate kind from "Series... -> scalar" type hints.
    cols = arg_cols or [F.lit(1)]
    return pandas_udf(spark_type)(_with_series_hints(agg, len(cols)))(*cols)  # type: ignore[call-overload]


def _with_series_hints(fn: Any, n: int) -> Any:
    import pandas as pd

    params = ", ".join(f"a{i}: pd.Series" for i in range(n))
    args = ", ".join(f"a{i}" for i in range(n))
    namespace: dict[str, Any] = {"pd": pd, "fn": fn, "Any": Any}
    exec(f"def agg({params}) -> Any:\n    return fn({args})\n", namespace)  # noqa: S102 - fixed template
    return namespace["agg"]


def table_function_batches(instance: Any, n_input: int, n_args: int, n_out: int) -> Any:
    """A mapInPandas function: input columns + args -> input columns + function outputs."""
    import pandas as pd

    def run(batches: Any) -> Any:
        for pdf in batches:
            rows_out = []
            values = pdf.values.tolist()
            for row in values:
                inputs = row[:n_input]
                args = row[n_input : n_input + n_args]
                for produced in instance.eval(*args) or ():
                    out = list(produced) if isinstance(produced, (tuple, list)) else [produced]
                    out = (out + [None] * n_out)[:n_out]
                    rows_out.append(inputs + out)
            cols = [f"c{i}" for i in range(n_input + n_out)]
            yield pd.DataFrame(rows_out, columns=cols)

    return run
