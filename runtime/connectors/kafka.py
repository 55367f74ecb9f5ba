"""``type='kafka'``: a Kafka topic as a table, with GeaFlow's options.

Options: ``geaflow.dsl.kafka.servers`` and ``geaflow.dsl.kafka.topic``
(required), ``geaflow.dsl.kafka.group.id``, ``geaflow.dsl.kafka.client.id``,
``geaflow.dsl.kafka.pull.batch.size`` (records per poll) and
``geaflow.dsl.kafka.data.operation.timeout.seconds`` (how long a poll or a
send waits), ``geaflow.dsl.start.time`` (``begin``, ``latest`` or
``yyyy-MM-dd HH:mm:ss`` in the job's time zone).

A record's value is text: its lines are rows, split into fields by
``geaflow.dsl.column.separator`` as a text file's are; writing sends a record
per row, its fields joined by the separator.  Writing into a topic that does
not exist is an error, as in GeaFlow (brokers that create topics on first use
would otherwise hide a misspelt name).

A Kafka table is a stream, read window by window:

* ``geaflow.dsl.window.size = n``: the next n records (fewer when the topic
  has no more within the timeout);
* ``geaflow.dsl.time.window.size = s`` (over a window size): records by their timestamps, window k
  holding those from start + k*s to start + (k+1)*s.  A window closes once a
  later record has been seen, or the topic has nothing more; a record that
  comes late (its partition had a later one first) joins the window being
  read.  Windows with no records are skipped;
* ``geaflow.dsl.window.size = -1``: everything the topic holds now, as one
  window.

The stream ends when a window finds no record within the timeout.  Records
older than a timestamp start time are left out (GeaFlow asks the broker for
the offset of ``start / 1000``, which finds the first record of every
partition: it reads them all; this is the documented meaning instead).

Each window's lines and the partitions' positions after it are logged under
the job's checkpoint folder before the window is used: a restarted job
replays the windows it had read and continues from the positions, so every
record lands in exactly one window.  The offsets are not committed to the
consumer group (the checkpoint is the record of what was read).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import LINE_SEPARATOR
from geaflow_sql.core.errors import ConfigError, ExecutionError, UnsupportedError
from runtime.context import RuntimeContext
from runtime.durable import atomic_write_json

from .base import (
    WindowSource,
    WriteRequest,
    time_window_of,
    window_size_of,
)
from .file import SEPARATOR, option
from .streamed import LineWindows, StreamConnector
from .text_format import driver_lines, driver_prints, line_sql

SERVERS = "geaflow.dsl.kafka.servers"
TOPIC = "geaflow.dsl.kafka.topic"
GROUP_ID = "geaflow.dsl.kafka.group.id"
CLIENT_ID = "geaflow.dsl.kafka.client.id"
PULL_SIZE = "geaflow.dsl.kafka.pull.batch.size"
TIMEOUT = "geaflow.dsl.kafka.data.operation.timeout.seconds"
START_TIME = "geaflow.dsl.start.time"
FORMAT = "geaflow.dsl.connector.format"

DEFAULT_GROUP = "default-group-id"
SEND_CHUNK = 10_000  # records sent between two flushes


@dataclass(frozen=True)
class KafkaOptions:
    table: str
    servers: str
    topic: str
    group_id: str
    client_id: str | None
    pull_size: int
    timeout: float
    start: str  # 'begin' | 'latest' | a time

    @classmethod
    def of(cls, table: TableInfo, options: dict[str, Any]) -> KafkaOptions:
        servers = str(option(options, SERVERS, "") or "").strip()
        topic = str(option(options, TOPIC, "") or "").strip()
        missing = [k for k, v in ((SERVERS, servers), (TOPIC, topic)) if not v]
        if missing:
            raise ConfigError(f"kafka table {table.name} needs {' and '.join(missing)}")
        fmt = str(option(options, FORMAT, "text") or "text").strip().lower()
        if fmt != "text":
            raise UnsupportedError(
                f"kafka table {table.name}: {FORMAT} = {fmt!r} is not supported (text only)"
            )
        pull = _number(table, options, PULL_SIZE, 100)
        if pull <= 0:
            raise ConfigError(f"kafka table {table.name}: {PULL_SIZE} must be positive")
        timeout = _number(table, options, TIMEOUT, 30)
        if timeout <= 0:
            raise ConfigError(f"kafka table {table.name}: {TIMEOUT} must be positive")
        client = option(options, CLIENT_ID)
        start = str(option(options, START_TIME, "begin") or "begin").strip()
        return cls(
            table.name,
            servers,
            topic,
            str(option(options, GROUP_ID, DEFAULT_GROUP) or DEFAULT_GROUP),
            str(client) if client not in (None, "") else None,
            int(pull),
            float(timeout),
            start,
        )

    def client_args(self) -> dict[str, Any]:
        # An unreachable broker fails after the operation timeout (at least 5 s).
        args: dict[str, Any] = {
            "bootstrap_servers": self.servers.split(","),
            "bootstrap_timeout_ms": int(max(self.timeout, 5.0) * 1000),
        }
        if self.client_id is not None:
            args["client_id"] = self.client_id
        return args


def _number(table: TableInfo, options: dict[str, Any], key: str, default: float) -> float:
    value = option(options, key, default)
    try:
        return float(str(value).strip())
    except ValueError:
        raise ConfigError(
            f"kafka table {table.name}: {key} must be a number, got {value!r}"
        ) from None


def start_millis(table: str, start: str, zone: str | None) -> int | None:
    """The start time in epoch milliseconds: None for ``begin``, -1 for ``latest``."""
    word = start.lower()
    if word == "begin":
        return None
    if word == "latest":
        return -1
    try:
        moment = datetime.strptime(start, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise ConfigError(
            f"kafka table {table}: {START_TIME} must be 'begin', 'latest' or "
            f"'yyyy-MM-dd HH:mm:ss', got {start!r}"
        ) from None
    if zone:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        with contextlib.suppress(ZoneInfoNotFoundError, ValueError):
            moment = moment.replace(tzinfo=ZoneInfo(zone))
    return int(moment.timestamp() * 1000)


def _kafka() -> Any:
    try:
        import kafka
    except ImportError:  # pragma: no cover - a dependency of the project
        raise UnsupportedError("kafka tables need the kafka-python package") from None
    return kafka


@contextlib.contextmanager
def _broker_errors(opts: KafkaOptions, doing: str) -> Iterator[None]:
    """Kafka client errors as the table's ExecutionError."""
    errors = _kafka().errors
    try:
        yield
    except errors.KafkaError as err:
        raise ExecutionError(
            f"kafka table {opts.table}: cannot {doing} topic {opts.topic!r} at "
            f"{opts.servers}: {type(err).__name__}: {err}"
        ) from None


