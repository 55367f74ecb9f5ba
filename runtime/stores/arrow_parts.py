"""Graph writes also kept on the driver as Arrow, for the local engine.

A graph write whose rows Spark estimates small (at most
``geaflow.dsl.store.local.max.bytes``) is collected once, by the one job that
computes it, instead of being checkpointed (memory store) or written by
Spark (persistent store).  The memory store then keeps the rows as a
DataFrame made from that Arrow table, the persistent store writes them as
its Parquet part from the driver; either way the Arrow rows stay beside the
part, so the local engine (``runtime.local``) reads a label with no Spark
job.  A persistent part written elsewhere (an earlier process) is read from
its Parquet files, also without Spark.

Parts carry the write number ``__w`` and the row's place in the write
``__r``: a vertex id written again is the row with the greatest
(``__w``, ``__r``), as the Spark path ranks them (``memory.latest_vertices``).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from geaflow_sql.core import types as T

ORDER_COLUMNS = ("__w", "__r")

# Memory-store parts (DataFrames) -> their rows, with __w and __r.
PART_ROWS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


# Spark's estimate for a plan it knows nothing about (rows made on the
# driver, a checkpoint) is ``spark.sql.defaultSizeInBytes``, Long.MaxValue.
_UNKNOWN_SIZE = 1 << 62
# Rows fetched, at most, to learn that a frame with no estimate is small.
BYTES_PER_ROW_GUESS = 64


def collect_small(df: Any, limit: int) -> Any | None:
    """``df``'s rows as an Arrow table when they hold at most ``limit`` bytes
    (one job); None when they do not, or cannot be told to (Spark Connect).

    With an estimate of at most ``limit`` the rows are fetched; with one
    above it they are not.  Without an estimate (rows made on the driver, a
    checkpoint, a source that reports none) a bounded number of rows is
    fetched to find out: cheap over data already computed, while over a
    shuffle it computes the shuffle's input, which the write computes again
    when the rows turn out too many."""
    from runtime.held import rows_of
    from runtime.spark_adapter import estimated_bytes, has_unestimated_leaf

    if limit <= 0:
        return None
    held = rows_of(df)
    if held is not None:  # made from rows on the driver: no job to fetch them
        return held if held.nbytes <= limit else None
    size = estimated_bytes(df)
    if size is None:
        return None
    # A leaf Spark knows nothing about leaves the estimate unknown, though
    # projections and filters above it scale Long.MaxValue down by their
    # rows' widths (a stream's parsed lines: to about half of it).
    known = size < _UNKNOWN_SIZE and not has_unestimated_leaf(df, _UNKNOWN_SIZE)
    if known and size > limit:
        return None
    if known:
        rows = df.toArrow()
    else:
        cap = max(1, limit // BYTES_PER_ROW_GUESS)
        rows = df.limit(cap + 1).toArrow()
        if rows.num_rows > cap:
            return None
    return rows if rows.nbytes <= limit else None


def counting(df: Any) -> tuple[Any, Any]:
    """``df`` with its rows counted as a job runs it, and a function giving
    the count once one has (no extra job: ``spark_adapter.observing``; on
    Spark Connect, a count job)."""
    from runtime.spark_adapter import observing

    out, values = observing(df, rows="count(1)")
    return out, lambda: values(df)["rows"]


def write_part_file(folder: Path, rows: Any) -> None:
    """Write Arrow ``rows`` as one Parquet part in ``folder`` (replacing what
    it held, as Spark's overwrite does), laid out as Spark lays out a part
    (the file, then ``_SUCCESS``), so Spark reads it as one of its own."""
    import os
    import shutil

    import pyarrow.parquet as pq

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    staged = folder / ".part-00000.parquet.tmp"
    pq.write_table(rows, staged)
    os.replace(staged, folder / "part-00000.parquet")
    (folder / "_SUCCESS").touch()


def read_part_file(folder: Path, limit: int) -> Any | None:
    """The rows of a part in ``folder`` (as ``write_part_file`` or Spark writes
    one), read on the driver, when its Parquet files hold at most ``limit``
    bytes on disk and their rows at most ``limit`` in memory; else None (also
    when the folder is not on this machine's file system or holds no file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if limit <= 0 or not folder.is_dir():
        return None
    files = sorted(f for f in folder.iterdir() if f.suffix == ".parquet" and f.name[0] not in "._")
    if not files or sum(f.stat().st_size for f in files) > limit:
        return None
    tables = [pq.read_table(f) for f in files]
    rows = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="default")
    return rows if rows.nbytes <= limit else None


def ordered(rows: Any, write_no: int) -> Any:
    """``rows`` with the write number and each row's place in the write."""
    import numpy as np
    import pyarrow as pa

    n = rows.num_rows
    rows = rows.append_column("__w", pa.array(np.full(n, write_no, dtype=np.int64)))
    return rows.append_column("__r", pa.array(np.arange(n, dtype=np.int64)))


def latest_rows(rows: Any, id_field: str) -> Any:
    """One row per id: the one with the greatest (``__w``, ``__r``)."""
    import pyarrow.compute as pc

    if rows.num_rows <= 1:
        return rows
    order = pc.sort_indices(rows, [("__w", "descending"), ("__r", "descending")])
    newest_first = rows.take(order)
    ids = newest_first.column(_name_in(newest_first, id_field)).to_pandas()
    keep = ~ids.duplicated(keep="first").to_numpy()
    return newest_first.filter(keep)


def declared_schema(info: Any, with_order: bool = True) -> Any:
    """The Arrow schema of a label's declared columns (all nullable), as Spark
    gives them, plus ``__w`` and ``__r``."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    fields = [pa.field(c.name, to_arrow_type(T.to_spark_type(c.type))) for c in info.fields]
    if with_order:
        fields += [pa.field(name, pa.int64()) for name in ORDER_COLUMNS]
    return pa.schema(fields)


def as_declared(rows: Any, schema: Any) -> Any:
    """``rows`` with ``schema``'s columns (matched by name, any case; missing
    ones null), cast to its types."""
    import pyarrow as pa

    columns = []
    for field in schema:
        name = _name_in(rows, field.name, missing_ok=True)
        if name is None:
            columns.append(pa.nulls(rows.num_rows, field.type))
        else:
            columns.append(rows.column(name).cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def label_rows(parts: list[Any], info: Any, is_vertex: bool, unique: bool) -> Any:
    """A label's rows from its parts' Arrow rows, in its declared columns:
    for a vertex label one row per id (unless the parts are known ``unique``)."""
    import pyarrow as pa

    schema = declared_schema(info)
    rows = (
        pa.concat_tables([as_declared(p, schema) for p in parts]) if parts else schema.empty_table()
    )
    if is_vertex and not unique:
        rows = latest_rows(rows, info.id_field)
    return rows.drop_columns(list(ORDER_COLUMNS))


def _name_in(rows: Any, name: str, missing_ok: bool = False) -> Any:
    lowered = name.lower()
    for column in rows.column_names:
        if column.lower() == lowered:
            return column
    if missing_ok:
        return None
    raise KeyError(name)


class PartFiles:
    """Persistent parts (Parquet folders, never changed once written) read as
    Arrow, kept least recently used first up to ``budget`` bytes."""

    def __init__(self, budget: int = 1 << 30) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._rows: OrderedDict[str, Any] = OrderedDict()

    def put(self, folder: Path, rows: Any) -> None:
        with self._lock:
            self._rows[str(folder)] = rows
            self._rows.move_to_end(str(folder))
            total = sum(t.nbytes for t in self._rows.values())
            while total > self.budget and len(self._rows) > 1:
                _, dropped = self._rows.popitem(last=False)
                total -= dropped.nbytes

    def get(self, folder: Path) -> Any:
        """The part's rows (read from its files the first time)."""
        with self._lock:
            rows = self._rows.get(str(folder))
            if rows is not None:
                self._rows.move_to_end(str(folder))
                return rows
        import pyarrow.parquet as pq

        files = sorted(folder.glob("*.parquet"))
        tables = [pq.read_table(f) for f in files]
        import pyarrow as pa

        rows = pa.concat_tables(tables, promote_options="default") if tables else None
        if rows is None:
            raise FileNotFoundError(f"no Parquet files in {folder}")
        self.put(folder, rows)
        return rows

    @staticmethod
    def size_on_disk(folder: Path) -> int:
        return sum(f.stat().st_size for f in folder.glob("*.parquet"))

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


PART_FILES = PartFiles()
