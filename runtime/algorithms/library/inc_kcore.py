"""GeaFlow's ``incremental_kcore([k=3, [max_iterations=100, [threshold]]])``.

Rows are (vid, core_value, degree, change_status).  What GeaFlow's
``IncrementalKCore`` computes on a graph it sees for the first time, restated:

* ``degree`` is the length of the vertex's OUT plus IN edge lists (parallel
  edges, self-loops and edges to ids without a vertex all count), and
  ``core_value`` is that same degree — the peeling below only decides the
  status.
* Peeling: an active vertex sends 1 along every entry of its OUT and IN
  lists.  GeaFlow's IN edges carry the vertex itself as their source, so the
  messages "to the source of an in-edge" come back to the sender: each round
  an active vertex v counts its in-degree plus one per edge u -> v from a
  still-active vertex u.  A count below k deactivates v for good, with value
  0; otherwise its value is the count.  Rounds are supersteps 2 ..
  min(max_iterations, ``geaflow.dsl.max.traversal``).
* ``change_status`` is REMOVED for a vertex whose value changed when it was
  deactivated (its value was not already 0 — an isolated vertex stays INIT),
  and INIT for every other vertex.

The threshold is accepted and, as in GeaFlow, not used.

In a windowed job GeaFlow keeps each vertex's state between runs: only the
first run says INIT; later runs start every vertex at UNCHANGED, and a vertex
that carried its value from the run before starts from that value (0 if it
was deactivated then) instead of its degree, so REMOVED means "deactivated in
this run while its value was not already 0".  ADDED is never reached.  Here a
call site keeps the graph it has seen and every vertex's drop round (see
``kcore_peeling``); a window collects only the rows it added, re-peels only
where they reach, and emits the vertices the window changed: new vertices,
vertices whose degree changed and vertices whose drop round changed.  Their
degree and drop round are those of a full run on the current graph; a vertex
the window did not change keeps the row it was last emitted with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from planner.algorithms import builtin_signature

from ..base import AlgorithmGraph, CallContext
from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, with_self
from ..iteration import iterate
from ..local_graph import LocalGraph
from ..options import RunOptions, options_of
from .deltas import SeenIds, collect_delta, output_frame
from .kcore_peeling import NEVER, full_peel, repeel

INIT = "INIT"
UNCHANGED = "UNCHANGED"
REMOVED = "REMOVED"


class IncrementalKCore(BuiltinAlgorithm):
    signature = builtin_signature("incremental_kcore")

    @staticmethod
    def rounds(p: dict[str, Any], max_iterations: int) -> int:
        return max(0, min(p["max_iterations"], max_iterations) - 1)

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        nv = g.nv
        degree = (np.bincount(g.src, minlength=g.n) + np.bincount(g.dst, minlength=g.n))[:nv]
        real = (g.src < nv) & (g.dst < nv)
        drop = full_peel(
            np.arange(g.n) < nv,
            np.bincount(g.dst, minlength=g.n).astype(np.int64),
            g.src[real],
            g.dst[real],
            p["k"],
            self.rounds(p, max_iterations),
        )[:nv]
        status = first_run_status(drop, degree)
        return [g.ids[:nv], degree, degree, status]

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        if graph.new_edges is None:
            return super().run(ctx, graph, args)
        p = self.bind(list(args), graph.id_type)
        rounds = self.rounds(p, options_of(ctx).max_iterations)
        state = graph.state.get("kcore")
        if not isinstance(state, SeenGraph):
            state = SeenGraph()
            graph.state["kcore"] = state
        growth = state.add(collect_delta(graph))
        degree = state.out_count + state.in_count
        real = state.is_vertex[state.src] & state.is_vertex[state.dst]
        args_ = (state.is_vertex, state.in_count, state.src[real], state.dst[real], p["k"], rounds)
        if state.drop is None:
            drop = full_peel(*args_)
            status = first_run_status(drop, degree)
            emit = state.is_vertex
        else:
            old = np.concatenate([state.drop, np.zeros(state.n - len(state.drop), np.int64)])
            drop = repeel(old, growth.fresh, growth.bumped, *args_)
            emit = state.is_vertex & (
                growth.fresh | (degree != growth.degree_before) | (drop != old)
            )
            status = later_run_status(drop, degree, old, growth.fresh)
        state.drop = drop
        where = np.flatnonzero(emit)
        ids = state.id_array()[where].tolist()
        degrees = degree[where].tolist()
        return output_frame(graph, self, [ids, degrees, degrees, status[where].tolist()])

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        k = int(p["k"])
        ids = dg.vertex_ids()
        out_deg = dg.edges.groupBy(F.col("src").alias("id")).agg(F.count("*").alias("o"))
        in_deg = dg.edges.groupBy(F.col("dst").alias("id")).agg(F.count("*").alias("i"))
        counts = (
            ids.join(out_deg, "id", "left")
            .join(in_deg, "id", "left")
            .select(
                "id",
                F.coalesce("o", F.lit(0)).cast("long").alias("o"),
                F.coalesce("i", F.lit(0)).cast("long").alias("i"),
            )
        )
        # (a, b): u -> v between vertices, so a sends to b; with_self adds the own rows.
        real = (
            dg.pairs("OUT")
            .join(ids.withColumnRenamed("id", "a"), "a", "left_semi")
            .join(ids.withColumnRenamed("id", "b"), "b", "left_semi")
        )
        links = with_self(real, ids).cache()
        start = counts.select(
            "id",
            (F.col("o") + F.col("i")).alias("degree"),
            (F.col("o") + F.col("i")).alias("value"),
            F.col("i").alias("indeg"),
            F.lit(True).alias("active"),
            F.lit(False).alias("removed"),
            F.lit(True).alias("dropped"),
        )

        def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
            state = frames["state"]
            rows = state.join(links, state["id"] == links["a"])

            def own(column: str) -> Any:
                return F.max(F.when(F.col("own"), F.col(column))).alias(column)

            summed = rows.groupBy(F.col("b").alias("id")).agg(
                F.sum(F.when(~F.col("own") & F.col("active"), 1).otherwise(0)).alias("sent"),
                own("degree"),
                own("value"),
                own("indeg"),
                own("active"),
                own("removed"),
            )
            count = F.col("sent") + F.col("indeg")
            drops = F.col("active") & (count < k)
            nxt = summed.select(
                "id",
                "degree",
                F.when(F.col("active"), F.when(count < k, F.lit(0)).otherwise(count))
                .otherwise(F.col("value"))
                .cast("long")
                .alias("value"),
                "indeg",
                (F.col("active") & ~drops).alias("active"),
                (F.col("removed") | (drops & (F.col("value") != 0))).alias("removed"),
                drops.alias("dropped"),
            )
            return {"state": nxt}, _settled

        state = iterate({"state": start}, step, self.rounds(p, opts.max_iterations), opts)["state"]
        out = state.select(
            F.col("id").alias("c0"),
            F.col("degree").alias("c1"),
            F.col("degree").alias("c2"),
            F.when(F.col("removed"), F.lit(REMOVED)).otherwise(F.lit(INIT)).alias("c3"),
        )
        links.unpersist()
        return out


def dropped(drop: np.ndarray) -> np.ndarray:
    return (drop > 0) & (drop != NEVER)


def first_run_status(drop: np.ndarray, degree: np.ndarray) -> np.ndarray:
    """INIT, or REMOVED for a vertex deactivated while its value was not 0.

    A vertex's value is its degree before round 1 and its count (at least k,
    so not 0) after every round it survived.
    """
    removed = dropped(drop) & ((drop >= 2) | (degree != 0))
    return np.where(removed, REMOVED, INIT).astype(object)


def later_run_status(
    drop: np.ndarray, degree: np.ndarray, old: np.ndarray, fresh: np.ndarray
) -> np.ndarray:
    """UNCHANGED, or REMOVED as in a first run, except that an old vertex
    starts from the value it ended the previous run with: 0 if it was
    deactivated then."""
    start_nonzero = np.where(fresh, degree != 0, ~dropped(old))
    removed = dropped(drop) & ((drop >= 2) | start_nonzero)
    return np.where(removed, REMOVED, UNCHANGED).astype(object)


@dataclass
class Growth:
    """What one window changed, per node of the grown graph."""

    fresh: np.ndarray  # vertices that were not vertices before
    bumped: np.ndarray  # nodes with an IN edge that is new or newly between vertices
    degree_before: np.ndarray


@dataclass
class SeenGraph(SeenIds):
    """Every id a call site has seen (vertices and edge endpoints), its edges
    in node indices, their counts, and the drop rounds of the last run."""

    is_vertex: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    src: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    dst: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    out_count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    in_count: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    drop: np.ndarray | None = None

    def add(self, delta: Any) -> Growth:
        before = self.n
        degree_before = self.out_count + self.in_count
        vertex_nodes = [self.node(v) for v in delta.vertices.tolist()]
        new_src = np.array([self.node(v) for v in delta.src.tolist()], dtype=np.int64)
        new_dst = np.array([self.node(v) for v in delta.dst.tolist()], dtype=np.int64)
        grown = self.n - before
        was_vertex = np.concatenate([self.is_vertex, np.zeros(grown, dtype=bool)])
        self.is_vertex = was_vertex.copy()
        self.is_vertex[np.array(vertex_nodes, dtype=np.int64)] = True
        fresh = self.is_vertex & ~was_vertex
        self.src = np.concatenate([self.src, new_src])
        self.dst = np.concatenate([self.dst, new_dst])
        pad = np.zeros(grown, dtype=np.int64)
        self.out_count = np.concatenate([self.out_count, pad]) + np.bincount(
            new_src, minlength=self.n
        )
        self.in_count = np.concatenate([self.in_count, pad]) + np.bincount(
            new_dst, minlength=self.n
        )
        bumped = np.zeros(self.n, dtype=bool)
        bumped[new_dst] = True
        bumped[self.dst[fresh[self.src]]] = True  # their source just became a vertex
        return Growth(fresh, bumped, np.concatenate([degree_before, pad]))


def _settled(frames: dict[str, Any]) -> bool:
    from pyspark.sql import functions as F

    return frames["state"].where(F.col("dropped")).isEmpty()
