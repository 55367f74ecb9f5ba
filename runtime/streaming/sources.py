"""Sources read in windows: a window is one round of a streaming job.

``geaflow.dsl.window.size`` (rows per window; -1 = everything in the first
window) comes from the table's ``WITH`` options, else the job configuration.
A file table is read once, its rows numbered in file order, and each window
is a range of those numbers, so any window can be re-read after a restart.
A socket table reads lines as they arrive; each window is logged to the
checkpoint folder before it is used, which makes it replayable too.
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import threading
import time
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import TIME_WINDOW_SIZE, WINDOW_SIZE, Config
from geaflow_sql.core.errors import ConfigError, ExecutionError
from runtime.connectors.base import ReadRequest, connector_for, merged_options


def table_key(table: TableInfo) -> str:
    return f"{table.instance.lower()}.{table.name.lower()}"


def graph_key(graph: Any) -> str:
    return f"{graph.instance.lower()}.{graph.name.lower()}"


def graph_tables(ctx: Any, graph: Any) -> list[TableInfo]:
    """The tables a graph's labels are defined USING."""
    out = []
    for info in list(graph.vertices) + list(graph.edges):
        if info.using:
            table = ctx.catalog.table((info.using,))
            if table is not None:
                out.append(table)
    return out


def window_size_of(table: TableInfo, config: Config) -> int:
    value = table.option(WINDOW_SIZE.name)
    if value is None:
        value = config.raw(WINDOW_SIZE)
    try:
        return int(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"table {table.name}: {WINDOW_SIZE.name} must be an integer, got {value!r}"
        ) from None


def time_window_of(table: TableInfo, config: Config) -> float:
    value = table.option(TIME_WINDOW_SIZE.name)
    if value is None:
        value = config.raw(TIME_WINDOW_SIZE)
    try:
        return float(str(value).strip())
    except ValueError:
        return -1.0


def is_windowed(table: TableInfo, config: Config) -> bool:
    from .spark_stream import is_spark_stream

    if table.connector == "socket" or is_spark_stream(table):
        return True
    return window_size_of(table, config) > 0 or time_window_of(table, config) > 0


class WindowSource:
    """One table's rows, window by window (columns c0..cN: all table columns)."""

    def __init__(self, ctx: Any, table: TableInfo, size: int) -> None:
        self.ctx = ctx
        self.table = table
        self.size = size
        # Whether the rows are stored once for re-reading in later windows.
        self.materialize = True

    def prepare(self) -> None:
        """Work done once before the first round."""

    def has_window(self, i: int) -> bool:
        raise NotImplementedError

    def window(self, i: int) -> Any:
        raise NotImplementedError

    def cumulative(self, i: int) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Release connections or threads."""


def _request(ctx: Any, table: TableInfo) -> ReadRequest:
    options = merged_options(ctx, table)
    return ReadRequest(table, options, tuple(range(len(table.columns))))


class ReplayableSource(WindowSource):
    """A finite source read once and numbered, so every window can be re-read."""

    def prepare(self) -> None:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        connector = connector_for(self.table)
        req = _request(self.ctx, self.table)
        n = len(self.table.columns)
        names = [f"c{i}" for i in range(n)]
        parse = getattr(connector, "parse", None)
        lines = getattr(connector, "lines", None)
        if (
            parse is not None
            and lines is not None
            and str(req.options.get("format", "text")).lower() == "text"
        ):
            rows = parse(self.ctx, req, lines(self.ctx, req), keep_position=True)
            order = [F.col("file"), F.col("line_no")]
            rows = rows.withColumn("__pos", F.row_number().over(Window.orderBy(*order)) - 1)
            rows = rows.select(*names, "__pos")
        else:
            rows = connector.read(self.ctx, req)
            rows = rows.withColumn("__pos", F.monotonically_increasing_id())
            rows = rows.withColumn("__pos", F.row_number().over(Window.orderBy("__pos")) - 1)
        if not self.materialize:
            # Read once, as one window (a fused job): keep it lazy.
            self.rows = rows
            self.count = -1
            return
        # Materialised once: windows are ranges of __pos in the stored rows.
        self.rows = rows.localCheckpoint(eager=True)
        self.count = self.rows.count()

    def has_window(self, i: int) -> bool:
        if self.size <= 0:
            return i == 0
        return i * self.size < self.count

    def window(self, i: int) -> Any:
        from pyspark.sql import functions as F

        if self.size <= 0:
            rows = self.rows if i == 0 else self.rows.where(F.lit(False))
        else:
            rows = self.rows.where(
                (F.col("__pos") >= i * self.size) & (F.col("__pos") < (i + 1) * self.size)
            )
        return rows.drop("__pos")

    def cumulative(self, i: int) -> Any:
        from pyspark.sql import functions as F

        if self.size <= 0:
            return self.rows.drop("__pos")
        return self.rows.where(F.col("__pos") < (i + 1) * self.size).drop("__pos")


class RandomSource(WindowSource):
    """GeaFlow's random table in windows: ``max.batch`` windows of ``size`` rows."""

    def prepare(self) -> None:
        from runtime.connectors.random_source import MAX_BATCH

        options = merged_options(self.ctx, self.table)
        self.batches = Config(options).get_int(MAX_BATCH, 3)
        self.produced: list[Any] = []

    def has_window(self, i: int) -> bool:
        return i < self.batches

    def window(self, i: int) -> Any:
        connector = connector_for(self.table)
        while len(self.produced) <= i:
            rows = getattr(connector, "_rows")  # noqa: B009 - the random connector's generator
            df = rows(self.ctx, _request(self.ctx, self.table), max(self.size, 0))
            self.produced.append(df.localCheckpoint(eager=True))
        return self.produced[i]

    def cumulative(self, i: int) -> Any:
        out = self.window(0)
        for k in range(1, i + 1):
            out = out.unionByName(self.window(k))
        return out


