"""``storeType='memory'``: a graph kept as DataFrames in the session.

Each INSERT is materialised (``localCheckpoint``) so a graph does not re-read
its sources every time it is matched.  Vertex ids are unique per label: a
later insert of an id replaces the earlier row; edges keep every insert.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.catalog import GraphInfo
from geaflow_sql.core.config import table_options
from geaflow_sql.core.errors import CatalogError
from runtime.connectors.base import ReadRequest
from runtime.connectors.registry import connector_for
from runtime.connectors.scan_cache import SCANS
from runtime.connectors.scan_copies import small_copy
from runtime.env import Env
from runtime.expressions import spark_ident
from runtime.held import from_rows, local_frame
from runtime.spark_adapter import select_sql

from .arrow_parts import (
    ORDER_COLUMNS,
    PART_ROWS,
    as_declared,
    collect_small,
    counting,
    declared_schema,
    latest_rows,
    ordered,
    read_part_file,
)


def declared_schema_spark(info: Any) -> Any:
    from pyspark.sql import types as ST

    return ST.StructType([ST.StructField(c.name, T.to_spark_type(c.type)) for c in info.fields])


_EMPTY: dict[tuple[tuple[str, str], ...], Any] = {}


def fresh_columns(df: Any, names: list[str]) -> Any:
    """``df``'s columns ``names`` under new aliases: a frame used on both sides
    of a join (a pattern that joins a label to itself) needs distinct columns."""
    # One SQL projection: a Column per name would be py4j round trips each.
    quoted = [f"`{n.replace('`', '``')}`" for n in names]
    return select_sql(df, [f"{q} AS {q}" for q in quoted])


def empty_frame(spark: Any, info: Any) -> Any:
    """No rows, the label's declared columns.

    A label nobody wrote to is read by every scan of it; building an empty
    DataFrame from Python each time costs more than the scan, so one per
    SparkSession and schema is kept, and each use gets fresh column aliases
    (a pattern may join the label to itself).
    """
    schema = declared_schema_spark(info)
    key = tuple((f.name, f.dataType.simpleString()) for f in schema.fields)
    base = _EMPTY.get(key)
    if base is None or base.sparkSession is not spark:
        base = local_frame(spark, [], schema)
        _EMPTY[key] = base
    return fresh_columns(base, schema.fieldNames())


def latest_vertices(df: Any, id_field: str) -> Any:
    """One row per vertex id: the one written last (``__w``, then ``__r``)."""
    order = f"PARTITION BY {spark_ident(id_field)} ORDER BY __w DESC, __r DESC"
    numbered = df.selectExpr("*", f"row_number() OVER ({order}) AS __n")
    return numbered.where("__n = 1").drop("__n")


def with_order(df: Any, write_no: int) -> Any:
    from pyspark.sql import functions as F

    return df.withColumn("__w", F.lit(write_no).cast("long")).withColumn(
        "__r", F.monotonically_increasing_id()
    )


# Kept scans (runtime.connectors.scan_cache: one object while the table's files
# do not change) of USING tables -> {id column: are its values unique?}.
_UNIQUE_IDS: weakref.WeakKeyDictionary[Any, dict[str, bool]] = weakref.WeakKeyDictionary()
_UNIQUE_LOCK = threading.Lock()


def ids_known_unique(
    env: Env, table: Any, id_field: str, arrow: Callable[[Any], Any] | None = None
) -> bool:
    """Does the table a vertex label is defined USING hold each id once?

    Then its rows are the label's vertices as they stand, with no shuffle to
    keep each id's last row.  Answered once per version of the table's files,
    and only for a scan kept between statements (a MATCH reads a label once
    per hop, every statement): else it is not worth a job.  ``arrow`` gives
    the scan's rows on the driver when the caller copies them there anyway
    (the local engine; by default, a small table's copy that ``table_frame``
    matches over): then the ids are counted in that copy, else by a Spark
    job."""
    scan = using_scan(env, table)
    if not SCANS.holds(env.spark, scan):
        return False
    names = [c.name.lower() for c in table.columns]
    if id_field.lower() not in names:
        return False
    column = f"c{names.index(id_field.lower())}"
    with _UNIQUE_LOCK:
        known = _UNIQUE_IDS.get(scan, {}).get(column)
    if known is None:
        rows = small_copy(env.spark, scan, env.ctx.local_bytes) if arrow is None else arrow(scan)
        if rows is not None and _counts_as_spark_groups(rows.column(column).type):
            known = _each_once(rows.column(column))
        if known is None:
            repeated = scan.groupBy(column).count().where("count > 1").limit(1).count()
            known = repeated == 0
        with _UNIQUE_LOCK:
            _UNIQUE_IDS.setdefault(scan, {})[column] = known
    return known


def _counts_as_spark_groups(arrow_type: Any) -> bool:
    """Do Arrow's distinct values of this type group as Spark's GROUP BY
    does (not floats: Spark makes -0.0 and 0.0, and every NaN, one group)?"""
    import pyarrow as pa

    return not pa.types.is_floating(arrow_type)


def _each_once(column: Any) -> bool | None:
    """Does an Arrow column hold each value once (nulls counted as one value,
    as Spark groups them)?  None when Arrow cannot tell for its type."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return bool(len(pc.unique(column)) == len(column))
    except pa.ArrowNotImplementedError:
        return None


