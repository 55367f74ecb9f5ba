"""``type='console'``: a sink that prints each row (GeaFlow's console table)."""

from __future__ import annotations

import sys
from typing import Any

from runtime.context import RuntimeContext

from .base import Connector, WriteRequest
from .file import collect_lines, option
from .text_format import line_sql


class ConsoleConnector(Connector):
    name = "console"

    def write(self, ctx: RuntimeContext, df: Any, req: WriteRequest) -> int:
        options, types = req.options, req.types
        sep = str(option(options, "geaflow.dsl.column.separator", ","))
        lines = collect_lines(df.selectExpr(f"{line_sql(types, sep)} AS line"))
        if not option(options, "geaflow.dsl.console.quiet", False):
            for line in lines:
                print(line, file=sys.stdout)
        return len(lines)
