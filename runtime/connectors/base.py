"""What a connector is: ``CREATE TABLE ... WITH (type='x')`` -> a Connector.

A connector reads a table into a DataFrame whose columns are ``c0..cN`` (the
table's columns, or the projected subset) and writes a DataFrame into a
table.  It also says whether a table is read in windows (a stream, or a
table with a window size) and opens its window source; the windowed job asks
the connector, never the connector's name.  ``runtime.connectors.registry``
finds the connector of a table.

The options a connector gets are the job configuration overlaid by the
table's own (``geaflow_sql.core.config.table_options``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import TIME_WINDOW_SIZE, WINDOW_SIZE
from geaflow_sql.core.errors import ConfigError
from runtime.context import RuntimeContext
from runtime.held import from_rows

from .scan_cache import SCANS


@dataclass(frozen=True)
class ReadRequest:
    table: TableInfo
    options: dict[str, Any]  # job config merged with table options (table wins)
    projection: tuple[int, ...]  # table column indexes to produce, in order


@dataclass(frozen=True)
class WriteRequest:
    table: TableInfo
    options: dict[str, Any]  # job config merged with table options (table wins)
    types: list[Any]  # GeaFlow types of the rows' columns c0..cN
    windowed: bool = False  # one window's output of a windowed job


def window_size_of(table: TableInfo, options: dict[str, Any]) -> int:
    """Rows per window (``geaflow.dsl.window.size``; -1: everything at once)."""
    value = options.get(WINDOW_SIZE.name, WINDOW_SIZE.default)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"table {table.name}: {WINDOW_SIZE.name} must be an integer, got {value!r}"
        ) from None


def time_window_of(options: dict[str, Any]) -> float:
    """Seconds per window (``geaflow.dsl.time.window.size``; -1: by rows only)."""
    try:
        return float(str(options.get(TIME_WINDOW_SIZE.name, TIME_WINDOW_SIZE.default)).strip())
    except ValueError:
        return -1.0


class Connector:
    name = "base"

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        """Check a table definition at CREATE TABLE time (raise ConfigError)."""

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        raise ConfigError(f"tables of type {self.name!r} cannot be read")

    def write(self, ctx: RuntimeContext, df: Any, req: WriteRequest) -> int:
        """Write ``df`` (columns c0..cN); return the rows written, or -1 when not counted."""
        raise ConfigError(f"tables of type {self.name!r} cannot be written")

    def rows_writer(self, ctx: RuntimeContext, req: WriteRequest) -> Any | None:
        """A function writing Arrow rows (columns c0..cN of ``req.types``) from
        the driver, with no Spark job, returning the rows written, as
        ``write`` would have; None when this table is written through Spark."""
        return None

    def numbered_rows(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        """The table's rows in a stable order with their 0-based position in
        it (column ``__pos``), so that windows are ranges of positions."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        rows = self.read(ctx, req).withColumn("__pos", F.monotonically_increasing_id())
        return rows.withColumn("__pos", F.row_number().over(Window.orderBy("__pos")) - 1)

    def reads_in_order(self, ctx: RuntimeContext, req: ReadRequest) -> bool:
        """Does ``read`` give the rows in the order ``numbered_rows`` numbers
        them (here: the order Spark reads them in)?"""
        return True

    # Windows -----------------------------------------------------------------
    def reads_in_windows(self, table: TableInfo, options: dict[str, Any]) -> bool:
        """Is the table read window by window (a windowed job), not whole?

        A bounded source is, when it has a window size of rows or seconds."""
        return window_size_of(table, options) > 0 or time_window_of(options) > 0

    def window_source(
        self,
        ctx: RuntimeContext,
        table: TableInfo,
        options: dict[str, Any],
        log_dir: Path | None,
    ) -> WindowSource:
        """The table as a sequence of windows.  ``log_dir``: where a source
        that cannot be read again logs each window before it is used (under
        the job's checkpoint folder; None without one).

        A bounded source is read once and numbered, so any window can be read
        again after a restart."""
        return ReplayableSource(ctx, table, options, window_size_of(table, options), self)


class WindowSource:
    """One table's rows, window by window (columns c0..cN: all table columns)."""

    def __init__(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], size: int
    ) -> None:
        self.ctx = ctx
        self.table = table
        self.options = options  # the table's options over the job configuration
        self.size = size
        # Whether the rows are stored once for re-reading in later windows.
        self.materialize = True
        # A source whose stream may continue in a later run (a Spark stream).
        self.resumable = False

    def prepare(self) -> None:
        """Work done once before the first round."""

    def has_window(self, i: int) -> bool:
        raise NotImplementedError

    def window(self, i: int) -> Any:
        raise NotImplementedError

    def cumulative(self, i: int) -> Any:
        raise NotImplementedError

    def rows_in(self, i: int) -> int | None:
        """How many rows window ``i`` holds, when known without reading it again."""
        return None

    def is_whole(self, i: int, so_far: bool) -> bool:
        """Is window ``i`` (or everything up to it) every row of the table?"""
        return False

    def held_rows(self, i: int, so_far: bool) -> Any:
        """Window ``i``'s rows (or everything up to it) as an Arrow table,
        when the source holds them on the driver; else None.  Never reads."""
        return None

    def hold(self, i: int) -> None:
        """Before a statement reads window ``i``: the source may fetch the
        rows of the windows up to it to the driver now, to hold them."""

    def close(self) -> None:
        """Release connections or threads."""


