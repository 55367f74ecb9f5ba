"""GeaFlow's incremental MST: ``IncMST([max_iterations, [threshold, [field]]])``.

Despite its name, GeaFlow's ``IncMinimumSpanningTree`` does not compute a
spanning tree; its rows are (srcId, targetId, weight) and every row has
srcId = targetId.  What its vertex program does, restated:

* Superstep 1: every vertex proposes its first 50 OUT edges (in storage
  order; self-loops and edges to ids without a vertex use up places too) to
  their targets, naming its component — which is still its own id.
* Superstep 2: a target accepts a proposal from another component.  Nothing
  ever changes a component, so it accepts every proposal except one from
  itself (a self-loop); a proposal to an id without a vertex is dropped.
* Superstep 3: the proposer records an "MST edge" built from its own id
  twice and the weight (the edge's first property), in a set, so a vertex
  lists each distinct weight of its accepted edges once (Java's
  ``Double.compare`` equality: ``0.0 != -0.0``, NaN equals NaN).

The three arguments are checked as GeaFlow checks them (a positive integer,
a number in [0, 1], a non-empty name) and change nothing else: its
termination vote does not cut the three supersteps short.  Only
``geaflow.dsl.max.traversal`` below 3 does, and then there are no rows.

In a windowed job the algorithm is incremental: a window emits only the rows
(v, v, weight) that the graph as it stands after the window has and that no
earlier window emitted, so the windows together emit the batch result of the
latest graph, each row once.  A window's new rows come from its own edges
(once their place among the source's first 50 is known and both ends are
vertices) and from earlier proposals that were waiting for a vertex the
window adds (see ``inc_mst_windows``).  With a traversal bound below 3 no
window emits anything.  Outside a windowed job the batch engines run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geaflow_sql.core.errors import ExecutionError
from planner.algorithms import builtin_signature
from runtime.held import local_frame

from ..base import AlgorithmGraph, CallContext
from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, Needs
from ..local_graph import LocalGraph
from ..options import RunOptions, options_of
from .inc_mst_windows import ProposalBook, collect_weighted_delta

# GeaFlow proposes at most this many OUT edges per vertex.
PROPOSALS_PER_VERTEX = 50
# Propose, accept, record: the supersteps before a vertex holds its rows.
SUPERSTEPS = 3


class IncMinimumSpanningTree(BuiltinAlgorithm):
    signature = builtin_signature("IncMST")

    def prepare(self, p: dict[str, Any], graph: Any) -> dict[str, Any]:
        names = list(getattr(graph, "edge_properties", {}) or {})
        if not names:
            raise ExecutionError(
                f"{self.name}() reads an edge's weight from its first property, "
                f"but the edges of graph {graph.name or '?'} have no properties"
            )
        return {**p, "weight_column": names[0]}

    def needs(self, p: dict[str, Any]) -> Needs:
        return Needs(edge_props=(p["weight_column"],))

    def run(self, ctx: CallContext, graph: AlgorithmGraph, args: list[Any]) -> Any:
        if graph.new_edges is None:
            return super().run(ctx, graph, args)
        p = self.prepare(self.bind(list(args), graph.id_type), graph)
        book = graph.state.get("mst")
        if not isinstance(book, ProposalBook):
            book = graph.state["mst"] = ProposalBook(PROPOSALS_PER_VERTEX)
        accepted = book.advance(collect_weighted_delta(graph, p["weight_column"]))
        schema = self.spark_schema(graph.id_type)
        spark = graph.vertices.sparkSession
        if options_of(ctx).max_iterations < SUPERSTEPS:
            # The proposals are spent: GeaFlow never gets to record them.
            return local_frame(spark, [], schema)
        if accepted.missing.any():
            raise ExecutionError(_null_weight_message(self.name))
        new = book.record(accepted.src, _java_double_bits(accepted.weight))
        ids = [s for s, keep in zip(accepted.src, new.tolist(), strict=True) if keep]
        # Python floats keep NaN and -0.0 as they are (a pandas frame would turn NaN into null).
        rows = list(zip(ids, ids, accepted.weight[new].tolist(), strict=True))
        return local_frame(spark, rows, schema)

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        accepted = (
            np.flatnonzero(_accepted(g)) if max_iterations >= SUPERSTEPS else np.array([], int)
        )
        weight = _weights(g.edge_props[p["weight_column"]][accepted])
        src = g.src[accepted]
        # One row per (vertex, distinct weight) as a Java HashSet<MSTEdge> keeps them.
        _, first = np.unique(
            np.stack([src, _java_double_bits(weight)], axis=1), axis=0, return_index=True
        )
        first = np.sort(first)
        ids = g.ids[src[first]]
        return [ids, ids, weight[first]]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        column = p["weight_column"]
        ids = dg.vertex_ids()
        if opts.max_iterations < SUPERSTEPS:
            return ids.select(
                F.col("id").alias("c0"),
                F.col("id").alias("c1"),
                F.lit(None).cast("double").alias("c2"),
            ).where(F.lit(False))
        in_order = Window.partitionBy("src").orderBy("pos")
        proposed = (
            dg.edges.select("src", "dst", F.col(f"`{column}`").alias("w"))
            .withColumn("pos", F.monotonically_increasing_id())
            .withColumn("place", F.row_number().over(in_order))
            .where(F.col("place") <= PROPOSALS_PER_VERTEX)
        )
        accepted = (
            proposed.where(F.col("src") != F.col("dst"))
            .join(ids.withColumnRenamed("id", "src"), "src", "left_semi")
            .join(ids.withColumnRenamed("id", "dst"), "dst", "left_semi")
        )
        checked = accepted.select(
            "src",
            F.when(F.col("w").isNull(), F.raise_error(F.lit(_null_weight_message(self.name))))
            .otherwise(F.col("w").cast("double"))
            .alias("w"),
        )
        # A string key keeps 0.0 and -0.0 apart, as Double.compare does.
        distinct = checked.withColumn("key", F.col("w").cast("string")).dropDuplicates(
            ["src", "key"]
        )
        return distinct.select(F.col("src").alias("c0"), F.col("src").alias("c1"), "w")


def _accepted(g: LocalGraph) -> np.ndarray:
    """Per edge: proposed by a vertex, and accepted by another vertex."""
    order = np.argsort(g.src, kind="stable")
    sorted_src = g.src[order]
    group_start = np.r_[0, np.flatnonzero(sorted_src[1:] != sorted_src[:-1]) + 1]
    sizes = np.diff(np.r_[group_start, len(order)])
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order)) - np.repeat(group_start, sizes)
    return (place < PROPOSALS_PER_VERTEX) & (g.src < g.nv) & (g.dst < g.nv) & (g.src != g.dst)


def _weights(values: np.ndarray) -> np.ndarray:
    if values.dtype.kind == "f":
        return values.astype(np.float64)
    if any(v is None for v in values.tolist()):
        raise ExecutionError(_null_weight_message(IncMinimumSpanningTree.signature.name))
    return values.astype(np.float64)


def _null_weight_message(name: str) -> str:
    return f"{name}() reads an edge's weight from its first property, which is null"


def _java_double_bits(values: np.ndarray) -> np.ndarray:
    """``Double.doubleToLongBits``: the key Java's ``Double.compare`` equality uses."""
    canonical = np.where(np.isnan(values), np.nan, values)
    return canonical.astype(np.float64).view(np.int64)
