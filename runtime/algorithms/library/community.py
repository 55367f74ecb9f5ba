"""Louvain as GeaFlow computes it: ``louvain([max_iter=20, [modularity, [weighted, [min_size]]]])``.

GeaFlow's version is a one-level, synchronous simplification; restated:

* Each vertex starts in its own community and tells every entry of its BOTH
  edge list its community and the edge weight (1.0 unless ``weighted``, then
  the edge's first property when it is a number).
* In iterations 2 .. max_iter (within ``geaflow.dsl.max.traversal``) a vertex
  sums the weights per received community (k_in) and moves to the community
  with the largest gain ``k_in - k_in / 2m`` computed from its own weighted
  degree; no community's totals enter the gain, so on an unweighted graph a
  vertex simply joins the community it has most edges to.  A gain must be
  positive to move.
* Ties go to the community a ``java.util.HashMap`` would list first (bucket of
  the id's Java hash code for the map's size); we break the rare tie inside a
  bucket by the smaller id.  GeaFlow's ``m`` is the degree of whichever vertex
  its task handled first; we take the vertex's own, which orders candidates
  the same way whenever that degree exceeds 1/2 — always, unweighted.
* The modularity and minimum-size arguments are accepted and, as in
  GeaFlow, not used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner.algorithms import builtin_signature

from ..builtin import BuiltinAlgorithm
from ..dist_graph import DistGraph, Needs, with_self
from ..iteration import iterate
from ..java_compat import hashmap_bucket, hashmap_capacity, java_hash_codes
from ..local_graph import LocalGraph
from ..options import RunOptions
from .paths import _natural_rank


class Louvain(BuiltinAlgorithm):
    signature = builtin_signature("louvain")

    def prepare(self, p: dict[str, Any], graph: Any) -> dict[str, Any]:
        names = list(getattr(graph, "edge_properties", {}) or {})
        return {**p, "weight_column": names[0] if p["weighted"] and names else None}

    def needs(self, p: dict[str, Any]) -> Needs:
        column = p.get("weight_column")
        return Needs(edge_props=(column,) if column else ())

    @staticmethod
    def rounds(p: dict[str, Any], max_iterations: int) -> int:
        return max(0, min(p["max_iter"], max_iterations) - 1)

    def local(self, g: LocalGraph, p: dict[str, Any], max_iterations: int) -> list[np.ndarray]:
        nv = g.nv
        weight = edge_weights(g.edge_props.get(p.get("weight_column") or "", None), g.ne)
        owner, other = g.both_pairs
        both_weight = np.concatenate([weight, weight])
        ki = np.bincount(owner, weights=both_weight, minlength=g.n)[:nv]
        keep = (owner < nv) & (other < nv)
        a, b, w = owner[keep], other[keep], both_weight[keep]
        hashes = java_hash_codes(g.ids[:nv], g.id_type_or_guess)
        natural = _natural_rank(g.ids[:nv])
        community = np.arange(nv, dtype=np.int64)
        for _ in range(self.rounds(p, max_iterations)):
            if not len(a):
                break
            key = b * nv + community[a]
            uniq, inverse = np.unique(key, return_inverse=True)
            k_in = np.bincount(inverse, weights=w, minlength=len(uniq))
            target, candidate = uniq // nv, uniq % nv
            starts = np.flatnonzero(np.r_[True, target[1:] != target[:-1]])
            sizes = np.diff(np.r_[starts, len(target)])
            capacity = np.repeat(hashmap_capacity(sizes), sizes)
            bucket = hashmap_bucket(hashes[candidate], capacity)
            gain = modularity_gain(k_in, ki[target])
            order = np.lexsort((natural[candidate], bucket, -gain, target))
            first = order[np.r_[True, target[order][1:] != target[order][:-1]]]
            move = gain[first] > 0
            new = community.copy()
            new[target[first][move]] = candidate[first][move]
            if np.array_equal(new, community):
                break
            community = new
        return [g.ids[:nv], g.ids[community]]

    def distributed(self, dg: DistGraph, p: dict[str, Any], opts: RunOptions) -> Any:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        column = p.get("weight_column")
        weight = _weight_expr(dg, column)
        ids = dg.vertex_ids()
        edges = dg.edges.select("src", "dst", weight.alias("w"))
        both = edges.select(F.col("src").alias("a"), F.col("dst").alias("b"), "w").unionByName(
            edges.select(F.col("dst").alias("a"), F.col("src").alias("b"), "w")
        )
        ki = both.groupBy(F.col("a").alias("id")).agg(F.sum("w").alias("ki"))
        pairs = both.join(ids.withColumnRenamed("id", "a"), "a", "left_semi").join(
            ids.withColumnRenamed("id", "b"), "b", "left_semi"
        )
        links = with_self(pairs, ids).cache()
        start = (
            java_hash_frame(ids, dg.id_type)
            .join(ki, "id", "left")
            .select(
                "id",
                F.col("id").alias("community"),
                F.col("hash").alias("chash"),
                F.coalesce("ki", F.lit(0.0)).alias("ki"),
                F.lit(True).alias("changed"),
            )
        )

        def step(frames: dict[str, Any], round_no: int) -> tuple[dict[str, Any], Any]:
            # One pass over state joined with edge lists: per (vertex, community)
            # the weight received (k_in) and whether it is the vertex's own row.
            state = frames["state"]
            grouped = (
                state.join(links, state["id"] == links["a"])
                .groupBy(F.col("b").alias("t"), "community", "chash")
                .agg(
                    F.sum(F.when(~F.col("own"), F.col("w"))).alias("k_in"),
                    F.max("own").alias("is_own"),
                    F.max(F.when(F.col("own"), F.col("ki"))).alias("own_ki"),
                )
            )
            per_target = Window.partitionBy("t")
            candidate = F.col("k_in").isNotNull()
            size = F.count("k_in").over(per_target)
            capacity = F.greatest(
                F.lit(16), F.pow(F.lit(2), F.ceil(F.log2(size * 4 / 3) - F.lit(1e-9)))
            ).cast("int")
            spread = F.col("chash").bitwiseXOR(F.shiftrightunsigned(F.col("chash"), 16))
            gain = _gain_expr(F.col("k_in"), F.max("own_ki").over(per_target))
            order = per_target.orderBy(
                candidate.desc(), gain.desc(), spread.bitwiseAND(capacity - 1), F.col("community")
            )
            ranked = grouped.select(
                "t",
                "community",
                "chash",
                F.max("own_ki").over(per_target).alias("ki"),
                F.max(F.when(F.col("is_own"), F.col("community"))).over(per_target).alias("old"),
                F.max(F.when(F.col("is_own"), F.col("chash"))).over(per_target).alias("old_hash"),
                (candidate & (F.row_number().over(order) == 1) & (gain > 0)).alias("wins"),
            )
            best = ranked.groupBy(F.col("t").alias("id")).agg(
                F.first("ki").alias("ki"),
                F.first("old").alias("old"),
                F.first("old_hash").alias("old_hash"),
                F.max(F.when(F.col("wins"), F.col("community"))).alias("best"),
                F.max(F.when(F.col("wins"), F.col("chash"))).alias("best_hash"),
            )
            nxt = best.select(
                "id",
                F.coalesce("best", "old").alias("community"),
                F.coalesce("best_hash", "old_hash").alias("chash"),
                "ki",
                (F.col("best").isNotNull() & (F.col("best") != F.col("old"))).alias("changed"),
            )
            return {"state": nxt}, _settled

        state = iterate({"state": start}, step, self.rounds(p, opts.max_iterations), opts)["state"]
        links.unpersist()
        return state.select("id", "community")


def modularity_gain(k_in: np.ndarray, ki: np.ndarray) -> np.ndarray:
    """GeaFlow's gain with both community totals at 0, in its order of operations."""
    two_m = 2 * ki
    with np.errstate(divide="ignore", invalid="ignore"):
        x = ki / two_m
        a = (k_in + 0.0 / two_m) - x * x
        b = (k_in / two_m) - (0.0 / two_m) * (0.0 / two_m) - x * x
        gain = a - b
    return np.where(ki == 0, 0.0, gain)


