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


def column(e: exp.Expression) -> Any:
    from pyspark.sql import functions as F

    return F.expr(spark_sql(e))