def using_scan(env: Env, table: Any) -> Any:
    """A USING table's rows (columns c0..cN), read once per evaluation.

    A MATCH reads each label once per hop and scan; reading (and parsing) the
    table each time costs a Spark plan per read.  (Not in a windowed job: its
    statements run again every window, and a table one of them writes may be
    read by another.)"""
    cache = env.table_cache if env.reads.window is None else None
    scan = None if cache is None else cache.get(table)
    if scan is None:
        options = table_options(env.ctx.config, table)
        request = ReadRequest(table, options, tuple(range(len(table.columns))))
        scan = connector_for(table).read(env.ctx, request)
        if cache is not None:
            cache[table] = scan
    return scan


# On Spark, a label defined USING a table whose files hold at most this many
# bytes (and at most geaflow.dsl.query.local.max.bytes) is matched over the
# table's Arrow copy made a local relation.  A local relation's rows are part
# of the plan, which Spark optimizes whole and ships with every task, so the
# copy pays only while it is small.  Measured (a 2-hop MATCH on Spark, two
# cores, warm): a text table of 10^4 edges (170 KB) 0.26 s over the copy
# against 0.36 s over its files; 4*10^4 edges 0.53 s against 0.39 s; Parquet,
# 10^5 edges 0.84 s against 0.25 s, 10^6 edges 8.9 s against 1.1 s.
RELATION_MAX_BYTES = 256 << 10


def table_frame(env: Env, graph: GraphInfo, info: Any) -> Any:
    """The data of a label defined USING a table: that table's rows."""
    ctx = env.ctx
    table = ctx.catalog.table((info.using,))
    if table is None:
        raise CatalogError(
            f"graph {graph.name}: table {info.using!r} of label {info.label} is gone"
        )
    names = [c.name for c in table.columns]
    windowed = env.reads.window.rows(table, so_far=True) if env.reads.window else None
    if windowed is not None:
        # In a windowed job a USING graph holds what its tables delivered so far.
        return windowed.toDF(*names)
    # One object per kept scan (and column names), so the vertex and edge
    # values a MATCH builds of it are kept too (``frame_memo``).  Whoever
    # reads the frame projects it again (values, label scans, joins rename
    # their sides), so a pattern joining the label to itself still sees
    # distinct columns on each side.
    scan = using_scan(env, table)

    def named() -> Any:
        # A small table is matched over its rows read once on the driver (a
        # local relation): a MATCH reads the label once per hop, and each
        # read of the files would parse and check every line again, in a plan
        # Spark analyses, optimizes and ships with every task.
        rows = small_copy(env.spark, scan, min(env.ctx.local_bytes, RELATION_MAX_BYTES))
        source = scan if rows is None else from_rows(env.spark, rows, scan.schema)
        return select_sql(source, [f"c{i} AS {spark_ident(n)}" for i, n in enumerate(names)])

    return env.ctx.stores.frames.get((scan,), ("named", tuple(names)), named)