def _gain_expr(k_in: Any, ki: Any) -> Any:
    from pyspark.sql import functions as F

    two_m = F.lit(2) * ki
    x = ki / two_m
    a = (k_in + F.lit(0.0) / two_m) - x * x
    b = (k_in / two_m) - (F.lit(0.0) / two_m) * (F.lit(0.0) / two_m) - x * x
    return F.when(ki == 0, F.lit(0.0)).otherwise(a - b)


def edge_weights(values: np.ndarray | None, count: int) -> np.ndarray:
    """Edge weights: the property when it is a number, else 1.0."""
    if values is None:
        return np.ones(count)
    out = np.ones(count)
    for i, v in enumerate(values.tolist()):
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v:
            out[i] = float(v)
    return out


def _weight_expr(dg: DistGraph, column: str | None) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql.types import NumericType

    if column is None:
        return F.lit(1.0)
    field = dg.edges.schema[column]
    if not isinstance(field.dataType, NumericType):
        return F.lit(1.0)
    value = F.col(f"`{column}`").cast("double")
    return F.when(value.isNull() | F.isnan(value), F.lit(1.0)).otherwise(value)


def java_hash_frame(ids: Any, id_type: Any) -> Any:
    """(id, hash): Java ``hashCode()`` of every vertex id, computed in pandas batches."""
    from pyspark.sql import functions as F

    def hash_batches(batches: Any) -> Any:
        for batch in batches:
            values = batch["id"].to_numpy()
            batch["hash"] = java_hash_codes(values, id_type).astype("int32")
            yield batch

    schema = ids.select("id", F.lit(0).cast("int").alias("hash")).schema
    return ids.mapInPandas(hash_batches, schema)


def _settled(frames: dict[str, Any]) -> bool:
    from pyspark.sql import functions as F

    return frames["state"].where(F.col("changed")).isEmpty()
