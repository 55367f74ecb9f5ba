"""Running a prepared query on the local engine, or saying why it does not.

``plan`` translates a query (no Spark job) or says why it runs distributed;
the plan runs as the statement's root group, one round (``LocalCycle``), and
answers the rows as an Arrow table of the types the Spark path gives.  Any failure
inside DuckDB (an integer overflow Spark would wrap, a value it cannot cast)
also sends the query to Spark, whose answer is the reference; a cancel does
not (it ends the statement).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import LOCAL_QUERY_MAX_BYTES, QUERY_ENGINE, table_options
from geaflow_sql.core.errors import CancelledError, ConfigError
from planner.logical import CollectSink, GraphSink, TableScan, TableSink
from runtime.connectors.base import ReadRequest, WriteRequest
from runtime.connectors.registry import connector_for
from runtime.connectors.scan_cache import SCANS
from runtime.connectors.scan_copies import small_copy
from runtime.env import Env
from runtime.jobs import LocalRuns
from runtime.scheduler import ExecutionCycle, RoundOutcome
from runtime.spark_adapter import loosened
from runtime.stores.arrow_parts import label_rows
from runtime.stores.memory import MemoryStore
from runtime.stores.persistent import PersistentStore

from .inputs import HeldRows, rows_of
from .translate import Inputs, NotLocal, Source, Translation, Translator

ENGINES = ("auto", "local", "distributed")


@dataclass
class Outcome:
    table: Any  # pyarrow.Table, or None: run distributed
    reason: str  # why it ran where it ran
    written: int | None = None  # rows a write wrote


def engine_setting(config: Any) -> str:
    value = str(config.get(QUERY_ENGINE.name, QUERY_ENGINE.default)).lower()
    if value not in ENGINES:
        raise ConfigError(f"{QUERY_ENGINE.name} is one of {', '.join(ENGINES)}, not {value!r}")
    return value


@dataclass
class LocalPlan:
    """A query translated for the local engine, with the scans it reads (its
    rows come typed as the Spark path types them when ``schema`` is given,
    else as DuckDB gives them)."""

    translation: Translation
    schema: Any
    # For an INSERT into a table the driver writes: writes the rows, returns
    # how many (a connector's ``rows_writer``).
    writer: Any = None

    def run(self, runs: LocalRuns | None = None) -> Outcome:
        """Its rows (the inputs copied out of Spark the first time), or why not."""
        try:
            rows: dict[str, Any] = {}
            for s in self.translation.sources:
                if s.compute is None:
                    rows[s.name] = rows_of(s.key).rename_columns(s.columns)
                else:
                    rows[s.name] = s.compute(rows)
            tables = [(s, rows[s.name]) for s in self.translation.sources]
        except NotLocal as why:
            return Outcome(None, f"the local engine does not run {why}")
        except Exception as err:  # noqa: BLE001 - Spark's own path reports it
            return Outcome(None, f"reading its inputs failed locally ({type(err).__name__})")
        outcome = _execute(self.translation.sql, tables, self.schema, runs)
        if self.writer is not None and outcome.table is not None:
            outcome.written = self.writer(outcome.table)
        return outcome


def plan(env: Env, root: Any, emissions: bool = False) -> LocalPlan | str:
    """The query as a local plan, or why it runs distributed.  Runs no Spark job.

    ``emissions``: a statement of a windowed job whose GROUP BYs with
    aggregates emit, in this window, the groups its rows touch with their
    values over every row so far, whose DISTINCTs and UNIONs emit the rows
    no earlier window had, and whose joins of changing inputs the joined rows
    that are new (``runtime.streaming.emissions``)."""
    config = env.ctx.config
    engine = engine_setting(config)
    if engine == "distributed":
        return f"{QUERY_ENGINE.name} = distributed"
    writer = None
    if isinstance(root, TableSink):
        types = [f.type for f in root.input.schema]
        request = WriteRequest(root.table, table_options(config, root.table), types, env.windowed)
        writer = connector_for(root.table).rows_writer(env.ctx, request)
        if writer is None:
            return f"a write to {root.table.name} goes through Spark"
        root = CollectSink(root.input)
    elif isinstance(root, GraphSink):
        writer = env.ctx.stores.rows_writer(env, root)
        if writer is None:
            return f"a write to graph {root.graph.name} casts a column on Spark"
        root = CollectSink(root.input)
    if not isinstance(root, CollectSink):
        return f"{root.kind} runs on Spark"
    sizes: dict[int, int] = {}
    try:
        so_far = before = None
        window = env.reads.window
        if emissions and window is not None:
            so_far = _inputs(env.with_reads(replace(env.reads, so_far=True)), sizes)
            if window.number > 0:
                earlier = replace(env.reads, window=replace(window, number=window.number - 1))
                before = _inputs(env.with_reads(replace(earlier, so_far=True)), sizes)
        windowed = window.reads_table if window is not None else None
        translator = Translator(
            _inputs(env, sizes), config, so_far=so_far, before=before, windowed=windowed
        )
        translation = translator.translate(root)
    except NotLocal as why:
        return f"the local engine does not run {why}"
    total = sum(sizes.values())
    limit = config.get_int(LOCAL_QUERY_MAX_BYTES)
    if engine == "auto" and total > limit:
        return f"its inputs hold {total} bytes, over {LOCAL_QUERY_MAX_BYTES.name}"
    return LocalPlan(translation, root.schema, writer)


class LocalCycle(ExecutionCycle):
    """A statement's root group when the local engine runs it: one round."""

    def __init__(self, group_id: int, local: LocalPlan, runs: LocalRuns | None) -> None:
        super().__init__(group_id, max_rounds=1)
        self.local = local
        self.runs = runs
        self.outcome = Outcome(None, "not run")

    def head(self, round_no: int) -> None:
        self.outcome = self.local.run(self.runs)

    def tail(self, round_no: int) -> RoundOutcome:
        return RoundOutcome(False, self.outcome)

    def finish(self) -> Outcome:
        return self.outcome


