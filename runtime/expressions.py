"""Bound plan expressions -> Spark Columns (through the GeaFlow sqlglot dialect)."""

from __future__ import annotations

import functools
from typing import Any

from sqlglot import exp

from planner.dialect import to_spark_sql


@functools.lru_cache(maxsize=4096)
def _sql(e: exp.Expression) -> str:
    return to_spark_sql(e)


def spark_sql(e: exp.Expression) -> str:
    try:
        return _sql(e)
    except TypeError:  # unhashable expression payloads
        return to_spark_sql(e)


def spark_ident(name: str) -> str:
    """A column name as Spark SQL text (quoted)."""
    return "`" + name.replace("`", "``") + "`"


def cast_column(source: str | None, spark_type: str) -> str:
    """SQL text of column ``source`` (NULL for none) cast to ``spark_type``."""
    value = spark_ident(source) if source is not None else "NULL"
    return f"CAST({value} AS {spark_type})"


def cast_as(source: str | None, spark_type: str, name: str) -> str:
    """``cast_column`` named ``name``: a projection item as ``selectExpr``
    takes it (a py4j round trip per item, where a Column, its cast and its
    alias cost three)."""
    return f"{cast_column(source, spark_type)} AS {spark_ident(name)}"


def column(e: exp.Expression) -> Any:
    from pyspark.sql import functions as F

    return F.expr(spark_sql(e))
