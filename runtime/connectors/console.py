"""``type='console'``: a sink that prints each row (GeaFlow's console table)."""

from __future__ import annotations

import sys
from typing import Any

from geaflow_sql.core.catalog import TableInfo

from .base import Connector
from .file import collect_lines, option
from .text_format import format_column


class ConsoleConnector(Connector):
    name = "console"

    def write(
        self,
        ctx: Any,
        df: Any,
        table: TableInfo,
        options: dict[str, Any],
        types: list[Any],
        *,
        windowed: bool = False,
    ) -> int:
        from pyspark.sql import functions as F

        sep = str(option(options, "geaflow.dsl.column.separator", ","))
        cols = [format_column(F, F.col(f"c{i}"), t) for i, t in enumerate(types)]
        lines = collect_lines(df.select(F.concat_ws(sep, *cols).alias("line")))
        if not option(options, "geaflow.dsl.console.quiet", False):
            for line in lines:
                print(line, file=sys.stdout)
        return len(lines)
