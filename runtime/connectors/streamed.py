"""Connectors of streams (sockets, Kafka): tables read only window by window,
as text lines that are kept once read, so any window can be read again."""

from __future__ import annotations

from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import UnsupportedError
from runtime.context import RuntimeContext

from .base import Connector, ReadRequest, WindowSource
from .file import lines_frame


class StreamConnector(Connector):
    """A connector whose tables are streams: never read whole."""

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        raise UnsupportedError(f"{self.name} tables are read as streams, in windows")

    def reads_in_windows(self, table: TableInfo, options: dict[str, Any]) -> bool:
        return True


class LineWindows(WindowSource):
    """A stream's windows of text lines, each read once by ``_fill`` (which
    appends to ``windows``) and parsed as a text file's lines are."""

    def __init__(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], size: int
    ) -> None:
        super().__init__(ctx, table, options, size)
        self.windows: list[list[str]] = []

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

    def window(self, i: int) -> Any:
        self._fill(i)
        return self._frame(self.windows[i] if i < len(self.windows) else [])

    def rows_in(self, i: int) -> int | None:
        return len(self.windows[i]) if i < len(self.windows) else 0

    def cumulative(self, i: int) -> Any:
        self._fill(i)
        return self._frame([ln for w in self.windows[: i + 1] for ln in w])