def _inputs(env: Env, sizes: dict[int, int]) -> Inputs:
    spark = env.spark

    def kept(scan: Any) -> None:
        size = SCANS.size_of(spark, scan)
        if size is None:
            raise NotLocal("a table whose scan is not kept (not local files)")
        sizes[id(scan)] = size

    def copy_if_small(scan: Any) -> Any:
        """A kept scan's Arrow copy, when it is small enough to be read here."""
        return small_copy(spark, scan, env.ctx.local_bytes)

    def inputs(key: Any) -> tuple[Any, list[str], list[Any]]:
        if isinstance(key, TableScan):
            table = key.table
            projection = (
                key.projection if key.projection is not None else tuple(range(len(table.columns)))
            )
            names = [f"c{i}" for i in range(len(projection))]
            types = [table.columns[p].type for p in projection]
            # A table read whole, as one window, is read as its kept scan;
            # another window's rows, when its source holds them on the driver.
            if env.reads.reads_in_windows(table) and not env.reads.whole_table(table):
                held = env.reads.held_table_rows(table)
                if held is None:
                    raise NotLocal("a table read in windows whose rows are not on the driver")
                picked = held.select([held.column_names[p] for p in projection])
                sizes[id(picked)] = picked.nbytes
                return HeldRows(picked), names, types
            request = ReadRequest(table, dict(key.options), tuple(projection))
            scan = connector_for(table).read(env.ctx, request)
            kept(scan)
            return scan, names, types
        graph, label, is_vertex = key
        if env.reads.served(graph, label, is_vertex) is not None:
            raise NotLocal("a graph read at a version")
        store = env.ctx.stores.store(env.ctx, graph)
        rows = getattr(store, "kept_rows", None)
        found = rows(env, label, is_vertex, copy_if_small) if rows is not None else None
        if found is None:
            return _held(env, store, label, is_vertex, sizes)
        scan, table = found
        kept(scan)
        names = [c.name for c in table.columns]
        if len({n.lower() for n in names}) != len(names):
            raise NotLocal("columns whose names differ only in case")
        return scan, names, [c.type for c in table.columns]

    return inputs


def _held(
    env: Env, store: Any, label: str, is_vertex: bool, sizes: dict[int, int]
) -> tuple[Any, list[str], list[Any]]:
    """A label's rows held on the driver by its store, as a local input."""
    info = store.info(label, is_vertex)
    parts = None
    if isinstance(store, MemoryStore):
        parts = store.local_parts(env, label, is_vertex)
    elif isinstance(store, PersistentStore):
        limit = env.ctx.local_bytes
        parts = store.local_parts(env, label, is_vertex, limit)
    if parts is None:
        raise NotLocal(f"label {label}, whose rows are neither a kept table scan nor held")
    names = [c.name for c in info.fields]
    if len({n.lower() for n in names}) != len(names):
        raise NotLocal("columns whose names differ only in case")
    held = HeldRows(label_rows(parts[0], info, is_vertex, parts[1]))
    sizes[id(held)] = held.table.nbytes
    return held, names, [c.type for c in info.fields]


def _execute(
    sql: str, tables: list[tuple[Source, Any]], schema: Any, runs: LocalRuns | None
) -> Outcome:
    import duckdb
    import pyarrow as pa

    # A cursor of one in-memory database per process: a fresh database costs
    # ~15 ms, a cursor ~1 ms; each cursor sees only the inputs it registers.
    con = database().cursor()
    if runs is not None:
        runs.add(con)
    error: Exception | None = None
    try:
        for source, table in tables:
            con.register(source.name, table)
        result = con.sql(sql).to_arrow_table()
    except duckdb.Error as err:
        error = err
    finally:
        cancelled = runs.remove(con) if runs is not None else False
        con.close()
    if cancelled:
        raise CancelledError("the statement was cancelled")
    if error is None and schema is not None:
        try:
            result = typed(result, schema)
        except pa.ArrowException as err:  # (a value Arrow cannot give the Spark path's type)
            error = err
    if error is not None:
        return Outcome(None, f"the local engine failed ({type(error).__name__}): Spark runs it")
    return Outcome(result, "local")


MEMORY_LIMIT = "2GB"
_DB: Any = None
_DB_LOCK = threading.Lock()


def database() -> Any:
    global _DB
    with _DB_LOCK:
        if _DB is None:
            import duckdb

            _DB = duckdb.connect()
            # Bounded: a query that needs more fails here and runs on Spark.
            _DB.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
            # DuckDB's common subexpressions take equal constants for one:
            # x / 0 and x / -0.0 became the same (Java: +Infinity, -Infinity).
            _DB.execute("SET GLOBAL disabled_optimizers = 'common_subexpressions'")
        return _DB


def typed(table: Any, schema: Any) -> Any:
    """The rows with the names and Arrow types the Spark path gives them,
    nested fields nullable: a NULL vertex's properties are NULL, though its
    label is never NULL in a found one (``spark_adapter.to_arrow`` fetches
    the Spark path's rows so too)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_type

    arrays = []
    for column, f in zip(table.columns, schema, strict=True):
        arrays.append(column.cast(to_arrow_type(loosened(T.to_spark_type(f.type)))))
    return pa.Table.from_arrays(arrays, names=[f.name for f in schema])
