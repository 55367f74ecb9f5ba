"""Windowed jobs: a script's INSERTs and queries run once per source window.

The job is one cycle whose rounds are windows (``WindowCycle``); in round
``i`` every statement runs in script order on window ``i`` of its sources,
so a window's graph inserts are visible to the queries after them.  What a
statement emits per window depends on what it reads:

* rows of windowed tables (no aggregation): the window's rows (``delta``);
* an aggregation over tables: the groups the window touched, with values
  over everything read so far (``touched``), as GeaFlow's streaming
  aggregates do;
* a graph this job writes: the rows of its result that are new in this
  version of the graph (``graph-delta``) — so the output of all windows
  together equals the result on the final graph; algorithms declared
  incremental get the window's new vertices and edges and their own state
  instead;
* other graphs, or graph reads under an aggregation: the whole result on the
  current data (``full``).

After each window the job commits a checkpoint (see ``checkpoint.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from geaflow_sql.core.catalog import TableInfo
from geaflow_sql.core.config import BATCH_PER_CHECKPOINT, JOB_CHECKPOINT_DIR
from geaflow_sql.core.errors import ConfigError
from planner.graph_nodes import EdgeMatch, GraphAlgorithm, GraphLabelScan, VertexMatch
from planner.logical import (
    SINK_TYPES,
    Aggregate,
    CollectSink,
    GraphSink,
    LogicalNode,
    TableScan,
    walk,
)
from runtime.operators.registry import operator_for
from runtime.scheduler import CycleScheduler, ExecutionCycle, RoundOutcome

from .checkpoint import JobCheckpoint, truncate_sinks
from .fusion import can_fuse_windows
from .incremental_match import incremental_result
from .sources import WindowSource, graph_key, graph_tables, is_windowed, open_source, table_key

DELTA = "delta"
TOUCHED = "touched"
GRAPH_DELTA = "graph-delta"
FULL = "full"

_GRAPH_READS = (VertexMatch, EdgeMatch, GraphLabelScan, GraphAlgorithm)


def plan_tables(ctx: Any, plan: LogicalNode) -> list[TableInfo]:
    """Every table a plan reads, directly or through a USING graph."""
    out: dict[str, TableInfo] = {}
    for node in walk(plan):
        if isinstance(node, TableScan):
            out[table_key(node.table)] = node.table
        graph = getattr(node, "graph", None)
        if isinstance(node, (*_GRAPH_READS, GraphSink)) and graph is not None:
            for t in graph_tables(ctx, graph):
                out[table_key(t)] = t
    return list(out.values())


def is_windowed_plan(ctx: Any, plan: LogicalNode) -> bool:
    return any(is_windowed(t, ctx.config) for t in plan_tables(ctx, plan))


@dataclass
class WindowState:
    """What operators consult during a round of a windowed job."""

    round: int
    sources: dict[str, WindowSource]
    scan_mode: str = DELTA  # delta | cumulative
    graph_versions: dict[str, int] = field(default_factory=dict)
    algorithm_state: dict[str, Any] = field(default_factory=dict)
    statement: int = 0

    def table_frame(self, table: TableInfo, cumulative: bool | None = None) -> Any:
        source = self.sources.get(table_key(table))
        if source is None:
            return None
        use_cumulative = self.scan_mode == "cumulative" if cumulative is None else cumulative
        if use_cumulative:
            return source.cumulative(self.round)
        return source.window(self.round)


@dataclass
class JobStatement:
    bound: Any
    prepared: Any
    mode: str
    versions: dict[str, int] = field(default_factory=dict)
    written: int = 0
    collected: list[Any] = field(default_factory=list)
    last_result: Any = None


def statement_mode(ctx: Any, plan: LogicalNode, dynamic_graphs: set[str]) -> str:
    nodes = walk(plan)
    graph_reads = [n for n in nodes if isinstance(n, _GRAPH_READS)]
    aggregates = [n for n in nodes if isinstance(n, Aggregate) and n.calls and not n.internal]
    incremental = any(
        isinstance(n, GraphAlgorithm) and n.signature.incremental for n in graph_reads
    )
    streamed_tables = any(
        isinstance(n, TableScan) and is_windowed(n.table, ctx.config) for n in nodes
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
    if aggregates:
        return TOUCHED
    return DELTA


class WindowedJob:
    def __init__(self, ctx: Any, statements: list[tuple[Any, Any]], script_text: str) -> None:
        from .checkpoint import fingerprint

        self.ctx = ctx
        dynamic = {
            graph_key(n.graph)
            for _, p in statements
            for n in walk(p.plan)
            if isinstance(n, GraphSink)
        }
        self.statements = [
            JobStatement(bound, prepared, statement_mode(ctx, prepared.plan, dynamic))
            for bound, prepared in statements
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
        self.fused = False

    # ---------------------------------------------------------------- set up
    def setup(self) -> None:
        log_root = self.checkpoint.folder if self.checkpoint is not None else None
        for st in self.statements:
            for table in plan_tables(self.ctx, st.prepared.plan):
                key = table_key(table)
                if key not in self.sources:
                    self.sources[key] = open_source(self.ctx, table, log_root)
        plans = [st.prepared.plan for st in self.statements]
        self.fused = can_fuse_windows(
            self.ctx, plans, self.sources.values(), self.checkpoint is not None
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
        for key, parts in graphs.get("memory", {}).items():
            graph = ctx.catalog.graph(tuple(key.split(".", 1)))
            if graph is None:
                continue
            store = ctx.stores.store(ctx, graph)
            for path, label, is_vertex in parts:
                store.append(ctx, label, is_vertex, ctx.spark.read.parquet(path))
            store.pending.clear()
            self.graph_parts[key] = [list(p) for p in parts]
        for key, manifest in graphs.get("persistent", {}).items():
            graph = ctx.catalog.graph(tuple(key.split(".", 1)))
            if graph is not None:
                ctx.stores.store(ctx, graph)._publish(manifest)  # noqa: SLF001
        algo = state.get("algorithms")
        if algo and self.checkpoint is not None:
            restored = self.checkpoint.load_algorithm_state(algo)
            if restored is not None:
                ctx.window_algorithm_state = restored

    # ------------------------------------------------------------------- run
    def run(self) -> list[JobStatement]:
        self.setup()
        try:
            CycleScheduler().run(WindowCycle(self))
        finally:
            for source in self.sources.values():
                source.close()
        # A drained Structured Streaming source is caught up, not finished: more
        # data may land, and the next run resumes after the last window.
        resumable = any(getattr(src, "resumable", False) for src in self.sources.values())
        if self.checkpoint is not None and not resumable:
            self.checkpoint.commit({"window": -1, "finished": True})
        return self.statements

    def has_window(self, i: int) -> bool:
        return any(src.has_window(i) for src in self.sources.values())

    def run_round(self, r: int) -> None:
        ctx = self.ctx
        state = WindowState(r, self.sources)
        state.algorithm_state = getattr(ctx, "window_algorithm_state", {}) or {}
        ctx.window = state
        try:
            for k, st in enumerate(self.statements):
                state.statement = k
                self.run_statement(st)
        finally:
            ctx.window_algorithm_state = state.algorithm_state
            ctx.window = None

    def run_statement(self, st: JobStatement) -> None:
        ctx = self.ctx
        state: WindowState = ctx.window
        plan = st.prepared.plan
        sinks = [n for n in walk(plan) if isinstance(n, SINK_TYPES)]
        sink = sinks[0]
        if st.mode == GRAPH_DELTA:
            now_versions = self._graph_versions(plan)
            state.scan_mode = "cumulative"
            state.graph_versions = dict(now_versions)
            # Only the paths near what was written since (incremental_match.py).
            frame = (
                incremental_result(ctx, sink.inputs[0], st.versions, now_versions)
                if st.versions
                else None
            )
            if frame is not None:
                st.last_result = None
            else:
                # The result on this version, kept for the next window's difference.
                current = build(ctx, sink.inputs[0], {}).localCheckpoint(eager=True)
                previous = st.last_result
                if previous is None and st.versions:
                    # After a restart or an incremental window: the result on the
                    # previous version.
                    state.graph_versions = dict(st.versions)
                    previous = build(ctx, sink.inputs[0], {})
                st.last_result = current
                frame = current if previous is None else current.exceptAll(previous)
            state.graph_versions = {}
            st.versions = now_versions
        elif st.mode == FULL:
            state.scan_mode = "cumulative"
            frame = build(ctx, sink.inputs[0], {})
        elif st.mode == TOUCHED:
            state.scan_mode = "cumulative"
            frame = build(ctx, sink.inputs[0], {}, touched=True)
        else:
            state.scan_mode = "delta"
            frame = build(ctx, sink.inputs[0], {})
        fn = operator_for(sink)
        assert fn is not None
        if isinstance(sink, CollectSink):
            st.collected.append(frame)
            return
        written = fn(ctx, sink, [frame])
        if isinstance(written, int) and written > 0:
            st.written += written

    def _graph_versions(self, plan: LogicalNode) -> dict[str, int]:
        out = {}
        for n in walk(plan):
            if isinstance(n, _GRAPH_READS):
                store = self.ctx.stores.store(self.ctx, n.graph)
                out[graph_key(n.graph)] = store.version_number()
        return out

    # ------------------------------------------------------------ checkpoint
    def commit(self, r: int, last: bool) -> None:
        """Checkpoint after window ``r`` when it closes a batch of
        ``checkpoint_every`` windows or is the last; otherwise what the window
        wrote waits in the stores' pending lists for the next checkpoint (and
        a restart redoes the windows after the last one)."""
        if self.checkpoint is None:
            for store in self.ctx.stores.stores.values():
                getattr(store, "pending", []).clear()
            return
        if not last and (r + 1) % self.checkpoint_every:
            return
        import os

        ctx = self.ctx
        sinks = {path: os.path.getsize(path) for path in ctx.files_written if os.path.exists(path)}
        memory: dict[str, list[list[Any]]] = {k: list(v) for k, v in self.graph_parts.items()}
        persistent: dict[str, Any] = {}
        for key, store in ctx.stores.stores.items():
            pending = getattr(store, "pending", None)
            if pending is None:
                continue
            if store.graph.is_persistent:
                persistent[key] = store.manifest()
                pending.clear()
                continue
            parts = memory.setdefault(key, [])
            for seq, (label, is_vertex, df) in enumerate(pending):
                path = self.checkpoint.part_path(key, r, seq, label, is_vertex)
                df.write.mode("overwrite").parquet(str(path))
                parts.append([str(path), label, is_vertex])
            pending.clear()
        self.graph_parts = memory
        algo_name = None
        algo_state = getattr(ctx, "window_algorithm_state", None)
        if algo_state:
            algo_name = self.checkpoint.save_algorithm_state(r, algo_state)
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


class WindowCycle(ExecutionCycle):
    """The outer cycle of a windowed job: one scheduler round per window."""

    mode = "per_window"

    def __init__(self, job: WindowedJob) -> None:
        super().__init__(0)
        self.job = job
        self.round_base = job.start_round

    def head(self, round_no: int) -> None:
        self.job.run_round(self.round_base + round_no)

    def tail(self, round_no: int) -> RoundOutcome:
        r = self.round_base + round_no
        more = self.job.has_window(r + 1)
        self.job.commit(r, last=not more)
        return RoundOutcome(more, r)

    def on_launch(self) -> None:
        if not self.job.has_window(self.round_base):
            # Nothing left to read (a finished job resumed): no rounds.
            self.max_rounds = 1

    def finish(self) -> Any:
        return self.job.statements


def build(ctx: Any, node: LogicalNode, memo: dict[int, Any], touched: bool = False) -> Any:
    """The DataFrame of a plan subtree under the current window state."""
    key = id(node)
    if key in memo:
        return memo[key]
    inputs = [build(ctx, c, memo, touched) for c in node.inputs]
    fn = operator_for(node)
    assert fn is not None, node.kind
    df = fn(ctx, node, inputs)
    if touched and isinstance(node, Aggregate) and node.calls:
        df = _touched_groups(ctx, node, df)
    memo[key] = df
    return df


def _touched_groups(ctx: Any, node: Aggregate, cumulative: Any) -> Any:
    """Keep the groups the current window has rows for (values stay cumulative)."""
    from pyspark.sql import functions as F

    state: WindowState = ctx.window
    saved = state.scan_mode
    state.scan_mode = "delta"
    try:
        delta_input = build(ctx, node.input, {})
    finally:
        state.scan_mode = saved
    if not node.group:
        marker = delta_input.limit(1).select(F.lit(1).alias("__touched"))
        return cumulative.crossJoin(marker).drop("__touched")
    keys = delta_input.select(
        *[F.col(f"c{g}").alias(f"__k{i}") for i, g in enumerate(node.group)]
    ).distinct()
    cond = None
    for i in range(len(node.group)):
        c = F.col(f"c{i}").eqNullSafe(F.col(f"__k{i}"))
        cond = c if cond is None else cond & c
    return cumulative.join(keys, cond, "left_semi")
