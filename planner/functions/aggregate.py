"""Built-in aggregate functions and their result types (GeaFlow's rules).

GeaFlow's AVG always returns DOUBLE; SUM keeps an integer type integral; COUNT
is BIGINT; STDDEV_SAMP is GeaFlow's UDAF, which divides by n and gives 0.0 for
a group without values.  The runtime maps each name to a Spark aggregate in
``runtime.operators.relational``.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T

from .specs import AggregateSpec, register_aggregate


def _sum_type(args: list[Any]) -> Any:
    t = args[0]
    if t.is_integer:
        return T.BIGINT if t.name == "BIGINT" else t
    if t.name == "DECIMAL":
        return t
    return T.DOUBLE


def _same(args: list[Any]) -> Any:
    return args[0] if args[0].name != "NULL" else T.VARCHAR


register_aggregate(AggregateSpec("COUNT", 0, None, lambda a: T.BIGINT, data_args=-1))
register_aggregate(AggregateSpec("SUM", 1, 1, _sum_type))
register_aggregate(AggregateSpec("AVG", 1, 1, lambda a: T.DOUBLE))
register_aggregate(AggregateSpec("MIN", 1, 1, _same))
register_aggregate(AggregateSpec("MAX", 1, 1, _same))
register_aggregate(AggregateSpec("STDDEV_SAMP", 1, 1, lambda a: T.DOUBLE), "STDDEV")
register_aggregate(AggregateSpec("STDDEV_POP", 1, 1, lambda a: T.DOUBLE))
register_aggregate(AggregateSpec("VAR_SAMP", 1, 1, lambda a: T.DOUBLE), "VARIANCE")
register_aggregate(AggregateSpec("VAR_POP", 1, 1, lambda a: T.DOUBLE))
register_aggregate(AggregateSpec("PERCENTILE", 2, 2, lambda a: T.DOUBLE, data_args=1))
register_aggregate(AggregateSpec("FIRST_VALUE", 1, 1, _same))
register_aggregate(AggregateSpec("LAST_VALUE", 1, 1, _same))
register_aggregate(AggregateSpec("COLLECT_LIST", 1, 1, lambda a: T.ArrayType(a[0])))
register_aggregate(AggregateSpec("COLLECT_SET", 1, 1, lambda a: T.ArrayType(a[0])))
# GeaFlow's newer UDAFs: nulls are skipped, an all-null group gives null.
register_aggregate(AggregateSpec("BIT_AND", 1, 1, _same))
register_aggregate(AggregateSpec("BIT_OR", 1, 1, _same))
register_aggregate(AggregateSpec("BOOL_AND", 1, 1, lambda a: T.BOOLEAN), "EVERY")
register_aggregate(AggregateSpec("BOOL_OR", 1, 1, lambda a: T.BOOLEAN), "SOME")
