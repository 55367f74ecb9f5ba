"""Triangles: ``triangle_count([label])`` and ``cluster_coefficient([label], [min_degree])``.

Both exchange neighbour sets once (BOTH directions) and count common members.
GeaFlow's facts, restated:

* ``triangle_count``: a vertex receives its neighbour's set once per entry of
  that neighbour's edge list (parallel edges repeat it) and reports
  ``sum(|N(u) & N(v)|) / 2``, integer division — the number of triangles on a
  simple graph.
* ``cluster_coefficient``: N(v) is the *set* of neighbours and ``degree`` its
  size; vertices below ``min_degree`` (default 2) send nothing and report 0.0;
  the others report ``t / (degree * (degree - 1))`` where t counts, over the
  neighbours u that sent, ``|N(u) & N(v)|`` — networkx's clustering on a simple
  graph.  Arguments: ``(label)``, ``(label, min_degree)`` or ``(min_degree)``.
* **The label filter is local to a task.**  GeaFlow runs an algorithm with one
  task per shard of the graph (``shardCount``; a vertex's shard is
  ``murmur3(id.hashCode()) % shards``) and each task remembers only the
  other-label vertices *it* has visited.  So an other-label vertex w is left
  out of v's neighbour set only when w is in v's shard — and, when
  cluster_coefficient first collects the set (superstep 1), only if w came
  before v in storage order; the later supersteps drop every such w of the
  shard.  The other-label vertices themselves never report.  With one shard
  and the other-label vertices stored last this is exactly "count inside the
  label's subgraph".  An edge end without a vertex always counts.
* GeaFlow reports triangle counts in its second superstep and coefficients in
  its third; a ``geaflow.dsl.max.traversal`` below that reports nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from planner.algorithms import builtin_signature

from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, Needs
from ..java_compat import shard_of
from ..local_graph import LocalGraph
from ..options import RunOptions

# ---------------------------------------------------------------------------
# Local
# ---------------------------------------------------------------------------


class _Layout:
    """Who runs, who is filtered out, and each vertex's shard and storage position."""

    def __init__(self, g: LocalGraph, label: str | None, shard_count: int) -> None:
        n, nv = g.n, g.nv
        self.runs = np.zeros(n, dtype=bool)
        self.runs[:nv] = g.label_mask(label)
        self.excluded = g.is_vertex & ~self.runs
        self.shard = np.full(n, -1, dtype=np.int64)
        self.shard[:nv] = shard_of(g.ids[:nv], g.id_type_or_guess, shard_count)
        self.shards = max(1, shard_count)

    def drop_columns(self, m: sp.csr_matrix, shard: int) -> sp.csr_matrix:
        """``m`` without the columns of the filtered-out vertices of ``shard``."""
        keep = ~(self.excluded & (self.shard == shard))
        return (m @ sp.diags(keep.astype(np.float64))).tocsr()


def _binary(g: LocalGraph, owner: np.ndarray, other: np.ndarray) -> sp.csr_matrix:
    m = g.matrix(owner, other)
    m.data[:] = 1.0
    return m


def _per_shard_common(layout: _Layout, senders: sp.csr_matrix, sets: sp.csr_matrix) -> np.ndarray:
    """For each receiver v: sum over messages u -> v (``senders[u, v]`` times) of
    |sets[u] & sets[v]| without the filtered-out vertices of v's shard."""
    total = np.zeros(sets.shape[0], dtype=np.int64)
    for s in range(layout.shards):
        mine = layout.shard == s
        if not mine.any():
            continue
        kept = layout.drop_columns(sets, s)
        common = np.asarray((senders.T @ kept).multiply(kept).sum(axis=1)).ravel()
        total[mine] = np.rint(common[mine]).astype(np.int64)
    return total


def _empty_result(g: LocalGraph, dtype: Any) -> list[np.ndarray]:
    return [g.ids[:0], np.zeros(0, dtype=dtype)]


# ---------------------------------------------------------------------------
# Distributed
# ---------------------------------------------------------------------------


def _vertex_layout(dg: DistGraph, label: str | None, shard_count: int) -> Any:
    """(id, runs, shard, pos) of every vertex."""
    from pyspark.sql import functions as F

    runs = (
        F.lit(True) if label is None else F.coalesce(F.col("label") == F.lit(label), F.lit(False))
    )
    base = dg.vertices.select("id", runs.alias("runs"), "pos")
    id_type = dg.id_type

    def shards(batches: Any) -> Any:
        for batch in batches:
            batch["shard"] = shard_of(batch["id"].to_numpy(), id_type, shard_count)
            yield batch

    schema = base.select("*", F.lit(0).cast("long").alias("shard")).schema
    return base.mapInPandas(shards, schema)


def _common_rows(messages: Any, sender_sets: Any, receiver_sets: Any, layout: Any) -> Any:
    """(id, n): n = sum over messages a -> b of |sets(a) & sets(b)| without the
    filtered-out vertices of b's shard."""
    from pyspark.sql import functions as F

    left = messages.select("a", "b").join(sender_sets.select("a", F.col("b").alias("w")), "a")
    both = left.join(receiver_sets.select(F.col("a").alias("b"), F.col("b").alias("w")), ["b", "w"])
    filtered = layout.where(~F.col("runs")).select(
        F.col("id").alias("w"), F.col("shard").alias("w_shard")
    )
    receivers = layout.select(F.col("id").alias("b"), F.col("shard").alias("b_shard"))
    kept = (
        both.join(filtered, "w", "left")
        .join(receivers, "b")
        .where(F.col("w_shard").isNull() | (F.col("w_shard") != F.col("b_shard")))
    )
    return kept.groupBy(F.col("b").alias("id")).agg(F.count("*").alias("n"))


