"""``type='random'``: a source of random rows (GeaFlow's random table).

Read whole, it yields ``geaflow.dsl.random.source.tuples.per.second`` rows
(1 by default); read in windows of n rows, each window has n rows, for at most
``geaflow.dsl.random.source.max.batch`` windows (3 by default).  Values follow GeaFlow's
generator: integers below 100, bigints below 1,000,000, doubles below
1,000,000, strings ``<column>_<number>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import Config

from .base import Connector, ReadRequest, register_connector

RATE = "geaflow.dsl.random.source.tuples.per.second"
MAX_BATCH = "geaflow.dsl.random.source.max.batch"


def _column(F: Any, name: str, t: Any, seed_col: Any) -> Any:
    r = F.rand()
    if t.name == "BOOLEAN":
        return r < 0.5
    if t.name in ("TINYINT", "SMALLINT", "INTEGER"):
        bound = {"TINYINT": 128, "SMALLINT": 32768, "INTEGER": 100}[t.name]
        return F.floor(r * bound).cast(T.spark_sql_type(t))
    if t.name == "BIGINT":
        return F.floor(r * 1_000_000).cast("bigint")
    if t.name in ("FLOAT", "DOUBLE"):
        return (r * (100.0 if t.name == "FLOAT" else 1_000_000.0)).cast(T.spark_sql_type(t))
    if t.is_string:
        return F.concat(F.lit(f"{name}_"), F.floor(r * 1_000_000).cast("bigint").cast("string"))
    return F.lit(None).cast(T.spark_sql_type(t))


class RandomConnector(Connector):
    name = "random"
    supports_windows = True

    def _rows(self, ctx: Any, req: ReadRequest, n: int) -> Any:
        from pyspark.sql import functions as F

        base = ctx.spark.range(n)
        cols = []
        for out_idx, col_idx in enumerate(req.projection):
            column = req.table.columns[col_idx]
            cols.append(_column(F, column.name, column.type, F.col("id")).alias(f"c{out_idx}"))
        return base.select(*cols)

    def read(self, ctx: Any, req: ReadRequest) -> Any:
        rate = Config(req.options).get_float(RATE, 1.0)
        return self._rows(ctx, req, max(0, int(rate)))

    def read_windows(self, ctx: Any, req: ReadRequest, window_size: int) -> Iterator[Any]:
        batches = Config(req.options).get_int(MAX_BATCH, 3)
        for _ in range(batches):
            yield self._rows(ctx, req, window_size)


register_connector(RandomConnector(), "random")
