"""Windowed jobs: a script's INSERTs and queries run once per source window.

The job is prepared once (``runtime.plans.prepare``: one ExecutionGraph for
all its statements).  Its root group is a cycle whose rounds are windows
(``WindowCycle``); in round ``i`` each statement's group runs as a child
cycle of one round, in script order, on window ``i`` of its sources, so a
window's graph inserts are visible to the queries after them.  What the
statement reads in that round is passed to the evaluator as ``Reads``.
What a statement emits per window depends on what it reads:

* rows of windowed tables: the window's rows, through operators that keep
  their history as GeaFlow's stream operators do (``delta``; see
  ``emissions.py``: an aggregation emits the groups the window touched with
  values over everything read so far, DISTINCT a row once per stream);
* a graph this job writes: the rows of its result that are new in this
  version of the graph (``graph-delta``) — so the output of all windows
  together equals the result on the final graph; algorithms declared
  incremental get the window's new vertices and edges and their own state
  instead;
* other graphs, or graph reads under an aggregation: the whole result on the
  current data (``full``).

After each window (or every ``geaflow.batch.number.per.checkpoint`` windows)
the job commits a checkpoint (see ``checkpoint.py``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

from geaflow_sql.core import types as T
from geaflow_sql.core.config import (
    BATCH_PER_CHECKPOINT,
    JOB_CHECKPOINT_DIR,
    STORE_LOCAL_MAX_BYTES,
    table_options,
)
from geaflow_sql.core.errors import ConfigError, GeaflowError
from planner.graph_nodes import GraphAlgorithm
from planner.logical import (
    Aggregate,
    CollectSink,
    GraphSink,
    LogicalNode,
    TableScan,
    TableSink,
    walk,
)
from planner.physical import ExecutionGroup
from planner.statements import PlanStatement
from runtime.connectors.base import WindowSource, WriteRequest
from runtime.connectors.registry import connector_for, open_window_source, reads_in_windows
from runtime.context import RuntimeContext
from runtime.errors import translate
from runtime.evaluator import Evaluator, evaluate
from runtime.held import rows_of
from runtime.local.runner import LocalPlan
from runtime.local.runner import plan as local_plan
from runtime.local.translate import NotLocal, Translator
from runtime.plans import GRAPH_READS, PreparedPlan, plan_tables
from runtime.reads import Reads, WindowRound, graph_key, table_key
from runtime.scheduler import CycleScheduler, ExecutionCycle, FunctionCycle, RoundOutcome
from runtime.stores.arrow_parts import write_part_file
from runtime.stores.persistent import restore_stores

from .checkpoint import JobCheckpoint, fingerprint, truncate_sinks
from .emissions import adds_history, emissions
from .fusion import can_fuse_windows
from .incremental_match import incremental_result
from .local_match import local_incremental_result, local_whole_result
from .progress import WindowControl, WindowReport

DELTA = "delta"
GRAPH_DELTA = "graph-delta"
FULL = "full"


@dataclass
class JobStatement:
    """A statement of the job: its plan, its group, and what it did so far."""

    bound: PlanStatement
    plan: LogicalNode  # after the rules, a sink at the top
    group: ExecutionGroup
    mode: str
    versions: dict[str, int] = field(default_factory=dict)
    written: int = 0
    # Did a write of this statement not say how many rows it wrote?
    uncounted: bool = False
    collected: list[Any] = field(default_factory=list)
    last_result: Any = None

    @property
    def reads_graph(self) -> bool:
        return any(isinstance(n, GRAPH_READS) for n in walk(self.plan))


def statement_mode(ctx: RuntimeContext, plan: LogicalNode, dynamic_graphs: set[str]) -> str:
    nodes = walk(plan)
    graph_reads = [n for n in nodes if isinstance(n, GRAPH_READS)]
    aggregates = [n for n in nodes if isinstance(n, Aggregate) and n.calls and not n.internal]
    incremental = any(
        isinstance(n, GraphAlgorithm) and n.signature.incremental for n in graph_reads
    )
    streamed_tables = any(
        isinstance(n, TableScan) and reads_in_windows(n.table, ctx.config) for n in nodes
    )
    if graph_reads:
        if incremental or (streamed_tables and not aggregates):
            # Requests streamed from a table are answered once, on the graph
            # as it is when they arrive.
            return DELTA
        reads_dynamic = any(graph_key(n.graph) in dynamic_graphs for n in graph_reads)
        if reads_dynamic and not aggregates:
            return GRAPH_DELTA
        return FULL
    return DELTA


class WindowedJob:
    """A script's windowed statements, prepared once, run a round per window."""

    def __init__(
        self,
        ctx: RuntimeContext,
        prepared: PreparedPlan,
        script_text: str,
        scheduler: CycleScheduler,
        control: WindowControl | None = None,
    ) -> None:
        self.ctx = ctx
        self.control = control if control is not None else WindowControl()
        # Set when the job stopped on request before its sources ended.
        self.stopped_after: int | None = None
        self.prepared = prepared
        self.scheduler = scheduler
        self.evaluator = Evaluator(ctx, prepared, scheduler)
        dynamic = {
            graph_key(n.graph)
            for plan in prepared.plans
            for n in walk(plan)
            if isinstance(n, GraphSink)
        }
        self.statements = [
            JobStatement(bound, plan, group, statement_mode(ctx, plan, dynamic))
            for bound, plan, group in zip(
                prepared.statements, prepared.plans, prepared.execution.statements, strict=True
            )
        ]
        folder = ctx.config.get_str(JOB_CHECKPOINT_DIR)
        self.checkpoint = (
            JobCheckpoint(ctx.resolve_path(folder), fingerprint(script_text)) if folder else None
        )
        # Windows between two checkpoints: fewer commits (each writes the
        # window's graph parts and algorithm state) at the price of redoing
        # up to that many windows after a failure.
        self.checkpoint_every = ctx.config.get_int(BATCH_PER_CHECKPOINT)
        if self.checkpoint_every < 1:
            raise ConfigError(
                f"{BATCH_PER_CHECKPOINT.name} must be a positive integer, "
                f"got {self.checkpoint_every}"
            )
        self.sources: dict[str, WindowSource] = {}
        self.start_round = 0
        self.sink_sizes: dict[str, int] = {}
        self.graph_parts: dict[str, list[list[Any]]] = {}
        # State incremental algorithms keep between windows (checkpointed).
        self.algorithm_state: dict[str, Any] = {}
        self.fused = False
        self.reported = 0  # rows written as of the last window reported
        self.operator_state: dict[Any, Any] = {}

    @property
    def trace(self) -> list[tuple[int, str, int]] | None:
        """The scheduler's events, when it records them."""
        return list(self.scheduler.trace.events) if self.scheduler.record else None

    # ---------------------------------------------------------------- set up
    def setup(self) -> None:
        log_root = self.checkpoint.folder if self.checkpoint is not None else None
        for st in self.statements:
            for table in plan_tables(self.ctx.catalog, st.plan):
                key = table_key(table)
                if key not in self.sources:
                    self.sources[key] = open_window_source(self.ctx, table, log_root)
        self.fused = can_fuse_windows(
            self.ctx, list(self.prepared.plans), self.sources.values(), self.checkpoint is not None
        )
        for source in self.sources.values():
            if self.fused:
                # No statement can tell the windows apart (fusion.py): one round,
                # read once, so nothing needs to be numbered and kept.
                source.size = -1
                source.materialize = False
            source.prepare()
        if self.checkpoint is not None:
            state = self.checkpoint.load()
            if state is not None:
                self.restore(state)
            else:
                self.checkpoint.reset()
                persistent = self._persistent_manifests()
                if persistent:
                    # The persistent graphs as they were before the job: a job
                    # killed before its first checkpoint goes back to them.
                    self.checkpoint.commit(
                        {
                            "window": -1,
                            "finished": False,
                            "graphs": {"memory": {}, "persistent": persistent},
                        }
                    )

    def _persistent_manifests(self) -> dict[str, Any]:
        return {
            key: store.manifest()
            for key, store in self.ctx.stores.stores.items()
            if store.graph.is_persistent
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Resume after the last window the checkpoint committed."""
        ctx = self.ctx
        self.start_round = int(state["window"]) + 1
        self.sink_sizes = dict(state.get("sinks", {}))
        truncate_sinks(self.sink_sizes)
        ctx.files_written.update(self.sink_sizes)
        for st, counts in zip(self.statements, state.get("statements", []), strict=False):
            st.versions = dict(counts.get("versions", {}))
            st.written = int(counts.get("written", 0))
        graphs = state.get("graphs", {})
        local_limit = ctx.config.get_int(STORE_LOCAL_MAX_BYTES)
        for key, parts in graphs.get("memory", {}).items():
            graph = ctx.catalog.graph(tuple(key.split(".", 1)))
            if graph is None:
                continue
            store = ctx.stores.store(ctx, graph)
            for path, label, is_vertex in parts:
                store.restore_part(ctx.spark, label, is_vertex, path, local_limit)
            self.graph_parts[key] = [list(p) for p in parts]
        checkpointed = []
        for key, manifest in graphs.get("persistent", {}).items():
            graph = ctx.catalog.graph(tuple(key.split(".", 1)))
            if graph is not None:
                checkpointed.append((ctx.stores.store(ctx, graph), manifest))
        restore_stores(checkpointed)
        algo = state.get("algorithms")
        if algo and self.checkpoint is not None:
            restored = self.checkpoint.load_algorithm_state(algo)
            if restored is not None:
                self.algorithm_state = restored

    # ------------------------------------------------------------------- run
    def run(self) -> list[JobStatement]:
        self.setup()
        self.reported = sum(st.written for st in self.statements)
        try:
            self.scheduler.run(WindowCycle(self))
        except BaseException:
            # A failed window publishes nothing it wrote.
            self.ctx.stores.abort_all()
            raise
        finally:
            for source in self.sources.values():
                source.close()
        # A drained Structured Streaming source is caught up, not finished: more
        # data may land, and the next run resumes after the last window.
        resumable = any(src.resumable for src in self.sources.values())
        if self.checkpoint is not None and not resumable and self.stopped_after is None:
            self.checkpoint.commit({"window": -1, "finished": True})
        return self.statements

    def has_window(self, i: int) -> bool:
        return any(src.has_window(i) for src in self.sources.values())

    def run_round(self, r: int) -> None:
        """Window ``r``: each statement's group as a cycle of one round, in order."""
        for k, st in enumerate(self.statements):
            window = WindowRound(r, self.sources, k, self.algorithm_state, self.operator_state)

            def step(
                _: int, st: JobStatement = st, window: WindowRound = window
            ) -> tuple[bool, Any]:
                try:
                    self.run_statement(st, window)
                except GeaflowError as err:
                    # Where in the script: the statement the window was running.
                    raise err.at(st.bound.syntax.span) from None
                except Exception as err:  # Spark, Java, user code
                    raise translate(err).at(st.bound.syntax.span) from None
                return False, None

            self.scheduler.run(FunctionCycle(st.group.id, step, max_rounds=1))

    def run_statement(self, st: JobStatement, window: WindowRound) -> None:
        sink = st.plan
        for n in walk(sink):
            if isinstance(n, TableScan) and window.reads_table(n.table):
                # (a stream's lines are parsed once, by the first statement
                # that reads the window: its rows stay on the driver if small)
                self.sources[table_key(n.table)].hold(window.number)
        reads = Reads(window)
        env = self.evaluator.env(reads)
        so_far = replace(reads, so_far=True)
        if st.mode == GRAPH_DELTA:
            now_versions = self._graph_versions(st.plan)
            now = env.with_reads(so_far.at_versions(now_versions))
            top = sink.inputs[0]
            # On the driver when the store holds the graph there (local_match.py):
            # the whole result in the first window, the rows new since then after.
            rows = (
                local_incremental_result(now, top, st.versions, now_versions)
                if st.versions
                else local_whole_result(now, top, now_versions)
            )
            if rows is not None and self._write_rows(st, sink, rows):
                st.versions = now_versions
                st.last_result = None
                return
            frame = None
            if rows is not None:
                frame = frame_of(self.ctx.spark, rows, top.schema)
            elif st.versions:
                # Only the paths near what was written since, on Spark
                # (incremental_match.py).
                frame = incremental_result(now, top, st.versions, now_versions)
            if frame is not None:
                st.last_result = None
            else:
                # The result on this version, kept for the next window's difference.
                current = evaluate(now, top).localCheckpoint(eager=True)
                previous = st.last_result
                if previous is None and st.versions:
                    # After a restart or an incremental window: the result on the
                    # previous version.
                    before = env.with_reads(so_far.at_versions(st.versions))
                    previous = evaluate(before, top)
                st.last_result = current
                frame = current if previous is None else current.exceptAll(previous)
            st.versions = now_versions
        elif st.mode == FULL:
            # On the driver when the store holds the graph there.
            whole = local_whole_result(env, sink.inputs[0], self._graph_versions(st.plan))
            if whole is not None and self._write_rows(st, sink, whole):
                return
            frame = (
                evaluate(env.with_reads(so_far), sink.inputs[0])
                if whole is None
                else frame_of(self.ctx.spark, whole, sink.inputs[0].schema)
            )
        elif st.reads_graph:
            # Requests streamed from a table, each answered on the graph as it
            # is when it arrives: the window's requests, nothing kept.  (A
            # call whose rows were made on the driver may be written from there.)
            done, given = self._call_on_driver(st, env, sink)
            if done or (not given and self._window_on_driver(st, env, sink, alone=True)):
                return
            frame = evaluate(env, sink.inputs[0], given)
        else:
            if self._window_on_driver(st, env, sink):
                return
            # The window's rows; stateful operators add their history.
            frame = evaluate(env, sink.inputs[0], rewrite=emissions)
        if isinstance(sink, CollectSink):
            st.collected.append(frame)
            return
        written = evaluate(env, sink, {id(sink.inputs[0]): frame})
        if isinstance(written, int) and written > 0:
            st.written += written
        elif isinstance(written, int) and written < 0:
            st.uncounted = True

    def _window_on_driver(
        self, st: JobStatement, env: Any, sink: LogicalNode, alone: bool = False
    ) -> bool:
        """Run a statement over the window's rows on the driver, when its
        window's rows are held there, the local engine runs it and the driver
        writes its sink: True when it did (no Spark job).  Unless the window
        is answered ``alone`` (requests answered on the graph as it is), its
        GROUP BYs, DISTINCTs, UNIONs and joins add their history as
        emissions.py says."""
        if not isinstance(sink, (TableSink, GraphSink)):
            return False
        history = [n for n in walk(sink) if adds_history(n)]
        # GROUP BYs with aggregates emit the groups the window touched,
        # DISTINCTs and UNIONs the rows no earlier window had, and joins of
        # changing inputs the joined rows that are new, computed on the
        # driver over the rows so far (local.translate).
        local = local_plan(env, sink, emissions=bool(history) and not alone)
        if not isinstance(local, LocalPlan):
            return False
        outcome = local.run()
        if outcome.table is None or outcome.written is None:
            return False
        st.written += outcome.written
        return True

    def _call_on_driver(
        self, st: JobStatement, env: Any, sink: LogicalNode
    ) -> tuple[bool, dict[int, Any]]:
        """Run a statement reading one algorithm call whose rows are made on
        the driver (an incremental algorithm's window) there to the end, into
        a table the driver writes: (True, ...).  Else (False, the call's
        frame for the evaluation to use, so it runs once)."""
        calls = [n for n in walk(sink) if isinstance(n, GraphAlgorithm)]
        if len(calls) != 1 or not isinstance(sink, TableSink):
            return False, {}
        if self._writer(sink) is None:
            return False, {}
        call = calls[0]
        out = evaluate(env, call)
        rows = rows_of(out)
        if rows is None:
            return False, {id(call): out}
        try:
            translator = Translator(_no_inputs, self.ctx.config, rows={id(call): rows})
            translation = translator.translate(CollectSink(sink.inputs[0]))
        except NotLocal:
            return False, {id(call): out}
        outcome = LocalPlan(translation, sink.inputs[0].schema).run()
        if outcome.table is None or not self._write_rows(st, sink, outcome.table):
            return False, {id(call): out}
        return True, {}

    def _writer(self, sink: TableSink) -> Any | None:
        types = [f.type for f in sink.input.schema]
        options = table_options(self.ctx.config, sink.table)
        request = WriteRequest(sink.table, options, types, windowed=True)
        return connector_for(sink.table).rows_writer(self.ctx, request)

    def _write_rows(self, st: JobStatement, sink: LogicalNode, rows: Any) -> bool:
        """Write a window's rows held on the driver into a table that the
        driver writes itself (no Spark job); False when it does not."""
        if not isinstance(sink, TableSink):
            return False
        writer = self._writer(sink)
        if writer is None:
            return False
        st.written += writer(rows)
        return True

    def _graph_versions(self, plan: LogicalNode) -> dict[str, int]:
        out = {}
        for n in walk(plan):
            if isinstance(n, GRAPH_READS):
                store = self.ctx.stores.store(self.ctx, n.graph)
                out[graph_key(n.graph)] = store.version_number()
        return out

    # -------------------------------------------------------------- progress
    def report(self, r: int, seconds: float, more: bool) -> None:
        """Tell the front end about window ``r`` (just committed)."""
        if self.control.listener is None:
            return
        ins = [src.rows_in(r) for src in self.sources.values()]
        written = sum(st.written for st in self.statements)
        out = None if any(st.uncounted for st in self.statements) else written - self.reported
        self.reported = written
        checkpointed = self.checkpoint is not None and (
            not more or (r + 1) % self.checkpoint_every == 0
        )
        self.control.report(
            WindowReport(
                r,
                None if any(n is None for n in ins) else sum(n for n in ins if n is not None),
                out,
                seconds,
                checkpointed,
            )
        )

    # ------------------------------------------------------------ checkpoint
    def commit(self, r: int, last: bool) -> None:
        """Checkpoint after window ``r`` when it closes a batch of
        ``checkpoint_every`` windows or is the last; otherwise what the window
        wrote waits in the stores' pending lists for the next checkpoint (and
        a restart redoes the windows after the last one)."""
        ctx = self.ctx
        # The window's graph writes become visible to others together.
        ctx.stores.commit_all()
        if self.checkpoint is None:
            for store in ctx.stores.stores.values():
                store.pending.clear()
            return
        if not last and (r + 1) % self.checkpoint_every:
            return
        sinks = {path: os.path.getsize(path) for path in ctx.files_written if os.path.exists(path)}
        memory: dict[str, list[list[Any]]] = {k: list(v) for k, v in self.graph_parts.items()}
        persistent = self._persistent_manifests()
        for key, store in ctx.stores.stores.items():
            pending = store.pending
            if store.graph.is_persistent:
                pending.clear()
                continue
            parts = memory.setdefault(key, [])
            for seq, (label, is_vertex, df, rows) in enumerate(pending):
                path = self.checkpoint.part_path(key, r, seq, label, is_vertex)
                if rows is not None:
                    # Rows held on the driver are written from there: no Spark job.
                    write_part_file(path, rows)
                else:
                    df.write.mode("overwrite").parquet(str(path))
                parts.append([str(path), label, is_vertex])
            pending.clear()
        self.graph_parts = memory
        algo_name = None
        if self.algorithm_state:
            algo_name = self.checkpoint.save_algorithm_state(r, self.algorithm_state)
        self.checkpoint.commit(
            {
                "window": r,
                "finished": False,
                "sinks": sinks,
                "graphs": {"memory": memory, "persistent": persistent},
                "algorithms": algo_name,
                "statements": [
                    {"versions": st.versions, "written": st.written} for st in self.statements
                ],
            }
        )


def _no_inputs(key: Any) -> Any:
    raise NotLocal("an input besides the call's rows")


def frame_of(spark: Any, rows: Any, schema: Any) -> Any:
    """Arrow rows of a plan's ``schema`` as a DataFrame of its columns c0..cN."""
    from pyspark.sql import types as ST

    spark_schema = ST.StructType(
        [ST.StructField(f"c{i}", T.to_spark_type(f.type)) for i, f in enumerate(schema)]
    )
    return spark.createDataFrame(
        rows.rename_columns([f"c{i}" for i in range(len(schema))]), spark_schema
    )


class WindowCycle(ExecutionCycle):
    """The job's root group: one scheduler round per window."""

    def __init__(self, job: WindowedJob) -> None:
        super().__init__(job.prepared.execution.root.id)
        self.job = job
        self.round_base = job.start_round
        self.started = time.perf_counter()

    def head(self, round_no: int) -> None:
        self.job.run_round(self.round_base + round_no)

    def tail(self, round_no: int) -> RoundOutcome:
        r = self.round_base + round_no
        job = self.job
        if job.control.stop_requested():
            # Stopped on request: this window is the last of this run (the
            # next is not read: a stream might wait for it).
            more = False
            job.stopped_after = r
        else:
            more = job.has_window(r + 1)
        job.commit(r, last=not more)
        job.report(r, time.perf_counter() - self.started, more)
        self.started = time.perf_counter()
        return RoundOutcome(more, r)

    def on_launch(self) -> None:
        if not self.job.has_window(self.round_base):
            # Nothing left to read (a finished job resumed): no rounds.
            self.max_rounds = 1

    def finish(self) -> Any:
        return self.job.statements
