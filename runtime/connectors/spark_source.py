"""``type='spark'``: any Spark data source, options passed through.

    CREATE TABLE t (...) WITH (type='spark', format='parquet', path='/data/t')
    CREATE TABLE t (...) WITH (type='spark', format='jdbc', url='jdbc:...', dbtable='t')

Every option except ``type``, ``format`` and ``geaflow.*`` keys goes to Spark's
reader/writer, so any connector installed in Spark works.  Columns are matched
by name (case-insensitively) and cast to the declared types.

With ``geaflow.dsl.spark.streaming = true`` the table is a Spark Structured
Streaming source, read in windows: one micro-batch is one window.

    CREATE TABLE clicks (user_id bigint, url varchar) WITH (
      type='spark', format='json', path='/landing/clicks',
      geaflow.dsl.spark.streaming = true, maxFilesPerTrigger = 1
    );

Any Spark streaming format works (files arriving in a folder, ``socket``,
``rate``, Kafka where its package is installed); options other than ``type``,
``format`` and ``geaflow.*`` go to ``readStream``, so Spark's own batch
sizing (``maxFilesPerTrigger``, ``maxOffsetsPerTrigger``, ...) decides how
many rows a window holds.

Spark drives the batches through ``foreachBatch`` with its own checkpoint
location; the callback only *logs* each batch as Parquet (written to a
temporary folder, then renamed, so a batch file is whole or absent) and
returns.  The job reads window ``i`` from the ``i``-th logged batch.  The order
of events gives exactly-once:

1. a batch is logged before ``foreachBatch`` returns, and Spark commits its
   offsets only after that, so no row Spark considers done is missing from
   the log;
2. a batch Spark replays after a crash has the same batch id and the same
   rows, so logging it again rewrites the same file;
3. windows are consumed from the log, and the job checkpoint
   (``runtime.streaming.checkpoint``)
   records the last window whose output was committed, so a restarted job
   neither skips nor repeats a window.

By default the query runs with ``availableNow``: everything present when the
job starts, in micro-batches, then the stream ends.  With
``geaflow.dsl.spark.streaming.trigger = processing`` it keeps running and a
window arrives every ``geaflow.dsl.time.window.size`` seconds; the stream
ends after ``geaflow.dsl.spark.streaming.idle.seconds`` without new data.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import ConfigError, ExecutionError
from runtime.context import RuntimeContext
from runtime.spark_adapter import is_connect

from .base import Connector, ReadRequest, WindowSource, WriteRequest, time_window_of


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


def named_columns(df: Any, table: TableInfo) -> Any:
    """Rows c0..cN as the table's own columns, named and typed (for Spark's writers)."""
    from pyspark.sql import functions as F

    return df.select(
        *[
            F.col(f"c{i}").cast(T.spark_sql_type(c.type)).alias(c.name)
            for i, c in enumerate(table.columns)
        ]
    )


class SparkSourceConnector(Connector):
    name = "spark"

    def reads_in_windows(self, table: TableInfo, options: dict[str, Any]) -> bool:
        return is_stream(options) or super().reads_in_windows(table, options)

    def window_source(
        self, ctx: RuntimeContext, table: TableInfo, options: dict[str, Any], log_dir: Path | None
    ) -> WindowSource:
        if not is_stream(options):
            return super().window_source(ctx, table, options, log_dir)
        return SparkStreamSource(ctx, table, options, time_window_of(options), log_dir)

    def validate(self, table: TableInfo, options: dict[str, Any]) -> None:
        if not options.get("format"):
            raise ConfigError(f"table {table.name!r} of type 'spark' needs a format option")

    def read(self, ctx: RuntimeContext, req: ReadRequest) -> Any:
        fmt = str(req.table.option("format"))
        opts = spark_options(dict(req.table.options))
        df = ctx.spark.read.format(fmt).options(**opts).load()
        return select_columns(df, req.table, req.projection)

    def write(self, ctx: RuntimeContext, df: Any, req: WriteRequest) -> int:
        table = req.table
        fmt = str(table.option("format"))
        opts = spark_options(dict(table.options))
        out = named_columns(df, table)
        out.write.format(fmt).options(**opts).mode(str(table.option("mode", "append"))).save()
        return -1


def is_stream(options: dict[str, Any]) -> bool:
    return str(options.get(STREAMING_OPTION, "false")).lower() == "true"


STREAMING_OPTION = "geaflow.dsl.spark.streaming"
TRIGGER_OPTION = "geaflow.dsl.spark.streaming.trigger"
IDLE_OPTION = "geaflow.dsl.spark.streaming.idle.seconds"


class SparkStreamSource(WindowSource):
    """A window source fed by a Structured Streaming query (see the module doc)."""

    def __init__(
        self,
        ctx: RuntimeContext,
        table: TableInfo,
        options: dict[str, Any],
        seconds: float,
        log_dir: Path | None,
    ) -> None:
        super().__init__(ctx, table, options, -1)
        # A later run on the same checkpoint folder continues the stream.
        self.resumable = True
        self.seconds = seconds
        self._own_dir = log_dir is None
        root = log_dir if log_dir is not None else Path(tempfile.mkdtemp(prefix="geaflow-stream-"))
        self.batch_dir = root / "batches"
        self.spark_checkpoint = root / "spark-checkpoint"
        self.query: Any = None
        self.failure: BaseException | None = None
        self.changed = threading.Condition()

    # ------------------------------------------------------------- Spark side
    def prepare(self) -> None:
        options = self.options
        fmt = options.get("format")
        if not fmt:
            raise ConfigError(f"streaming table {self.table.name!r} needs a format option")
        self.batch_dir.mkdir(parents=True, exist_ok=True)
        reader = self.ctx.spark.readStream.format(str(fmt)).options(**spark_options(options))
        if str(fmt).lower() not in ("rate", "socket", "kafka", "rate-micro-batch"):
            # File streams need their schema up front; the table declares it.
            reader = reader.schema(self._schema())
        try:
            stream = reader.load()
            writer = (
                # Spark Connect runs the batch function in a Python process of
                # its own on the server: it gets the plain picklable logger (the
                # job side polls the folder), classic Spark the method that
                # also wakes the job side at once.
                stream.writeStream.foreachBatch(
                    BatchLog(self.table, str(self.batch_dir))
                    if is_connect(self.ctx.spark)
                    else self._log_batch
                )
                .option("checkpointLocation", str(self.spark_checkpoint))
                .queryName(f"geaflow_{self.table.name}_{id(self)}")
            )
            if str(options.get(TRIGGER_OPTION, "available-now")).lower() == "processing":
                seconds = self.seconds if self.seconds > 0 else 1.0
                writer = writer.trigger(processingTime=f"{seconds} seconds")
                self.idle = float(options.get(IDLE_OPTION, 10))
            else:
                writer = writer.trigger(availableNow=True)
                self.idle = float("inf")
            self.query = writer.start()
        except Exception as err:  # Spark's analysis errors, surfaced with the table's name
            raise ExecutionError(f"streaming table {self.table.name}: {_first_line(err)}") from None

    def _schema(self) -> Any:
        from pyspark.sql import types as ST

        from geaflow_sql.core import types as T

        return ST.StructType(
            [ST.StructField(c.name, T.to_spark_type(c.type), True) for c in self.table.columns]
        )

    def _log_batch(self, batch: Any, batch_id: int) -> None:
        """Runs on Spark's foreachBatch thread (classic Spark): log the batch,
        then wake the job side."""
        try:
            BatchLog(self.table, str(self.batch_dir))(batch, batch_id)
        except Exception as err:
            self.failure = err
            raise
        finally:
            with self.changed:
                self.changed.notify_all()

    # --------------------------------------------------------------- job side
    def _logged(self) -> list[Path]:
        return sorted(p for p in self.batch_dir.iterdir() if not p.name.startswith("."))

    def _running(self) -> bool:
        return self.query is not None and self.query.isActive

    def has_window(self, i: int) -> bool:
        last_new = time.monotonic()
        seen = len(self._logged())
        while True:
            logged = self._logged()
            if i < len(logged):
                return True
            if self.failure is not None or (self.query is not None and self.query.exception()):
                err = self.failure or self.query.exception()
                raise ExecutionError(f"streaming table {self.table.name}: {_first_line(err)}")
            if not self._running():
                # The query may have logged its last batch while stopping.
                return i < len(self._logged())
            if len(logged) != seen:
                seen, last_new = len(logged), time.monotonic()
            if time.monotonic() - last_new > self.idle:
                self.query.stop()
                return i < len(self._logged())
            with self.changed:
                self.changed.wait(timeout=0.2)

    def _read(self, paths: list[Path]) -> Any:
        spark = self.ctx.spark
        if not paths:
            return spark.createDataFrame([], self._empty_schema())
        return spark.read.parquet(*[str(p) for p in paths])

    def _empty_schema(self) -> Any:
        from pyspark.sql import types as ST

        from geaflow_sql.core import types as T

        return ST.StructType(
            [
                ST.StructField(f"c{k}", T.to_spark_type(c.type), True)
                for k, c in enumerate(self.table.columns)
            ]
        )

    def window(self, i: int) -> Any:
        logged = self._logged() if self.has_window(i) else []
        return self._read(logged[i : i + 1])

    def cumulative(self, i: int) -> Any:
        self.has_window(i)
        return self._read(self._logged()[: i + 1])

    def close(self) -> None:
        if self.query is not None:
            # Stopping a finished query fails harmlessly: nothing is left to release.
            with contextlib.suppress(Exception):
                self.query.stop()
        if self._own_dir:
            shutil.rmtree(self.batch_dir.parent, ignore_errors=True)


class BatchLog:
    """Makes a micro-batch durable: its rows written as Parquet under
    ``folder/<batch id>``, renamed into place when whole.  Picklable (a table
    record and a folder name), for Spark Connect's server-side foreachBatch."""

    def __init__(self, table: TableInfo, folder: str) -> None:
        self.table = table
        self.folder = folder

    def __call__(self, batch: Any, batch_id: int) -> None:
        folder = Path(self.folder)
        final = folder / f"{batch_id:012d}"
        if final.exists():  # a replayed batch: same id, same rows, already logged
            return
        rows = select_columns(batch, self.table, tuple(range(len(self.table.columns))))
        tmp = folder / f".{batch_id:012d}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        rows.write.parquet(str(tmp))
        tmp.rename(final)


def _first_line(err: BaseException) -> str:
    text = str(getattr(err, "desc", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__
