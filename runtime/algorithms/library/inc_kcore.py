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

GeaFlow keeps the statuses per task between runs of a streaming job (then
UNCHANGED and ADDED appear); here every call is a first run.  The threshold is
accepted and, as in GeaFlow, not used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geaflow_sql import types as T

from ..builtin import ID, BuiltinAlgorithm, Output, Param
from ..dist_graph import DistGraph, with_self
from ..iteration import iterate
from ..local_graph import LocalGraph
from ..options import RunOptions
from ..registry import register_algorithm

INIT = "INIT"
REMOVED = "REMOVED"


class IncrementalKCore(BuiltinAlgorithm):
    name = "incremental_kcore"
    java_classes = ("org.apache.geaflow.dsl.udf.graph.IncrementalKCore",)
    params = (
        Param("k", "int", 3),
        Param("max_iterations", "int", 100),
        Param("threshold", "float", 0.001),
    )
    outputs = (
        Output("vid", ID),
        Output("core_value", T.INTEGER),
        Output("degree", T.INTEGER),
        Output("change_status", T.VARCHAR),
    )

    @staticmethod
    def rounds(p: dict[str, Any], max_iterations: int) -> int:
        return max(0, min(p["max_iterations"], max_iterations) - 1)

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        k, nv = p["k"], g.nv
        degree = (np.bincount(g.src, minlength=g.n) + np.bincount(g.dst, minlength=g.n))[:nv]
        in_degree = np.bincount(g.dst, minlength=g.n)[:nv].astype(np.int64)
        real = (g.src < nv) & (g.dst < nv)
        # incoming[v, u] = number of edges u -> v between vertices.
        incoming = g.matrix(g.dst[real], g.src[real]).tocsr()[:nv, :nv]
        value = degree.astype(np.int64)
        active = np.ones(nv, dtype=bool)
        removed = np.zeros(nv, dtype=bool)
        for _ in range(self.rounds(p, max_iterations)):
            count = np.rint(incoming @ active.astype(np.float64)).astype(np.int64) + in_degree
            drops = active & (count < k)
            removed |= drops & (value != 0)
            value = np.where(active, np.where(count < k, 0, count), value)
            if not drops.any():
                break  # the same active set gives the same counts from now on
            active &= ~drops
        status = np.where(removed, REMOVED, INIT).astype(object)
        return [g.ids[:nv], degree, degree, status]

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

        state = iterate(
            {"state": start}, step, self.rounds(p, opts.max_iterations), opts.checkpoint
        )["state"]
        out = state.select(
            F.col("id").alias("c0"),
            F.col("degree").alias("c1"),
            F.col("degree").alias("c2"),
            F.when(F.col("removed"), F.lit(REMOVED)).otherwise(F.lit(INIT)).alias("c3"),
        )
        links.unpersist()
        return out


def _settled(frames: dict[str, Any]) -> bool:
    from pyspark.sql import functions as F

    return frames["state"].where(F.col("dropped")).isEmpty()


register_algorithm(IncrementalKCore())
