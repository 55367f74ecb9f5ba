"""``type='spark'``: any Spark data source, options passed through.

    CREATE TABLE t (...) WITH (type='spark', format='parquet', path='/data/t')
    CREATE TABLE t (...) WITH (type='spark', format='jdbc', url='jdbc:...', dbtable='t')

Every option except ``type``, ``format`` and ``geaflow.*`` keys goes to Spark's
reader/writer, so any connector installed in Spark works.  Columns are matched
by name (case-insensitively) and cast to the declared types.
"""

from __future__ import annotations

from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import ConfigError

from .base import Connector, ReadRequest, register_connector


def spark_options(options: dict[str, Any]) -> dict[str, str]:
    return {
        k: str(v)
        for k, v in options.items()
        if k.lower() not in ("type", "format") and not k.lower().startswith("geaflow.")
    }


def select_columns(df: Any, table: TableInfo, projection: tuple[int, ...]) -> Any:
    from pyspark.sql import functions as F

    names = {c.lower(): c for c in df.columns}
    cols = []
    for out_idx, col_idx in enumerate(projection):
        column = table.columns[col_idx]
        src = names.get(column.name.lower())
        if src is None:
            raise ConfigError(
                f"table {table.name!r}: the source has no column {column.name!r} "
                f"(it has: {', '.join(df.columns)})"
            )
        cols.append(F.col(f"`{src}`").cast(T.spark_sql_type(column.type)).alias(f"c{out_idx}"))
    return df.select(*cols)


class SparkSourceConnector(Connector):
    name = "spark"

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        if not options.get("format"):
            raise ConfigError(f"table {table.name!r} of type 'spark' needs a format option")

    def read(self, ctx: Any, req: ReadRequest) -> Any:
        fmt = str(req.table.option("format"))
        opts = spark_options(dict(req.table.options))
        df = ctx.spark.read.format(fmt).options(**opts).load()
        return select_columns(df, req.table, req.projection)

    def write(
        self, ctx: Any, df: Any, table: TableInfo, options: dict[str, Any], types: list[Any]
    ) -> int:
        from pyspark.sql import functions as F

        fmt = str(table.option("format"))
        opts = spark_options(dict(table.options))
        out = df.select(
            *[
                F.col(f"c{i}").cast(T.spark_sql_type(c.type)).alias(c.name)
                for i, c in enumerate(table.columns)
            ]
        )
        out.write.format(fmt).options(**opts).mode(str(table.option("mode", "append"))).save()
        return -1


register_connector(SparkSourceConnector(), "spark")
