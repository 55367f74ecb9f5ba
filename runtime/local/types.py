"""What the local engine keeps of GeaFlow's types, and when it gives up."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T


def arrow_type(t: Any) -> Any:
    """The Arrow type of a GeaFlow type (as Spark's Arrow transfer makes it)."""
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(T.to_spark_type(t))


class NotLocal(Exception):
    """The plan has something the local engine does not run the same way."""


# GeaFlow type name -> DuckDB type, for the types the local engine keeps.
DUCK_TYPES = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INTEGER": "INTEGER",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "VARCHAR",
}
INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")
FLOATS = ("FLOAT", "DOUBLE")


def family(t: Any) -> str:
    """number | string | boolean | null of a scalar type the engine keeps."""
    if isinstance(t, T.SqlType):
        if t.name in INTEGERS:
            return "integer"
        if t.name in FLOATS:
            return "float"
        if t.name == "VARCHAR":
            return "string"
        if t.name == "BOOLEAN":
            return "boolean"
        if t.name == "NULL":
            return "null"
    raise NotLocal(f"type {t}")


def duck_type(t: Any) -> str:
    if isinstance(t, T.SqlType) and t.name in DUCK_TYPES:
        return DUCK_TYPES[t.name]
    raise NotLocal(f"type {t}")


def widens(source: Any, target: Any) -> bool:
    """Does a cast from ``source`` to ``target`` keep every value (both engines alike)?"""
    if source == target:
        return True
    s, t = family(source), family(target)
    if s == "integer" and t == "integer":
        return INTEGERS.index(source.name) <= INTEGERS.index(target.name)
    if s == "float" and t == "float":
        return source.name == "FLOAT" or target.name == "DOUBLE"
    # An integer as a double is exact below 2^53 in both engines' conversion.
    return s == "integer" and target.name == "DOUBLE"