def _with_layout(pairs: Any, layout: Any) -> Any:
    """(a, b) pairs with the owner's and the neighbour's layout columns."""
    from pyspark.sql import functions as F

    owner = layout.select(
        F.col("id").alias("a"),
        F.col("runs").alias("a_runs"),
        F.col("shard").alias("a_shard"),
        F.col("pos").alias("a_pos"),
    )
    other = layout.select(
        F.col("id").alias("b"),
        F.col("runs").alias("b_runs"),
        F.col("shard").alias("b_shard"),
        F.col("pos").alias("b_pos"),
    )
    return pairs.join(owner, "a").join(other, "b", "left")


# ---------------------------------------------------------------------------
# The algorithms
# ---------------------------------------------------------------------------


class _PerShard(BuiltinAlgorithm):
    """Triangle counts as GeaFlow's tasks see them: one task per shard, each
    filtering other-label vertices on its own (see the module doc)."""

    uses_shards = True

    def prepare(self, p: dict[str, Any], graph: Any) -> dict[str, Any]:
        return {**p, "shards": int(graph.shard_count or 1)}

    def needs(self, p: dict[str, Any]) -> Needs:
        return Needs(vertex_labels=p["vertex_label"] is not None)


class TriangleCount(_PerShard):
    signature = builtin_signature("triangle_count")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        if max_iterations < 2:
            return _empty_result(g, np.int64)
        layout = _Layout(g, p["vertex_label"], p.get("shards", 1))
        owner, other = g.both_pairs
        sets = _binary(g, owner[layout.runs[owner]], other[layout.runs[owner]])
        keep = layout.runs[owner] & layout.runs[other]
        messages = g.matrix(owner[keep], other[keep])  # multiplicity of u -> v
        total = _per_shard_common(layout, messages, sets)
        hit = np.flatnonzero(layout.runs)
        return [g.ids[hit], total[hit] // 2]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        layout = _vertex_layout(dg, p["vertex_label"], p.get("shards", 1))
        runs = layout.where("runs").select("id")
        if opts.max_iterations < 2:
            return runs.where(F.lit(False)).select("id", F.lit(0).cast("long"))
        both = dg.pairs("BOTH").join(runs.withColumnRenamed("id", "a"), "a", "left_semi")
        sets = both.distinct()
        messages = both.join(runs.withColumnRenamed("id", "b"), "b", "left_semi")
        counts = _common_rows(messages, sets, sets, layout)
        return runs.join(counts, "id", "left").select(
            "id", F.floor(F.coalesce("n", F.lit(0)) / 2).cast("long").alias("count")
        )


class ClusterCoefficient(_PerShard):
    signature = builtin_signature("cluster_coefficient")

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        if max_iterations < 3:
            return _empty_result(g, np.float64)
        layout = _Layout(g, p["vertex_label"], p.get("shards", 1))
        owner, other = g.both_pairs
        position = np.arange(g.n)
        seen_before = (
            layout.excluded[other]
            & (layout.shard[other] == layout.shard[owner])
            & (position[other] < position[owner])
        )
        keep = layout.runs[owner] & ~seen_before
        sets = _binary(g, owner[keep], other[keep])
        degree = np.asarray(sets.sum(axis=1)).ravel().astype(np.int64)
        big = layout.runs & (degree >= p["min_degree"])
        senders = (sp.diags(big.astype(np.float64)) @ sets).tocsr()
        receivers = sp.diags(big.astype(np.float64)) @ _per_shard_common(layout, senders, sets)
        hit = np.flatnonzero(layout.runs)
        return [g.ids[hit], _coefficients(degree[hit], np.asarray(receivers)[hit], big[hit])]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import functions as F

        layout = _vertex_layout(dg, p["vertex_label"], p.get("shards", 1))
        runs = layout.where("runs").select("id")
        if opts.max_iterations < 3:
            return runs.where(F.lit(False)).select("id", F.lit(0.0))
        pairs = _with_layout(dg.pairs("BOTH").distinct(), layout).where("a_runs")
        seen_before = (
            F.coalesce(~F.col("b_runs"), F.lit(False))
            & (F.col("b_shard") == F.col("a_shard"))
            & (F.col("b_pos") < F.col("a_pos"))
        )
        sets = pairs.where(~F.coalesce(seen_before, F.lit(False))).select("a", "b")
        degree = runs.join(
            sets.groupBy(F.col("a").alias("id")).agg(F.count("*").alias("degree")), "id", "left"
        )
        degree = degree.select("id", F.coalesce("degree", F.lit(0)).alias("degree"))
        big = degree.where(F.col("degree") >= p["min_degree"]).select("id")
        messages = sets.join(big.withColumnRenamed("id", "a"), "a", "left_semi").join(
            big.withColumnRenamed("id", "b"), "b", "left_semi"
        )
        tri = _common_rows(messages, sets, sets, layout).withColumnRenamed("n", "tri")
        d = F.col("degree").cast("double")
        t = F.coalesce(F.col("tri"), F.lit(0)).cast("double")
        possible = d * (d - F.lit(1.0))
        value = (
            F.when(F.col("degree") < p["min_degree"], F.lit(0.0))
            .when(possible > 0, (F.lit(2.0) * (t / F.lit(2.0))) / possible)
            .otherwise(F.lit(0.0))
        )
        return degree.join(tri, "id", "left").select("id", value.alias("coefficient"))


def _coefficients(degree: np.ndarray, tri: np.ndarray, big: np.ndarray) -> np.ndarray:
    d = degree.astype(np.float64)
    possible = d * (d - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (2.0 * (tri / 2.0)) / possible
    return np.where(big & (possible > 0), value, 0.0)
