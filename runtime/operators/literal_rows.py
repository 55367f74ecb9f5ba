"""A VALUES table of constants as Python rows, to hand to Spark in one batch.

Built as expressions, every value of every row is a Spark column made over
py4j and parsed by Spark, and a 60,000-row INSERT ... VALUES took minutes.
Rows whose values are all plain constants of the column's type (numbers,
strings, booleans, NULL, also under a cast between numeric types) become
Python tuples instead, and Spark receives them as one local relation.
Anything else (a function call, a date literal, a cast to text) keeps the
expression path, so the answers are the same either way.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from geaflow_sql.core import types as T
from planner.expressions import numeric_value
from planner.logical import Values

_INTEGERS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
_NOT_A_CONSTANT = object()


def python_rows(node: Values) -> list[tuple[Any, ...]] | None:
    """The rows as Python values of the fields' types, or None when a value is
    not such a constant."""
    types = [f.type for f in node.fields_]
    out = []
    for row in node.rows:
        values = tuple(_value(e, t) for e, t in zip(row, types, strict=True))
        if any(v is _NOT_A_CONSTANT for v in values):
            return None
        out.append(values)
    return out


def _value(e: exp.Expression, t: Any) -> Any:
    while isinstance(e, (exp.Paren, exp.Cast)) and isinstance(e.this, (exp.Null, exp.Paren)):
        e = e.this  # NULL, or a cast NULL
    if isinstance(e, exp.Null):
        return None
    number = _number(e)
    if t.name in _INTEGERS:
        bits = _INTEGERS[t.name]
        if isinstance(number, int) and -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
            return number
        return _NOT_A_CONSTANT
    if t.name == "DOUBLE":
        return float(number) if number is not None else _NOT_A_CONSTANT
    if t.name == "BOOLEAN" and isinstance(e, exp.Boolean):
        return bool(e.this)
    if t.name == "VARCHAR" and isinstance(e, exp.Literal) and e.is_string:
        return str(e.this)
    return _NOT_A_CONSTANT


def _number(e: exp.Expression) -> int | float | None:
    """The value of a numeric literal, negated, parenthesised or cast between
    numeric types (an integer stays an int, anything with a fraction a float)."""
    if isinstance(e, exp.Paren):
        return _number(e.this)
    if isinstance(e, exp.Neg):
        inner = _number(e.this)
        return None if inner is None else -inner
    if isinstance(e, exp.Cast):
        inner = _number(e.this)
        target = e.to.this
        if inner is None:
            return None
        if target in (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT):
            return float(inner)
        if target in (
            exp.DataType.Type.BIGINT,
            exp.DataType.Type.INT,
            exp.DataType.Type.SMALLINT,
            exp.DataType.Type.TINYINT,
        ):
            return inner if isinstance(inner, int) else None  # (a fraction would truncate)
        return None
    return numeric_value(e)


def spark_schema(node: Values) -> Any:
    from pyspark.sql import types as st

    return st.StructType(
        [st.StructField(f"c{i}", T.to_spark_type(f.type), True) for i, f in enumerate(node.fields_)]
    )