class SocketSource(WindowSource):
    """Lines from a TCP server; a window is ``size`` lines or ``time`` seconds.

    A reader thread fills a queue; the stream ends when the server closes the
    connection.  Each window's lines are logged under the checkpoint folder
    before use, so a restarted job replays what it had already read.
    """

    def __init__(
        self, ctx: Any, table: TableInfo, size: int, seconds: float, log_dir: Path | None
    ) -> None:
        super().__init__(ctx, table, size)
        self.seconds = seconds
        self.log_dir = log_dir
        self.windows: list[list[str]] = []
        self.closed = False
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.sock: socket.socket | None = None

    def prepare(self) -> None:
        options = merged_options(self.ctx, self.table)
        host = options.get("geaflow.dsl.socket.host")
        port = options.get("geaflow.dsl.socket.port")
        if host is None or port is None:
            raise ConfigError(
                f"socket table {self.table.name} needs geaflow.dsl.socket.host and geaflow.dsl.socket.port"
            )
        if self.log_dir is not None:
            self._load_log()
        try:
            self.sock = socket.create_connection((str(host), int(port)), timeout=30)
        except OSError as err:
            if self.windows:
                self.closed = True
                return
            raise ExecutionError(
                f"socket table {self.table.name}: cannot connect to {host}:{port}: {err}"
            ) from None
        self.sock.settimeout(None)
        threading.Thread(target=self._read, daemon=True).start()

    def _load_log(self) -> None:
        assert self.log_dir is not None
        k = 0
        while (self.log_dir / f"{k:08d}.txt").exists():
            text = (self.log_dir / f"{k:08d}.txt").read_text(encoding="utf-8")
            self.windows.append(text.split("\n") if text else [])
            k += 1

    def _read(self) -> None:
        assert self.sock is not None
        buf = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    text = line.decode("utf-8").rstrip("\r")
                    if text.strip():
                        self.queue.put(text)
        except OSError:
            pass
        if buf.strip():
            self.queue.put(buf.decode("utf-8").rstrip("\r"))
        self.queue.put(None)

    def _fill(self, i: int) -> None:
        while len(self.windows) <= i and not self.closed:
            lines: list[str] = []
            deadline = time.monotonic() + self.seconds if self.seconds > 0 else None
            while self.size <= 0 or len(lines) < self.size:
                timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    item = self.queue.get(timeout=timeout)
                except queue.Empty:
                    break
                if item is None:
                    self.closed = True
                    break
                lines.append(item)
            if not lines and self.closed:
                break
            if self.log_dir is not None:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                path = self.log_dir / f"{len(self.windows):08d}.txt"
                tmp = path.with_suffix(".tmp")
                tmp.write_text("\n".join(lines), encoding="utf-8")
                os.replace(tmp, path)
            self.windows.append(lines)

    def has_window(self, i: int) -> bool:
        self._fill(i)
        return i < len(self.windows)

    def _frame(self, lines: list[str]) -> Any:
        from runtime.connectors.file import FileConnector

        spark = self.ctx.spark
        df = spark.createDataFrame(
            [("socket", k, line) for k, line in enumerate(lines)],
            "file string, line_no int, line string",
        )
        return FileConnector().parse(self.ctx, _request(self.ctx, self.table), df)

    def window(self, i: int) -> Any:
        self._fill(i)
        return self._frame(self.windows[i] if i < len(self.windows) else [])

    def cumulative(self, i: int) -> Any:
        self._fill(i)
        lines = [ln for w in self.windows[: i + 1] for ln in w]
        return self._frame(lines)

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()


def open_source(ctx: Any, table: TableInfo, log_root: Path | None) -> WindowSource:
    size = window_size_of(table, ctx.config)
    if table.connector == "socket":
        seconds = time_window_of(table, ctx.config)
        log = log_root / "sources" / table.name.lower() if log_root is not None else None
        return SocketSource(ctx, table, size, seconds, log)
    if table.connector == "random":
        return RandomSource(ctx, table, size)
    from .spark_stream import SparkStreamSource, is_spark_stream

    if is_spark_stream(table):
        log = log_root / "sources" / table.name.lower() if log_root is not None else None
        return SparkStreamSource(ctx, table, time_window_of(table, ctx.config), log)
    return ReplayableSource(ctx, table, size)
