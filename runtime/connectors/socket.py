"""``type='socket'``: rows read from a TCP socket, one line per row (streams).

A socket table is always read in windows: ``geaflow.dsl.window.size`` lines or
``geaflow.dsl.time.window.size`` seconds, until the server closes the
connection.  Lines are parsed as GeaFlow's text format.
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
from geaflow_sql.core.errors import ConfigError, ExecutionError
from runtime.context import RuntimeContext

from .base import WindowSource, time_window_of, window_size_of
from .streamed import LineWindows, StreamConnector


class SocketConnector(StreamConnector):
    name = "socket"

    def window_source(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], log_dir: Path | None
    ) -> WindowSource:
        size = window_size_of(table, options)
        return SocketSource(ctx, table, options, size, time_window_of(options), log_dir)


class SocketSource(LineWindows):
    """Lines from a TCP server; a window is ``size`` lines or ``time`` seconds.

    A reader thread fills a queue; the stream ends when the server closes the
    connection.  Each window's lines are logged under the checkpoint folder
    before use, so a restarted job replays what it had already read.
    """

    def __init__(
        self,
        ctx: RuntimeContext,
        table: TableInfo,
        options: dict[str, Any],
        size: int,
        seconds: float,
        log_dir: Path | None,
    ) -> None:
        super().__init__(ctx, table, options, size)
        self.seconds = seconds
        self.log_dir = log_dir
        self.closed = False
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.sock: socket.socket | None = None

    def prepare(self) -> None:
        options = self.options
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

    def source_name(self) -> str:
        return "socket"

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
