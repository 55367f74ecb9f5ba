"""Shared pieces of the built-in function tables: type rules and tiny builders.

A *type rule* maps the argument types to the result type.  A *builder* maps the
bound argument expressions (and their types) to the Spark-side sqlglot tree.
Builders stay small: most are one ``template`` of Spark SQL with ``{0}``,
``{1}``... for the arguments (written without literal braces).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T

from .specs import ScalarSpec, register_scalar

TypeRule = Callable[[list[Any]], Any]
Builder = Callable[[list[exp.Expression], list[Any]], exp.Expression]

# ---------------------------------------------------------------------------
# Type rules
# ---------------------------------------------------------------------------


def fixed(t: Any) -> TypeRule:
    return lambda args: t


def same_as(i: int) -> TypeRule:
    def rule(args: list[Any]) -> Any:
        t = args[i] if i < len(args) else T.ANY
        return T.INTEGER if t.name == "NULL" else t

    return rule


def numeric_result(args: list[Any]) -> Any:
    t = args[0] if args else T.DOUBLE
    return t if t.is_numeric else T.DOUBLE


def widest(args: list[Any]) -> Any:
    out = T.NULL
    for a in args:
        c = T.common_type(out, a)
        out = c if c is not None else out
    return T.VARCHAR if out.name == "NULL" else out


def array_of_first(args: list[Any]) -> Any:
    t = args[0] if args else T.ANY
    return t if isinstance(t, T.ArrayType) else T.ArrayType(T.VARCHAR)


def element_of_first(args: list[Any]) -> Any:
    t = args[0] if args else T.ANY
    return t.element if isinstance(t, T.ArrayType) else T.VARCHAR


# Argument coercions: the target type of each argument (None = keep as is).


def all_double(args: list[Any]) -> list[Any]:
    return [T.DOUBLE for _ in args]


def all_string(args: list[Any]) -> list[Any]:
    return [T.VARCHAR for _ in args]


def string_then_ints(args: list[Any]) -> list[Any]:
    return [T.VARCHAR] + [T.INTEGER for _ in args[1:]]


def strings_then_ints(n_strings: int) -> Callable[[list[Any]], list[Any]]:
    def rule(args: list[Any]) -> list[Any]:
        return [T.VARCHAR if i < n_strings else T.INTEGER for i in range(len(args))]

    return rule


def strings_then_bigints(n_strings: int) -> Callable[[list[Any]], list[Any]]:
    def rule(args: list[Any]) -> list[Any]:
        return [T.VARCHAR if i < n_strings else T.BIGINT for i in range(len(args))]

    return rule


def keep_dates_else_string(args: list[Any]) -> list[Any]:
    """Date functions take text; TIMESTAMP and DATE values are used as they are."""
    return [None if a.name in ("TIMESTAMP", "DATE") else T.VARCHAR for a in args[:1]] + [
        None for _ in args[1:]
    ]


# ---------------------------------------------------------------------------
# Expression helpers
# ---------------------------------------------------------------------------


def anon(name: str, args: list[exp.Expression]) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=args)


def num(value: Any) -> exp.Expression:
    return exp.Literal.number(value)


def string(value: str) -> exp.Expression:
    return exp.Literal.string(value)


def cast(e: exp.Expression, spark_type: str) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build(spark_type, dialect="spark"))


def call(spark_name: str) -> Builder:
    """A builder that calls one Spark function with the arguments unchanged."""
    return lambda args, types: anon(spark_name, args)


def const_string(e: exp.Expression) -> str | None:
    """The value of a string literal argument (after casts), else None."""
    node = e
    while isinstance(node, (exp.Cast, exp.Paren)):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_string:
        return str(node.this)
    return None


def scalar(
    name: str,
    n_min: int,
    n_max: int | None,
    result: TypeRule,
    spark: str | Builder,
    *aliases: str,
    arg_types: Callable[[list[Any]], list[Any]] | None = None,
    doc: str = "",
) -> None:
    """Register one built-in scalar function (the rows of the tables are calls to this)."""
    register_scalar(ScalarSpec(name, n_min, n_max, result, spark, arg_types, doc), *aliases)
