"""Built-in condition, null-handling, JSON and array functions.

``IF(c, a, b)`` is GeaFlow's ``If`` UDF: a null condition takes the false
branch, as Spark's ``if`` does.  ``CASE`` is syntax (see the binder).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T

from .helpers import array_of_first, cast, element_of_first, fixed, scalar, string, widest


def _if(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    return exp.If(this=args[0], true=args[1], false=args[2])


def _is_decimal(args: list[exp.Expression], types: list[Any]) -> exp.Expression:
    # True when the text is an optionally signed decimal number.
    return exp.RegexpLike(
        this=cast(args[0], "STRING"),
        expression=string(r"^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*$"),
    )


def _branches(args: list[Any]) -> list[Any | None]:
    """IF's branches meet at their common type (the condition is left alone)."""
    common = widest(args[1:])
    return [None, common, common]


def _all_common(args: list[Any]) -> list[Any | None]:
    common = widest(args)
    return [common for _ in args]


scalar("if", 3, 3, lambda a: widest(a[1:]), _if, arg_types=_branches)
scalar("coalesce", 1, None, widest, "coalesce", arg_types=_all_common)
scalar("nvl", 2, 2, widest, "nvl", "ifnull", arg_types=_all_common)
scalar("nullif", 2, 2, lambda a: widest(a[:1]), "nullif", arg_types=_all_common)
scalar("is_decimal", 1, 1, fixed(T.BOOLEAN), _is_decimal)

# Arrays (GeaFlow's udf.table.array and Calcite's CARDINALITY / ELEMENT).
scalar("array_contains", 2, 2, fixed(T.BOOLEAN), "array_contains")
scalar("array_append", 2, 2, array_of_first, "array_append")
scalar("array_distinct", 1, 1, array_of_first, "array_distinct")
scalar("array_union", 2, 2, array_of_first, "array_union")
scalar("array_max", 1, 1, element_of_first, "array_max")
scalar("array_min", 1, 1, element_of_first, "array_min")
scalar("array_reverse", 1, 1, array_of_first, "reverse")
scalar("cardinality", 1, 1, fixed(T.INTEGER), "array_size")  # null for null (size gives -1)