def _reads_windowed_table(env: Env, info: Any) -> bool:
    """Is a label defined USING a table that a windowed job reads window by window?"""
    window = env.reads.window
    if not info.using or window is None:
        return False
    table = env.ctx.catalog.table((info.using,))
    return table is None or window.reads_table(table)


class MemoryStore:
    """A graph's rows per label as a list of parts (one per INSERT).

    An INSERT outside a windowed job is materialised at once (so later queries
    do not re-run its query); inside a windowed job the window's rows are
    already materialised by their source, so parts stay lazy.  Parts are
    compacted into one when they pile up.
    """

    COMPACT_AFTER = 8

    def __init__(self, graph: GraphInfo) -> None:
        self.graph = graph
        self.parts: dict[tuple[str, bool], list[Any]] = {}
        self.writes = 0
        # Every version's parts (a version per INSERT), so a windowed job can
        # compare a query's result on the previous and the current graph.
        self.versions: dict[int, dict[tuple[str, bool], list[Any]]] = {0: {}}
        # Writes not yet in a checkpoint: (label, is_vertex, frame, the same
        # rows as Arrow when they are held on the driver, else None).
        self.pending: list[tuple[str, bool, Any, Any]] = []
        # Vertex parts (by ``id``; ``parts`` and ``versions`` keep them alive)
        # that already hold one row per vertex id: a label made of one such
        # part is read without a shuffle to pick each id's latest row.
        self.unique_parts: set[int] = set()
        # Threads of one session may write the graph at once.
        self._lock = threading.Lock()

    def version_number(self) -> int:
        return self.writes

    def _parts_for(self, env: Env) -> dict[tuple[str, bool], list[Any]]:
        wanted = env.reads.version_of(self.graph)
        if wanted is not None:
            return self.versions.get(wanted, self.parts)
        return self.parts

    def info(self, label: str, is_vertex: bool) -> Any:
        info = self.graph.vertex(label) if is_vertex else self.graph.edge(label)
        assert info is not None, label
        return info

    def _combine(self, parts: list[Any], info: Any, is_vertex: bool) -> Any:
        combined = parts[0]
        for p in parts[1:]:
            combined = combined.unionByName(p)
        if is_vertex and not (len(parts) == 1 and id(parts[0]) in self.unique_parts):
            combined = latest_vertices(combined, info.id_field)
        return combined

    def frame(self, env: Env, label: str, is_vertex: bool) -> Any:
        info = self.info(label, is_vertex)
        parts = self._parts_for(env).get((info.label, is_vertex), [])
        if info.using:
            # A USING graph starts from its table; INSERTs add to (and, for
            # vertices, replace rows of) what the table holds.
            table = table_frame(env, self.graph, info)
            if not parts and (not is_vertex or self._unique_using(env, info)):
                return table
            parts = [with_order(table, 0), *parts]
        # A label's frame is one object while its parts do not change, so
        # what is built of it can be kept too (``frame_memo``).
        return env.ctx.stores.frames.get(
            (self, *parts),
            ("label", info.label, is_vertex),
            lambda: (
                self._combine(parts, info, is_vertex).drop("__w", "__r")
                if parts
                else empty_frame(env.spark, info)
            ),
        )

    @staticmethod
    def _from_rows(spark: Any, info: Any, rows: Any) -> Any:
        """A part made from rows on the driver (declared columns, ``__w``, ``__r``)."""
        from pyspark.sql import types as ST

        rows = as_declared(rows, declared_schema(info))
        schema = ST.StructType(
            [
                *declared_schema_spark(info).fields,
                *(ST.StructField(name, ST.LongType()) for name in ORDER_COLUMNS),
            ]
        )
        part = spark.createDataFrame(rows, schema=schema)
        PART_ROWS[part] = rows
        return part

    def _compacted(self, parts: list[Any], info: Any, is_vertex: bool) -> Any:
        """The parts as one (on the driver when all their rows are there)."""
        import pyarrow as pa

        held = [PART_ROWS.get(p) for p in parts]
        if all(rows is not None for rows in held):
            schema = declared_schema(info)
            rows = pa.concat_tables([as_declared(r, schema) for r in held])
            if is_vertex:
                rows = latest_rows(rows, info.id_field)
            return self._from_rows(parts[0].sparkSession, info, rows)
        return self._combine(parts, info, is_vertex).localCheckpoint(eager=True)

    def local_parts(self, env: Env, label: str, is_vertex: bool) -> tuple[list[Any], bool] | None:
        """The label's parts as Arrow rows (with ``__w``, ``__r``) and whether
        they already hold one row per vertex id, when every part is held on
        the driver; else None.  The version the reads ask for (the current one
        by default); labels written by INSERT only (a USING table is read by
        ``kept_rows`` in batch, and not held in a windowed job)."""
        wanted = env.reads.version_of(self.graph)
        return self.held_rows(label, is_vertex, self.writes if wanted is None else wanted)

    def held_rows(
        self, label: str, is_vertex: bool, version: int, limit: int = 1 << 62
    ) -> tuple[list[Any], bool] | None:
        """``local_parts`` of the label at ``version``, or None when not all held
        (or the label reads a table, or the version is not known here).  (Held
        rows are bounded when written: ``limit`` is for stores that read files.)"""
        info = self.info(label, is_vertex)
        at = self.versions.get(version)
        if info.using or at is None:
            return None
        parts = at.get((info.label, is_vertex), [])
        held = [PART_ROWS.get(p) for p in parts]
        if any(rows is None for rows in held):
            return None
        unique = len(parts) == 1 and id(parts[0]) in self.unique_parts
        return held, unique

    def held_since(
        self, label: str, is_vertex: bool, version: int, limit: int = 1 << 62
    ) -> list[Any] | None:
        """Arrow rows of the label written after ``version`` (as ``parts_since``),
        or None when not all held."""
        import pyarrow.compute as pc

        info = self.info(label, is_vertex)
        before = self.versions.get(version)
        if info.using or before is None:
            return None
        key = (info.label, is_vertex)
        old = before.get(key, [])
        new = [p for p in self.parts.get(key, []) if not any(p is q for q in old)]
        held = [PART_ROWS.get(p) for p in new]
        out = []
        for rows in held:
            if rows is None:
                return None
            out.append(rows.filter(pc.greater(rows.column("__w"), version)))
        return out

    def kept_rows(
        self, env: Env, label: str, is_vertex: bool, arrow: Callable[[Any], Any] | None = None
    ) -> tuple[Any, Any] | None:
        """(kept scan, table) when a label's rows are exactly a USING table's
        kept scan (nothing inserted, ids unique), else None: the local engine
        reads such a label from an Arrow copy of the scan, which ``arrow``
        gives (or None when the scan is too large to copy)."""
        info = self.info(label, is_vertex)
        if not info.using or env.reads.window is not None:
            return None
        if self._parts_for(env).get((info.label, is_vertex)):
            return None
        table = env.ctx.catalog.table((info.using,))
        if table is None:
            return None
        scan = using_scan(env, table)
        if not SCANS.holds(env.spark, scan):
            return None
        if is_vertex and not self._unique_using(env, info, arrow):
            return None
        return scan, table

    def _unique_using(self, env: Env, info: Any, arrow: Callable[[Any], Any] | None = None) -> bool:
        """Is a vertex label's USING table (nothing inserted) one row per id?"""
        if env.reads.window is not None:
            return False
        table = env.ctx.catalog.table((info.using,))
        return table is not None and ids_known_unique(env, table, info.id_field, arrow)

    def parts_since(self, env: Env, label: str, is_vertex: bool, version: int) -> list[Any] | None:
        """The rows of a label written after ``version`` (declared columns), as
        parts (none when nothing was written), or None when they cannot be told
        apart: the version is unknown here, or the label reads a windowed table
        whose rows grow without a write.

        Incremental MATCH starts from these.  A part not among the old
        version's parts is new, or a compaction that also holds older rows: the
        write number ``__w`` keeps only what was written later."""
        from pyspark.sql import functions as F

        info = self.info(label, is_vertex)
        before = self.versions.get(version)
        if before is None or _reads_windowed_table(env, info):
            return None
        key = (info.label, is_vertex)
        old = before.get(key, [])
        return [
            p.where(F.col("__w") > F.lit(version)).drop("__w", "__r")
            for p in self.parts.get(key, [])
            if not any(p is q for q in old)
        ]

    def append(
        self, label: str, is_vertex: bool, df: Any, windowed: bool, local_limit: int = 0
    ) -> int:
        """Add a write of a label as a new version, materialised now (so the
        caller's count of the rows is taken as it happens, and later reads do
        not re-run the query that made them).  A write Spark estimates at most
        ``local_limit`` bytes is materialised by collecting it to the driver,
        where its rows stay for the local engine (``arrow_parts``).  A
        windowed job's writes also wait in ``pending`` for its next checkpoint.
        Returns the rows written."""
        with self._lock:
            return self._append(label, is_vertex, df, windowed, local_limit)

    def _append(
        self, label: str, is_vertex: bool, df: Any, windowed: bool, local_limit: int
    ) -> int:
        rows = collect_small(df, local_limit)
        if rows is not None:
            return self._append_rows(df.sparkSession, label, is_vertex, rows, windowed)
        info = self.info(label, is_vertex)
        self.writes += 1
        # Keeping each id's last row here costs a stage of this job and saves
        # one in every later read of the label.  (A windowed job's
        # incremental reads want every row a window wrote.)
        unique = is_vertex and not windowed
        df, count = counting(df)
        new = with_order(df, self.writes)
        if unique:
            new = latest_vertices(new, info.id_field)
        new = new.localCheckpoint(eager=True)
        self._add_part(info, is_vertex, new, unique, windowed)
        return int(count())

    def _append_rows(
        self, spark: Any, label: str, is_vertex: bool, rows: Any, windowed: bool
    ) -> int:
        """``_append`` of rows held on the driver (Arrow): they stay held."""
        info = self.info(label, is_vertex)
        self.writes += 1
        unique = is_vertex and not windowed
        written = int(rows.num_rows)
        rows = ordered(rows, self.writes)
        if unique:
            rows = latest_rows(rows, info.id_field)
        self._add_part(info, is_vertex, self._from_rows(spark, info, rows), unique, windowed)
        return written

    def restore_part(
        self, spark: Any, label: str, is_vertex: bool, path: str, local_limit: int
    ) -> None:
        """Add a part a checkpoint wrote (a Parquet folder) as the next
        version.  One of at most ``local_limit`` bytes is read on the driver
        and held there, as the write that made it was (no Spark job, and the
        local engine goes on reading the graph after a restart); a larger one
        is read by Spark."""
        rows = read_part_file(Path(path), local_limit)
        with self._lock:
            if rows is None:
                self._append(label, is_vertex, spark.read.parquet(path), False, 0)
            else:
                schema = declared_schema(self.info(label, is_vertex), with_order=False)
                self._append_rows(spark, label, is_vertex, as_declared(rows, schema), False)

    def _add_part(self, info: Any, is_vertex: bool, new: Any, unique: bool, windowed: bool) -> None:
        """Make ``new`` (version ``writes``) the label's latest part."""
        if unique:
            self.unique_parts.add(id(new))
        key = (info.label, is_vertex)
        parts = [*self.parts.get(key, []), new]
        if len(parts) > self.COMPACT_AFTER:
            # Compact: keep vertex rows already replaced out of later reads.
            parts = [self._compacted(parts, info, is_vertex)]
            if is_vertex:
                self.unique_parts.add(id(parts[0]))
        self.parts = dict(self.parts)
        self.parts[key] = parts
        self.versions[self.writes] = self.parts
        if windowed:
            held = PART_ROWS.get(new)
            self.pending.append(
                (
                    info.label,
                    is_vertex,
                    new.drop(*ORDER_COLUMNS),
                    None if held is None else held.drop_columns(list(ORDER_COLUMNS)),
                )
            )
