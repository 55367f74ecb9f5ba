"""``type='random'``: a source of random rows (GeaFlow's random table).

Read whole, it yields ``geaflow.dsl.random.source.tuples.per.second`` rows
(1 by default); read in windows of n rows, each window has n rows, for at most
``geaflow.dsl.random.source.max.batch`` windows (3 by default).  Values follow GeaFlow's
generator: integers below 100, bigints below 1,000,000, doubles below
1,000,000, strings ``<column>_<number>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import Config
from runtime.context import RuntimeContext

from .base import Connector, ReadRequest, WindowSource, window_size_of

RATE = "geaflow.dsl.random.source.tuples.per.second"
MAX_BATCH = "geaflow.dsl.random.source.max.batch"


def _column(F: Any, name: str, t: Any) -> Any:
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

    def rows(self, ctx: RuntimeContext, req: ReadRequest, n: int) -> Any:
        from pyspark.sql import functions as F

        base = ctx.spark.range(n)
        cols = []
        for out_idx, col_idx in enumerate(req.projection):
            column = req.table.columns[col_idx]
            cols.append(_column(F, column.name, column.type).alias(f"c{out_idx}"))
        return base.select(*cols)

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        rate = Config(req.options).get_float(RATE, 1.0)
        return self.rows(ctx, req, max(0, int(rate)))

    def window_source(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], log_dir: Path | None
    ) -> WindowSource:
        return RandomSource(ctx, table, options, window_size_of(table, options), self)


class RandomSource(WindowSource):
    """GeaFlow's random table in windows: ``max.batch`` windows of ``size`` rows."""

    def __init__(
        self,
        ctx: RuntimeContext,
        table: TableInfo,
        options: dict[str, Any],
        size: int,
        connector: RandomConnector,
    ) -> None:
        super().__init__(ctx, table, options, size)
        self.connector = connector

    def prepare(self) -> None:
        self.batches = Config(self.options).get_int(MAX_BATCH, 3)
        self.produced: list[Any] = []

    def has_window(self, i: int) -> bool:
        return i < self.batches

    def window(self, i: int) -> Any:
        req = ReadRequest(self.table, self.options, tuple(range(len(self.table.columns))))
        while len(self.produced) <= i:
            df = self.connector.rows(self.ctx, req, max(self.size, 0))
            self.produced.append(df.localCheckpoint(eager=True))
        return self.produced[i]

    def cumulative(self, i: int) -> Any:
        out = self.window(0)
        for k in range(1, i + 1):
            out = out.unionByName(self.window(k))
        return out
