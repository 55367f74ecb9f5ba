"""Connectors of streams (sockets, Kafka): tables read only window by window,
as text lines that are kept once read, so any window can be read again."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import UnsupportedError
from runtime.context import RuntimeContext
from runtime.held import from_rows

from .base import Connector, ReadRequest, WindowSource
from .file import lines_frame, parse_windows, skips_bad_rows


class StreamConnector(Connector):
    """A connector whose tables are streams: never read whole."""

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        raise UnsupportedError(f"{self.name} tables are read as streams, in windows")

    def reads_in_windows(self, table: TableInfo, options: dict[str, Any]) -> bool:
        return True


class LineWindows(WindowSource):
    """A stream's windows of text lines, each read once by ``_fill`` (which
    appends to ``windows``) and parsed as a text file's lines are.

    While the windows' text is small (``geaflow.dsl.query.local.max.bytes``
    over every window so far), each window's lines are parsed once, by one
    Spark job, when a statement first reads the window (``hold``), and its
    rows stay on the driver: the local engine runs the window's statements
    over them, and a statement left to Spark reads them as local rows
    rather than parsing the lines again."""

    def __init__(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], size: int
    ) -> None:
        super().__init__(ctx, table, options, size)
        self.windows: list[list[str]] = []
        # Per window, its parsed rows (Arrow) while they are held on the driver.
        self.parsed: list[Any] = []
        self.schema: Any = None  # the parsed rows' Spark schema
        self.holding = not skips_bad_rows(options)
        self.text_bytes = 0

    def _fill(self, i: int) -> None:
        """Read windows until window ``i`` is there or the stream has ended."""
        raise NotImplementedError

    def source_name(self) -> str:
        """What the lines are called in a bad row's error."""
        raise NotImplementedError

    def has_window(self, i: int) -> bool:
        self._fill(i)
        return i < len(self.windows)

    def _frame(self, lines: list[str]) -> Any:
        return lines_frame(self.ctx, self.table, self.options, self.source_name(), lines)

    def hold(self, i: int) -> None:
        """Hold the rows of windows up to ``i`` on the driver, parsing those
        not yet held (one Spark job; after a restart, every window before
        too), unless their text is over the limit; a bad line fails here as
        the statement's read would.  (With bad rows skipped, each statement
        counts its own: nothing is held.)"""
        self._fill(i)
        missing = self.windows[len(self.parsed) : i + 1]
        if not self.holding or not missing:
            return
        self.text_bytes += sum(len(ln) + 1 for lines in missing for ln in lines)
        if self.text_bytes > self.ctx.local_bytes:
            # Too much text for the driver: these windows and later ones are
            # parsed on Spark; what was held goes.
            self.holding = False
            self.parsed.clear()
            return
        if self.parsed and not any(missing):
            self.parsed += [self.parsed[0].schema.empty_table() for _ in missing]  # no job
            return
        schema, tables = parse_windows(
            self.ctx, self.table, self.options, self.source_name(), missing
        )
        self.schema = schema
        self.parsed += tables

    def held_rows(self, i: int, so_far: bool) -> Any:
        if not self.holding or len(self.parsed) <= i:
            return None
        if not so_far:
            return self.parsed[i]
        import pyarrow as pa

        return pa.concat_tables(self.parsed[: i + 1])

    def window(self, i: int) -> Any:
        held = self.held_rows(i, False)
        if held is not None:
            return from_rows(self.ctx.spark, held, self.schema)
        self._fill(i)
        return self._frame(self.windows[i] if i < len(self.windows) else [])

    def rows_in(self, i: int) -> int | None:
        return len(self.windows[i]) if i < len(self.windows) else 0

    def cumulative(self, i: int) -> Any:
        held = self.held_rows(i, True)
        if held is not None:
            return from_rows(self.ctx.spark, held, self.schema)
        self._fill(i)
        return self._frame([ln for w in self.windows[: i + 1] for ln in w])