class ReplayableSource(WindowSource):
    """A finite source read once and numbered, so every window can be re-read."""

    def __init__(
        self,
        ctx: RuntimeContext,
        table: TableInfo,
        options: dict[str, Any],
        size: int,
        connector: Connector,
    ) -> None:
        super().__init__(ctx, table, options, size)
        self.connector = connector
        self.held: Any = None  # the numbered rows on the driver (Arrow), when small
        self._rows: Any = None

    def _numbered(self, req: ReadRequest) -> Any:
        names = [f"c{i}" for i in range(len(self.table.columns))]
        return self.connector.numbered_rows(self.ctx, req).select(*names, "__pos")

    def _request(self) -> ReadRequest:
        return ReadRequest(self.table, self.options, tuple(range(len(self.table.columns))))

    @property
    def rows(self) -> Any:
        """The numbered rows (built when first asked for, in a fused job)."""
        if self._rows is None:
            self._rows = self._numbered(self._request())
        return self._rows

    def prepare(self) -> None:
        if not self.materialize:
            # Read once, as one window (a fused job): kept lazy, and not even
            # built when the local engine reads the table's kept scan instead.
            self._rows = None
            self.count = -1
            return
        req = self._request()
        rows = self._numbered(req)
        if self._small(req):
            # Small local files: the numbered rows are held on the driver
            # (one job), each window a slice of them (held_rows), for the
            # local engine to run the window with no Spark job.
            table = rows.toArrow().sort_by("__pos")
            self.held = table.drop(["__pos"])  # in order: a window is a slice
            self._rows = from_rows(self.ctx.spark, table, rows.schema)
            self.count = table.num_rows
            return
        # Materialised once: windows are ranges of __pos in the stored rows.
        self._rows = rows.localCheckpoint(eager=True)
        self.count = self._rows.count()

    def _small(self, req: ReadRequest) -> bool:
        """Is the table a kept scan of local files small enough for the
        local engine (``geaflow.dsl.query.local.max.bytes``)?"""
        try:
            scan = self.connector.read(self.ctx, req)
        except Exception:  # noqa: BLE001 - the numbered read reports it
            return False
        size = SCANS.size_of(self.ctx.spark, scan)
        return size is not None and size <= self.ctx.local_bytes

    def has_window(self, i: int) -> bool:
        if self.size <= 0:
            return i == 0
        return i * self.size < self.count

    def held_rows(self, i: int, so_far: bool) -> Any:
        table = self.held
        if table is None:
            return None
        if self.size <= 0:
            return table if i == 0 or so_far else table.slice(0, 0)
        start, stop = (0 if so_far else i * self.size), (i + 1) * self.size
        stop = min(stop, table.num_rows)
        return table.slice(start, max(0, stop - start))

    def _every_row(self) -> Any:
        """Every row, in order.  A job that reads the table once, as one
        window (fused), reads its kept scan when that gives the rows in their
        numbered order: nothing to number, and the scan (and Spark's analysis
        of it) is shared with every statement and job reading those files."""
        req = self._request()
        if self.materialize:
            return self.rows.drop("__pos")  # stored in order
        if self.connector.reads_in_order(self.ctx, req):
            return self.connector.read(self.ctx, req)
        # Sorted: with the positions dropped, Spark prunes their numbering
        # away, and the rows would come in the order the splits are packed.
        return self.rows.orderBy("__pos").drop("__pos")

    def window(self, i: int) -> Any:
        # Conditions as SQL text: a Column per function is round trips each.
        if self.size <= 0:
            every = self._every_row()
            return every if i == 0 else every.where("false")
        rows = self.rows.where(f"__pos >= {i * self.size} AND __pos < {(i + 1) * self.size}")
        return rows.drop("__pos")

    def is_whole(self, i: int, so_far: bool) -> bool:
        # One window of everything (a fused job reads the table once).
        return self.size <= 0 and (i == 0 or so_far)

    def rows_in(self, i: int) -> int | None:
        if self.count < 0:
            return None
        if self.size <= 0:
            return self.count if i == 0 else 0
        return max(0, min(self.size, self.count - i * self.size))

    def cumulative(self, i: int) -> Any:
        if self.size <= 0:
            return self._every_row()
        return self.rows.where(f"__pos < {(i + 1) * self.size}").drop("__pos")
