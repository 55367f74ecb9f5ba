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


# Bits of each integer type, for the wrap-around of a narrowing cast.
_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}
# Bytes Spark trims around a string it casts to a number (ASCII controls,
# space and DEL).
_TRIMMED = r"[\x00-\x20\x7f]"


def narrowing_cast(sql: str, source: Any, target: Any) -> str | None:
    """DuckDB SQL casting ``sql`` (of type ``source``) to an integer type
    ``target`` as Spark's non-ANSI CAST does, where the cast may lose values;
    None for casts the engine leaves to Spark.

    * From a string: surrounding ASCII controls and spaces are dropped; an
      optional sign, digits and an optional fraction (``5.``, ``.5``, ``.``
      are numbers: the digits before the point, or 0) are a number; anything
      else, or a number out of range, is NULL.
    * From a wider integer: the low bits, as Java's narrowing (wraps around).
    * From a float: NaN is 0; truncated toward zero, saturating at the
      bounds of INTEGER (BIGINT for a BIGINT); TINYINT and SMALLINT then
      take the low bits of that INTEGER.
    """
    if not (isinstance(target, T.SqlType) and target.name in INTEGERS):
        return None
    to = target.name
    kind = family(source)
    if kind == "string":
        trimmed = f"regexp_replace({sql}, '^{_TRIMMED}+|{_TRIMMED}+$', '', 'g')"
        digits = f"regexp_extract({trimmed}, '^[+-]?[0-9]*')"
        return (
            f"(CASE WHEN regexp_full_match({trimmed}, '[+-]?([0-9]+([.][0-9]*)?|[.][0-9]*)') "
            f"THEN TRY_CAST(CASE WHEN {digits} IN ('', '+', '-') THEN '0' ELSE {digits} END "
            f"AS {to}) END)"
        )
    if kind == "integer":
        return _wrapped(sql, to)
    if kind == "float":
        lo, hi = (-(2**63), 2**63 - 1) if to == "BIGINT" else (-(2**31), 2**31 - 1)
        saturated = (
            f"(CASE WHEN isnan({sql}) THEN 0 WHEN {sql} >= {hi} THEN {hi} "
            f"WHEN {sql} <= {lo} THEN {lo} ELSE CAST(trunc({sql}) AS BIGINT) END)"
        )
        if to in ("BIGINT", "INTEGER"):
            return f"CAST({saturated} AS {to})"
        return _wrapped(saturated, to)
    return None


def _wrapped(sql: str, to: str) -> str:
    """The low bits of an integer as a signed ``to`` (Java's narrowing)."""
    m, h = 2 ** _BITS[to], 2 ** (_BITS[to] - 1)
    return f"CAST(((CAST({sql} AS HUGEINT) + {h}) % {m} + {m}) % {m} - {h} AS {to})"
