"""Spark Structured Streaming sources: one micro-batch is one window.

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
3. windows are consumed from the log, and the job checkpoint (``checkpoint.py``)
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

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.errors import ConfigError, ExecutionError
from runtime.connectors.base import merged_options
from runtime.connectors.spark_source import select_columns, spark_options

from .sources import WindowSource

STREAMING_OPTION = "geaflow.dsl.spark.streaming"
TRIGGER_OPTION = "geaflow.dsl.spark.streaming.trigger"
IDLE_OPTION = "geaflow.dsl.spark.streaming.idle.seconds"


def is_spark_stream(table: TableInfo) -> bool:
    return (
        table.connector == "spark"
        and str(table.option(STREAMING_OPTION, "false")).lower() == "true"
    )


class SparkStreamSource(WindowSource):
    """A window source fed by a Structured Streaming query (see the module doc)."""

    resumable = True  # a later run on the same checkpoint folder continues the stream

    def __init__(self, ctx: Any, table: TableInfo, seconds: float, log_dir: Path | None) -> None:
        super().__init__(ctx, table, -1)
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
        options = merged_options(self.ctx, self.table)
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
                stream.writeStream.foreachBatch(self._log_batch)
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
        """Runs on Spark's foreachBatch thread: make the batch durable, then return."""
        try:
            rows = select_columns(batch, self.table, tuple(range(len(self.table.columns))))
            final = self.batch_dir / f"{batch_id:012d}"
            if final.exists():  # a replayed batch: same id, same rows, already logged
                return
            tmp = self.batch_dir / f".{batch_id:012d}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            rows.write.parquet(str(tmp))
            tmp.rename(final)
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


def _first_line(err: BaseException) -> str:
    text = str(getattr(err, "desc", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__