def _topics(opts: KafkaOptions) -> set[str]:
    kafka = _kafka()
    with _broker_errors(opts, "reach"):
        consumer = kafka.KafkaConsumer(enable_auto_commit=False, **opts.client_args())
        try:
            return set(consumer.topics())
        finally:
            consumer.close()


class KafkaConnector(StreamConnector):
    name = "kafka"

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        KafkaOptions.of(table, options)

    def window_source(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], log_dir: Path | None
    ) -> WindowSource:
        return KafkaSource(ctx, table, options, window_size_of(table, options), log_dir)

    # ---------------------------------------------------------------- writes
    def write(self, ctx: RuntimeContext, df: Any, req: WriteRequest) -> int:
        sep = str(option(req.options, SEPARATOR, ","))
        lines = (
            row[0] for row in df.selectExpr(f"{line_sql(req.types, sep)} AS line").toLocalIterator()
        )
        return self._send(KafkaOptions.of(req.table, req.options), lines)

    def rows_writer(self, ctx: RuntimeContext, req: WriteRequest) -> Any | None:
        prints, numbers = driver_prints(ctx.spark, req.types)
        if not prints:
            return None
        opts = KafkaOptions.of(req.table, req.options)
        sep = str(option(req.options, SEPARATOR, ","))

        def write(rows: Any) -> int:
            return self._send(opts, driver_lines(rows, req.types, sep, numbers))

        return write

    def _send(self, opts: KafkaOptions, lines: Iterable[str]) -> int:
        """Send a record per line; every one acknowledged before returning."""
        if opts.topic not in _topics(opts):
            raise ExecutionError(
                f"kafka table {opts.table}: topic {opts.topic!r} does not exist at {opts.servers}"
            )
        kafka = _kafka()
        sent = 0
        with _broker_errors(opts, "write to"):
            producer = kafka.KafkaProducer(**opts.client_args())
            try:
                pending: list[Any] = []
                for text in lines:
                    pending.append(producer.send(opts.topic, value=text.encode("utf-8")))
                    if len(pending) >= SEND_CHUNK:
                        sent += self._acknowledged(producer, pending, opts)
                        pending = []
                sent += self._acknowledged(producer, pending, opts)
            finally:
                producer.close(timeout=opts.timeout)
        return sent

    @staticmethod
    def _acknowledged(producer: Any, pending: list[Any], opts: KafkaOptions) -> int:
        producer.flush(timeout=opts.timeout)
        for future in pending:
            future.get(timeout=opts.timeout)  # raises the send's error
        return len(pending)


@dataclass
class _Record:
    partition: int
    offset: int
    timestamp: int
    value: str


class KafkaSource(LineWindows):
    """A topic's records, window by window (see the module's description)."""

    def __init__(
        self,
        ctx: RuntimeContext,
        table: TableInfo,
        options: dict[str, Any],
        size: int,
        log_dir: Path | None,
    ) -> None:
        super().__init__(ctx, table, options, size)
        self.opts = KafkaOptions.of(table, options)
        self.seconds = time_window_of(options)
        self.log_dir = log_dir
        self.resumable = True  # the topic may grow: a later run goes on
        self.line_sep = str(option(options, LINE_SEPARATOR.name, "\n") or "\n")
        self.closed = False
        self.consumer: Any = None
        self.buffer: list[_Record] = []
        self.start_ms: int | None = None
        self.time_index = 0  # the time window the next window starts at

    # ----------------------------------------------------------------- set up
    def prepare(self) -> None:
        self.start_ms = start_millis(self.table.name, self.opts.start, self.ctx.config.time_zone())
        if self.seconds > 0 and (self.start_ms is None or self.start_ms < 0):
            raise ConfigError(
                f"kafka table {self.table.name}: a time window needs {START_TIME} to be a time"
            )
        positions: dict[int, int] = {}
        if self.log_dir is not None:
            positions = self._load_log()
        kafka = _kafka()
        with _broker_errors(self.opts, "read"):
            consumer = kafka.KafkaConsumer(
                group_id=self.opts.group_id,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                max_poll_records=self.opts.pull_size,
                **self.opts.client_args(),
            )
            self.consumer = consumer
            ids = consumer.partitions_for_topic(self.opts.topic)
            if not ids:
                raise ExecutionError(
                    f"kafka table {self.table.name}: topic {self.opts.topic!r} does not "
                    f"exist at {self.opts.servers}"
                )
            parts = [kafka.TopicPartition(self.opts.topic, p) for p in sorted(ids)]
            consumer.assign(parts)
            fresh = [tp for tp in parts if tp.partition not in positions]
            for tp in parts:
                if tp.partition in positions:
                    consumer.seek(tp, positions[tp.partition])
            if fresh:
                self._seek_start(consumer, fresh)

    def _seek_start(self, consumer: Any, parts: list[Any]) -> None:
        if self.start_ms == -1:
            consumer.seek_to_end(*parts)
            for tp in parts:  # resolve now: 'latest' means as of the start
                consumer.position(tp)
            return
        consumer.seek_to_beginning(*parts)
        if self.start_ms is None:
            return
        # The broker's offset for the time, where it answers with one (older
        # records are also dropped as they are read, where it does not).
        found = consumer.offsets_for_times({tp: self.start_ms for tp in parts})
        for tp in parts:
            hit = found.get(tp)
            if hit is not None and hit.timestamp >= 0:
                consumer.seek(tp, hit.offset)

    def _load_log(self) -> dict[int, int]:
        assert self.log_dir is not None
        positions: dict[int, int] = {}
        k = 0
        while (self.log_dir / f"{k:08d}.json").exists():
            entry = json.loads((self.log_dir / f"{k:08d}.json").read_text(encoding="utf-8"))
            self.windows.append(list(entry["lines"]))
            positions = {int(p): int(o) for p, o in entry["positions"].items()}
            self.time_index = int(entry.get("time_index", 0))
            self.closed = bool(entry.get("closed", False))
            k += 1
        return positions

    # ------------------------------------------------------------------ reads
    def _poll(self) -> bool:
        """Read what the topic has within the timeout; were there records?"""
        with _broker_errors(self.opts, "read"):
            got = self.consumer.poll(timeout_ms=int(self.opts.timeout * 1000))
        fresh = False
        for tp in sorted(got, key=lambda tp: tp.partition):
            for rec in got[tp]:
                fresh = True
                if self.start_ms is not None and 0 <= rec.timestamp < self.start_ms:
                    continue  # before the start time
                value = rec.value.decode("utf-8") if rec.value is not None else ""
                self.buffer.append(_Record(tp.partition, rec.offset, rec.timestamp, value))
        return fresh

    def _take_size(self) -> list[_Record]:
        if self.size <= 0:  # everything the topic holds now
            ends = self._end_offsets()
            while not self._caught_up(ends) and self._poll():
                pass
            taken, self.buffer = self.buffer, []
            self.closed = True
            return taken
        while len(self.buffer) < self.size and self._poll():
            pass
        taken, self.buffer = self.buffer[: self.size], self.buffer[self.size :]
        return taken

    def _end_offsets(self) -> dict[Any, int]:
        """Each partition's end (the offset its next record will have) now."""
        with _broker_errors(self.opts, "read"):
            return dict(self.consumer.end_offsets(list(self.consumer.assignment())))

    def _caught_up(self, ends: dict[Any, int]) -> bool:
        """Has every partition been read up to ``ends``?  (Without ends, the
        reads go on until a poll finds nothing.)"""
        return bool(ends) and all(self.consumer.position(tp) >= end for tp, end in ends.items())

    def _take_time(self) -> list[_Record]:
        assert self.start_ms is not None
        width = int(self.seconds * 1000)
        idle = False
        while True:
            end = self.start_ms + (self.time_index + 1) * width
            if not idle and not any(r.timestamp >= end for r in self.buffer):
                idle = not self._poll()
                continue
            # The window closes: per partition, its records up to the first
            # one past the end (a partition's records stay in offset order).
            blocked: set[int] = set()
            taken: list[_Record] = []
            kept: list[_Record] = []
            for r in self.buffer:
                if r.partition not in blocked and r.timestamp < end:
                    taken.append(r)
                else:
                    blocked.add(r.partition)
                    kept.append(r)
            self.buffer = kept
            if taken or not kept:
                self.time_index += 1
                return taken
            # Nothing in this window: skip to the first record's.
            first = min(r.timestamp for r in kept)
            self.time_index = max(self.time_index + 1, (first - self.start_ms) // width)

    def _positions(self) -> dict[int, int]:
        """Where each partition's next unwindowed record is."""
        first: dict[int, int] = {}
        for r in self.buffer:
            first.setdefault(r.partition, r.offset)
        out = {}
        for tp in self.consumer.assignment():
            out[tp.partition] = first.get(tp.partition, self.consumer.position(tp))
        return out

    def _fill(self, i: int) -> None:
        while len(self.windows) <= i and not self.closed:
            records = self._take_time() if self.seconds > 0 else self._take_size()
            if not records:
                self.closed = True
                break
            lines = [line for r in records for line in r.value.split(self.line_sep) if line.strip()]
            if self.log_dir is not None:
                entry = {
                    "lines": lines,
                    "positions": {str(p): o for p, o in self._positions().items()},
                    "time_index": self.time_index,
                    "closed": self.closed,
                }
                atomic_write_json(self.log_dir / f"{len(self.windows):08d}.json", entry)
            self.windows.append(lines)

    def source_name(self) -> str:
        return f"topic {self.opts.topic}"

    def close(self) -> None:
        if self.consumer is not None:
            with contextlib.suppress(Exception):
                self.consumer.close()
            self.consumer = None
